"""The assembled session without a server: controls, views and URL follow the state."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import panel as pn
import pytest
from bokeh.document import Document
from bokeh.models import GlyphRenderer
from panel.io.state import set_curdoc
from panel.reactive import Syncable

import app.served.session
from app.page.controls import widget_names
from app.page.views.alert_box import AlertBox
from app.page.views.assumptions import assumptions_html
from app.page.views.heatmap import SCORES_PALETTE, WEIGHTS_PALETTE
from app.page.views.histogram import DotProductHistograms
from app.page.views.readouts import readouts_html, verdict
from app.served.components.controls import DrawnControls
from app.served.components.figures import DrawnFigures
from app.served.session import Session, build_app
from app.served.ticks import run_now
from app.simulation.presets import PRESETS
from app.simulation.spec import (
    D_K_GRID,
    HISTOGRAMS,
    ROW,
    SCORES,
    TITLE,
    VIEW,
    WEIGHTS,
    nearest_on_grid,
)
from app.simulation.state import SimulationState

PAGE = object()
"""The ``setter`` of the changes made here as the page (Bokeh's session sets the connection)."""


def image(app: Session, part: str, field: str) -> np.ndarray:
    """The n×n image ``field`` of ``part`` in the newest frame the page was sent (the
    frame must carry that part)."""
    frame = app.figures.frame
    n = frame["state"]["n"]
    flat = frame["numbers"][part][field]
    assert flat.dtype == np.float32 and flat.shape == (n * n,)
    return flat.reshape(n, n)


def weights_image(app: Session) -> np.ndarray:
    """The weights the page draws, from the newest frame (which must carry them)."""
    return image(app, WEIGHTS, "weightsImage")


def histogram_titles(app: Session) -> tuple[str, str]:
    """The raw and scaled histograms' titles for the session's state, from the Python views
    that text.js's titles are tested to match."""
    histograms = DotProductHistograms(app.model)
    return histograms.raw.figure.title.text, histograms.scaled.figure.title.text


def test_page_has_the_title_and_every_plot() -> None:
    page = build_app()
    assert page.title == TITLE
    app = Session()
    assert list(app.page.select(DrawnFigures)) == [app.figures]
    assert weights_image(app).shape == (32, 32)
    models = app.figures.page_data()["models"]
    assert {"heatmap", "raw_histogram", "scaled_histogram"} <= set(models)
    # The first frame carries every part the first screen draws.
    assert {SCORES, WEIGHTS, HISTOGRAMS, VIEW, ROW} <= set(app.figures.frame["parts"])


def busy_watchers() -> int:
    """How many watchers the process-wide ``pn.state.busy`` has."""
    return sum(len(watchers) for watchers in pn.state.param.watchers.get("busy", {}).values())


def test_pages_are_not_bound_to_the_process_wide_busy_state() -> None:
    before = busy_watchers()
    apps = [Session() for _ in range(3)]
    assert busy_watchers() == before, "each session would re-walk its page on every message"
    assert not any(app.page.busy for app in apps)


class PageLoad:
    """``pn.state.onload`` as a served session sees it: callbacks wait for the page's load,
    and run at once after it."""

    def __init__(self) -> None:
        self.waiting: list = []
        self.loaded = False

    def onload(self, callback) -> None:
        if self.loaded:
            callback()
        else:
            self.waiting.append(callback)

    def load(self) -> None:
        self.loaded = True
        while self.waiting:
            self.waiting.pop(0)()


@pytest.fixture
def page_load(monkeypatch: pytest.MonkeyPatch) -> PageLoad:
    """A served session whose page has not loaded yet (``page_load.load()`` loads it)."""
    load = PageLoad()
    monkeypatch.setattr(app.served.session, "served", lambda: True)
    monkeypatch.setattr(pn.state, "onload", load.onload)
    return load


def test_served_page_builds_the_lesson_when_the_student_opens_it(page_load: PageLoad) -> None:
    simulation = Session(defer=run_now, pace=run_now)
    page_load.load()  # the page has loaded: still no lesson
    assert simulation.lesson is None
    assert simulation.layout.first_screen.gate_shown
    assert simulation.layout.lesson is None
    simulation.state.temperature = 2.0  # a move before the lesson arrives updates what exists
    simulation.layout.first_screen.lesson_opened = True  # pressed, or scrolled near
    assert simulation.lesson is not None
    assert not simulation.layout.first_screen.gate_shown
    lesson = simulation.lesson.drawn
    assert simulation.layout.lesson is lesson
    assert simulation.layout.first_screen.lesson is lesson, "one component, the whole lesson"
    # Built from the current state: the move above is already in the lesson's row.
    assert lesson.view["temperature"] == 2.0
    # A page (or a hostile client) asking again:
    simulation.layout.first_screen.lesson_opened = False
    simulation.layout.first_screen.lesson_opened = True
    simulation.add_lesson()
    assert simulation.lesson.drawn is lesson, "the lesson is added once"


def test_what_the_page_asks_for_before_it_has_loaded_is_built_once_it_has(
    page_load: PageLoad,
) -> None:
    """A page may ask for the lesson before it reports itself loaded: Panel 1.9 would drop
    what is built then, so it is built once the page has loaded."""
    simulation = Session(defer=run_now, pace=run_now)
    simulation.layout.first_screen.lesson_opened = True
    assert simulation.lesson is None
    page_load.load()
    assert simulation.lesson is not None
    assert not simulation.layout.first_screen.gate_shown


def test_moves_made_before_the_plots_turn_fold_into_one_update() -> None:
    pending: list = []
    simulation = Session(pace=pending.append)
    sequence = simulation.figures.sequence
    weights_before = weights_image(simulation).copy()
    for temperature in (4.0, 0.5, 0.25):
        simulation.state.temperature = temperature
    simulation.state.d_k = 128
    assert len(pending) == 1, "four changes before the plots' turn make one update"
    assert simulation.figures.sequence == sequence, "nothing is sent before the plots' turn"
    assert np.array_equal(weights_image(simulation), weights_before)
    pending.pop()()
    assert simulation.figures.sequence == sequence + 1, "the four changes make one frame"
    frame = simulation.figures.frame
    assert frame["state"]["d_k"] == 128 and frame["state"]["temperature"] == 0.25
    assert {SCORES, WEIGHTS, HISTOGRAMS} <= set(frame["parts"])
    assert "d_k = 128" in histogram_titles(simulation)[0]
    expected = Session({"temperature": "0.25", "d_k": "128"})
    assert np.allclose(weights_image(simulation), weights_image(expected))
    simulation.state.d_k = 256
    assert len(pending) == 1, "a change after the update schedules the next one"


def test_first_screen_updates_before_the_lesson_and_moves_fold_into_one() -> None:
    pending: list = []
    simulation = Session(defer=pending.append)
    why = simulation.lesson.drawn
    frames_before = why.sequence
    weights_before = weights_image(simulation).copy()
    simulation.state.temperature = 4.0
    simulation.state.temperature = 0.25
    assert not np.allclose(weights_image(simulation), weights_before)
    assert why.view["temperature"] != 0.25
    assert why.sequence == frames_before  # the row comparison's numbers wait their turn
    assert len(pending) == 1, "two moves before the lesson's turn make one lesson update"
    pending.pop()()
    assert why.view["temperature"] == 0.25
    assert why.sequence == frames_before + 1
    assert why.frame["state"]["temperature"] == 0.25 and ROW in why.frame["parts"]
    simulation.state.d_k = 128
    assert len(pending) == 1


def test_more_controls_are_drawn_from_the_start_and_open_on_the_page_alone() -> None:
    """Every widget under "More controls" is in the drawn controls' spec as the page
    arrives (nothing is built when it opens), after the first screen's, share part last."""
    simulation = Session()
    drawn = simulation.layout.drawn_controls
    first = [spec["name"] for spec in drawn.controls]
    more = [spec["name"] for spec in drawn.more]
    assert first == ["d_k", "temperature", "n", "scaled"]
    assert more == ["preset", "view", "d_k_exact", "causal", "seed", "resample"]
    assert drawn.shares and drawn.open_more_from == 800
    assert Session(embed=True).layout.drawn_controls.open_more_from == 0
    # A link's own controls come alone: no "More controls", nothing to share.
    linked = Session({"controls": [b"seed,view"]}).layout.drawn_controls
    assert [spec["name"] for spec in linked.controls] == ["seed", "resample", "view"]
    assert linked.more == [] and not linked.shares


def test_controls_follow_at_once_and_moves_fold_into_one_lesson_update() -> None:
    pending: list = []
    simulation = Session(defer=pending.append)
    # The controls are drawn in the page: their moves come as messages.
    sliders = simulation.layout.drawn_controls
    sliders.take_message({"name": "d_k", "index": D_K_GRID.index(128)})
    sliders.take_message({"name": "d_k", "index": D_K_GRID.index(256)})  # before the update
    assert simulation.state.d_k == 256 and sliders.values["d_k_exact"] == {"value": 256}
    frame = simulation.figures.frame
    assert frame["state"]["d_k"] == 256 and HISTOGRAMS in frame["parts"]
    assert histogram_titles(simulation)[0].startswith("Raw q·k at d_k = 256")
    assert len(pending) == 1, "both moves make one update of the lesson and the URL"
    pending.pop()()
    sliders.take_message({"name": "d_k_exact", "value": 100})  # typed: the slider follows
    position = D_K_GRID.index(nearest_on_grid(100, D_K_GRID))
    assert sliders.values["d_k"] == {"index": position, "text": "100"}
    assert simulation.state.d_k == 100
    pending.pop()()
    assert not pending


def test_control_updates_are_not_taken_back_as_changes_from_the_page(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Panel takes a widget change released by an outer hold for one from the page."""
    pending: list = []
    simulation = Session(defer=pending.append)
    document = Document()
    document.add_root(simulation.page.get_root(document))
    document.on_change(lambda event: None)  # a session listens: Bokeh then holds changes
    from_page: list = []
    monkeypatch.setattr(
        Syncable,
        "_process_events",
        lambda self, events: from_page.append((type(self).__name__, events)),
    )
    drawn = simulation.layout.drawn_controls
    with set_curdoc(document):  # as in a session: pn.io.hold() holds this document
        simulation.state.d_k = 300  # the exact d_k box follows
        pending.pop()()
        simulation.state.n = 64  # the row comparison's numbers (and box) follow
        pending.pop()()
    assert drawn.values["d_k_exact"] == {"value": 300}
    assert simulation.lesson.drawn.frame["state"]["n"] == 64
    assert from_page == []
    document.clear()


def test_lesson_is_built_at_once_outside_a_server() -> None:
    simulation = Session()
    assert simulation.lesson is not None
    # Below the controls and the plots, across the page's width.
    assert simulation.layout.first_screen.lesson is simulation.lesson.drawn


def test_slider_moves_send_only_the_parts_they_change() -> None:
    app = Session()
    figures, data = app.figures, (app.figures.shared, app.figures.inline)
    weights_before = weights_image(app).copy()
    app.state.temperature = 0.2
    # The page keeps its figures: a move sends numbers only.
    assert app.figures is figures and (app.figures.shared, app.figures.inline) == data
    frame = app.figures.frame
    assert SCORES not in frame["parts"] and SCORES not in frame["numbers"], (
        "a temperature move must not resend scores"
    )
    assert HISTOGRAMS not in frame["parts"]
    assert not np.allclose(weights_image(app), weights_before)
    app.state.n = 64
    assert app.figures.frame["state"]["n"] == 64
    assert weights_image(app).shape == (64, 64)
    assert image(app, SCORES, "rawImage").shape == (64, 64)


def test_only_an_n_move_sends_a_new_matrix_size() -> None:
    """The heatmap's ranges (and a student's zoom) live in the page, which fits them to the
    frame's n: only an n move carries another n."""
    app = Session()
    for values in ({"d_k": 256}, {"seed": 3}, {"causal": True}):
        app.state.set_controls(**values)
        frame = app.figures.frame
        assert SCORES in frame["parts"] and frame["state"]["n"] == 32, values
        assert image(app, SCORES, "rawImage").shape == (32, 32)
    app.state.n = 16
    assert app.figures.frame["state"]["n"] == 16
    assert image(app, SCORES, "scaledImage").shape == (16, 16)


def test_view_switches_column_and_colour_bar() -> None:
    app = Session()
    heatmap = app.figures.page_data()["config"]["heatmap"]
    assert heatmap["weights_palette"] == list(WEIGHTS_PALETTE)
    assert heatmap["scores_palette"] == list(SCORES_PALETTE)
    assert app.figures.frame["state"]["view"] == "weights"
    scores = app.figures.frame["numbers"][SCORES]
    # The colour range of a scores view: symmetric around 0, to the largest |score|.
    raw = image(app, SCORES, "rawImage")
    assert scores["rawLimit"] == pytest.approx(np.nanmax(np.abs(raw)))
    assert scores["scaledLimit"] == pytest.approx(app.model.scores.scaled_limit)
    sequence = app.figures.sequence
    app.state.view = "raw"
    frame = app.figures.frame
    # A view change sends no numbers: the page has them all.
    assert frame["parts"] == [VIEW] and frame["numbers"] == {}
    assert frame["state"]["view"] == "raw" and app.figures.sequence == sequence + 1
    app.state.view = "scaled"
    assert app.figures.frame["state"]["view"] == "scaled"
    # New scores in a scores view: the frame carries them and their new colour range.
    app.state.view = "raw"
    app.state.d_k = 1024
    frame = app.figures.frame
    assert frame["state"]["view"] == "raw" and SCORES in frame["parts"]
    scores = frame["numbers"][SCORES]
    assert scores["rawLimit"] == pytest.approx(app.model.scores.raw_limit)
    assert scores["rawLimit"] > 4 * scores["scaledLimit"]


def test_d_k_updates_histograms_titles_and_readouts() -> None:
    app = Session()
    app.state.d_k = 1024
    assert "d_k = 1024" in histogram_titles(app)[0]
    raw = app.figures.frame["numbers"][HISTOGRAMS]["raw"]
    assert raw["right"][-1] == pytest.approx(4.5 * 32)  # the raw histogram's x range
    html = readouts_html(app.model)
    assert ">32.0<" in html and "√d_k = 32.0" in html


def test_query_sets_state_and_notice() -> None:
    app = Session({"d_k": [b"4"], "n": [b"100000"], "view": [b"<b>x</b>"]})
    assert app.state.d_k == 4 and app.state.n == 1024
    assert app.layout.notice is not None and app.layout.notice.visible
    assert "1024" in app.layout.notice.object and "<" not in app.layout.notice.object
    quiet = Session({"d_k": [b"4"]})
    assert quiet.layout.notice is None


def test_the_scene_alert_is_built_when_a_preset_needs_it() -> None:
    app = Session()
    assert app.layout.scene is None
    app.state.preset = "collapse"
    scene = app.layout.scene
    assert scene is not None and scene.visible and scene in app.page.select(AlertBox)
    assert scene.title == PRESETS["collapse"].label
    app.state.preset = ""
    assert app.layout.scene is scene and not scene.visible
    linked = Session({"preset": [b"collapse"]})
    assert linked.layout.scene is not None and linked.layout.scene.visible


def test_controls_follow_the_state_both_ways() -> None:
    state = SimulationState()
    controls = DrawnControls(state, ["d_k", "temperature", "n"], more=widget_names())
    controls.take_message({"name": "d_k", "index": D_K_GRID.index(128)})
    assert state.d_k == 128 and controls.values["d_k_exact"] == {"value": 128}
    # Off the slider's grid: kept exactly, the slider shows the nearest position.
    controls.take_message({"name": "d_k_exact", "value": 100})
    assert state.d_k == 100
    position = D_K_GRID.index(nearest_on_grid(100, D_K_GRID))
    assert controls.values["d_k"] == {"index": position, "text": "100"}
    state.temperature = 3.0
    assert controls.values["temperature"]["text"] == "3"
    controls.take_message({"name": "preset", "value": "collapse"})
    assert state.preset == "collapse" and controls.values["preset"] == {"value": "collapse"}
    controls.take_message({"name": "seed", "value": 7})
    controls.take_message({"name": "resample", "value": True})
    assert state.seed == 8 and controls.values["seed"] == {"value": 8}
    labels = [spec["label"] for spec in controls.controls]
    assert labels == ["d_k (key dimension)", "temperature", "sequence length n"]


def test_verdict_names_the_regime() -> None:
    assert "one-hot" in verdict(0.95, 0.1, 3.4)
    assert "uniform" in verdict(0.04, 3.4, 3.46)
    assert "useful range" in verdict(0.2, 2.9, 3.46)


def test_readouts_show_lesson_numbers_and_no_nan() -> None:
    app = Session({"d_k": [b"4"]})
    html = readouts_html(app.model)
    assert ">2.0<" in html and ">1.0<" in html
    assert "nan" not in html.lower()


def test_readouts_follow_the_state_and_only_flow_to_the_page() -> None:
    app = Session()
    before = readouts_html(app.model)
    app.state.temperature = 0.1
    assert readouts_html(app.model) != before
    # The readouts are drawn from the weights: the frame of the move carries them.
    weights = app.figures.frame["numbers"][WEIGHTS]
    assert weights["meanMaxWeight"] == app.model.weights.mean_max_weight
    # A page cannot write the frame or the figures back: its change is not followed.
    document = Document()
    model = app.figures.get_root(document)
    frame, shared, inline = app.figures.frame, app.figures.shared, app.figures.inline
    with set_curdoc(document):
        model.data.set_from_json("frame", {"parts": ["<img src=x onerror=alert(1)>"]}, setter=PAGE)
        model.data.set_from_json("shared", "<img src=x onerror=alert(1)>", setter=PAGE)
        model.data.set_from_json("inline", {"html": "<img src=x onerror=alert(1)>"}, setter=PAGE)
    assert app.figures.frame is frame
    assert app.figures.shared is shared and app.figures.inline is inline


def test_the_drawn_lesson_follows_the_state_and_only_flows_to_the_page() -> None:
    """The collapse curves' component hears d_k, the scale and the temperature; nothing
    of the drawn lesson is taken back from a page."""
    app = Session()
    drawn = app.lesson.drawn
    assert drawn.view == {"d_k": 64, "scaled": True, "temperature": 1.0}
    app.state.set_controls(d_k=256, scaled=False)
    assert drawn.view == {"d_k": 256, "scaled": False, "temperature": 1.0}
    assert "Test yourself" in drawn.page_data()["html"]
    document = Document()
    model = drawn.get_root(document)
    view, shared, inline = drawn.view, drawn.shared, drawn.inline
    with set_curdoc(document):
        model.data.set_from_json("view", {"d_k": "<img src=x onerror=alert(1)>"}, setter=PAGE)
        model.data.set_from_json("inline", {"html": "<img src=x onerror=alert(1)>"}, setter=PAGE)
    assert drawn.view is view and drawn.shared is shared and drawn.inline is inline


def test_a_d_k_move_keeps_the_scaled_histograms_bins_and_spreads_the_raw_one() -> None:
    app = Session()
    before = app.figures.frame["numbers"][HISTOGRAMS]
    app.state.d_k = 256
    after = app.figures.frame["numbers"][HISTOGRAMS]
    scaled, raw = after["scaled"], after["raw"]
    # The scaled histogram keeps its bins and its Normal(0, 1) curve: only heights change.
    for field in ("left", "right", "curveX", "curveY"):
        np.testing.assert_array_equal(scaled[field], before["scaled"][field])
    np.testing.assert_array_equal(scaled["density"], app.model.scaled_histogram.density)
    # The raw one spreads out with √d_k: new bins and a new curve.
    assert not np.array_equal(raw["curveX"], before["raw"]["curveX"])
    assert raw["right"][-1] == pytest.approx(4.5 * 16)
    np.testing.assert_array_equal(raw["density"], app.model.raw_histogram.density)


def _renderers(value: object) -> Iterator[dict]:
    """Every GlyphRenderer's attributes in a serialised Bokeh document."""
    if isinstance(value, dict):
        if value.get("type") == "object" and value.get("name") == "GlyphRenderer":
            yield value.get("attributes", {})
        for item in value.values():
            yield from _renderers(item)
    elif isinstance(value, list):
        for item in value:
            yield from _renderers(item)


def test_no_renderer_carries_unused_glyph_copies() -> None:
    """Nothing selects or mutes: each copy would be one more model on every page. The
    figures are drawn in the browser from items built once per process: a session holds
    none, and no renderer of the items asks for the copies."""
    app = Session()
    document = Document()
    document.add_root(app.page.get_root(document))
    assert not [model for model in document.models if isinstance(model, GlyphRenderer)]
    items = [app.figures.page_data(), app.lesson.drawn.page_data()]
    renderers = list(_renderers(items))
    assert len(renderers) >= 20
    for renderer in renderers:
        assert renderer.get("nonselection_glyph", "auto") is None, renderer
        assert renderer.get("muted_glyph", "auto") is None, renderer


def test_the_update_after_the_plots_waits_for_the_plots() -> None:
    """Many messages before the plots' turn make one plot update and one update after it."""
    plots: list = []
    after: list = []
    simulation = Session(pace=plots.append, defer=after.append)
    for d_k in (128, 256, 512):
        simulation.state.d_k = d_k
    simulation.state.temperature = 2.0
    assert len(plots) == 1 and not after, "the lesson and the URL wait for the plots"
    exact = simulation.layout.drawn_controls.values["d_k_exact"]
    assert exact == {"value": 512}, "the controls follow the state at once"
    plots.pop()()
    assert len(after) == 1
    after.pop()()


def test_lesson_sections_behind_their_own_button_are_built_when_opened() -> None:
    simulation = Session()
    lesson = simulation.lesson
    assert lesson is not None
    built_views = len(lesson.views)
    drawn = lesson.drawn
    html = drawn.page_data()["html"]
    for section in lesson.lazy_sections:
        # Only a button and a box in the lesson's markup.
        assert section.view is None
        assert f'data-lazy="{section.name}"' in html and section.title in html
    # Their boxes hold their markup from the start, and nothing of a session's before it
    # is opened; the lesson's document holds no model for them.
    assert 'data-testid="training-status"' in html and drawn.training_figures == ""
    assert 'data-controls="law"' in html and 'data-download="matrix"' in html
    assert HISTOGRAMS not in drawn.frame["parts"]
    # The training button sits after the collapse curves, the assumptions' at the end.
    assert html.index('data-lazy="training"') < html.index('id="sdpa-row"')
    assert html.rindex("sdpa-lazy-assumptions") > html.index('id="sdpa-quiz"')
    simulation.state.set_controls(d_k=256)  # moves before opening update nothing there
    lesson.open(lesson.assumptions)
    view = lesson.assumptions.view
    assert view is not None and HISTOGRAMS in drawn.frame["parts"]
    assert drawn.opened == ["assumptions"] and lesson.training.view is None
    assert len(lesson.views) == built_views + 1
    # Built from the model as it is when opened.
    for group, readouts in view.readouts.items():
        assert readouts == assumptions_html(simulation.model, group)
    # Closed and opened again on the page: the view is kept, not built again.
    drawn.close("assumptions")
    lesson.open(lesson.assumptions)
    assert lesson.assumptions.view is view
