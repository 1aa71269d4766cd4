"""The assembled session without a server: controls, views and URL follow the state."""

from __future__ import annotations

import numpy as np
import panel as pn
import pytest
from bokeh.document import Document
from bokeh.models import GlyphRenderer
from panel.io.state import set_curdoc
from panel.reactive import Syncable

import app.session
from app.controls import build_controls
from app.controls_spec import D_K_GRID, TITLE, nearest_on_grid
from app.session import Session, build_app
from app.state import SimulationState
from app.ticks import run_now
from app.views.assumptions import assumptions_html
from app.views.heatmap import SCORES_PALETTE, WEIGHTS_PALETTE
from app.views.markup import ServerMarkup
from app.views.readouts import readouts_html, verdict


def heatmap_column(app: Session, name: str) -> np.ndarray:
    """The 2-D array a heatmap source column holds."""
    return app.heatmap.source.data[name][0]


def visible_column(app: Session) -> str:
    """The column of the one visible heatmap renderer."""
    (column,) = [r.glyph.image for r in app.heatmap.renderers.values() if r.visible]
    return column


def test_page_has_the_title_and_every_plot() -> None:
    page = build_app()
    assert page.title == TITLE
    app = Session()
    assert heatmap_column(app, "weight").shape == (32, 32)
    assert app.histograms.raw.figure.name == "raw_histogram"
    assert app.histograms.scaled.figure.name == "scaled_histogram"


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
    monkeypatch.setattr(app.session, "served", lambda: True)
    monkeypatch.setattr(pn.state, "onload", load.onload)
    return load


def test_served_page_builds_the_lesson_when_the_student_opens_it(page_load: PageLoad) -> None:
    simulation = Session(defer=run_now, pace=run_now)
    page_load.load()  # the page has loaded: still no lesson
    assert simulation.lesson is None
    assert simulation.layout.lesson_gate.visible
    first_screen = len(simulation.layout.content.objects)
    simulation.state.temperature = 2.0  # a move before the lesson arrives updates what exists
    simulation.layout.lesson_gate.opened = True  # pressed, or scrolled near
    assert simulation.lesson is not None
    assert not simulation.layout.lesson_gate.visible
    sections = len(simulation.lesson.sections())
    assert len(simulation.layout.content.objects) == first_screen + sections
    # Built from the current state: the move above is already in the lesson's row.
    assert "temperature 2 " in simulation.lesson.collapse.caption.html
    simulation.layout.lesson_gate.opened = False  # a page (or a hostile client) asking again
    simulation.layout.lesson_gate.opened = True
    simulation.add_lesson()
    assert len(simulation.layout.content.objects) == first_screen + sections, (
        "the lesson is added once"
    )


def test_what_the_page_asks_for_before_it_has_loaded_is_built_once_it_has(
    page_load: PageLoad,
) -> None:
    """A wide page opens "More controls" as it renders, before it reports itself loaded:
    Panel 1.9 would drop what is built then, so it is built once the page has loaded."""
    simulation = Session(defer=run_now, pace=run_now)
    simulation.layout.open_more()
    simulation.layout.lesson_gate.opened = True
    assert simulation.layout.more is None and simulation.lesson is None
    page_load.load()
    assert simulation.layout.more is not None and simulation.layout.more.visible
    assert "d_k_exact" in simulation.widgets and "causal" in simulation.widgets
    assert simulation.lesson is not None
    assert not simulation.layout.lesson_gate.visible


def test_moves_made_before_the_plots_turn_fold_into_one_update() -> None:
    pending: list = []
    simulation = Session(pace=pending.append)
    weights_before = heatmap_column(simulation, "weight").copy()
    for temperature in (4.0, 0.5, 0.25):
        simulation.state.temperature = temperature
    simulation.state.d_k = 128
    assert len(pending) == 1, "four changes before the plots' turn make one update"
    assert np.array_equal(heatmap_column(simulation, "weight"), weights_before)
    pending.pop()()
    assert "d_k = 128" in simulation.histograms.raw.figure.title.text
    expected = Session({"temperature": "0.25", "d_k": "128"})
    assert np.allclose(heatmap_column(simulation, "weight"), heatmap_column(expected, "weight"))
    simulation.state.d_k = 256
    assert len(pending) == 1, "a change after the update schedules the next one"


def test_first_screen_updates_before_the_lesson_and_moves_fold_into_one() -> None:
    pending: list = []
    simulation = Session(defer=pending.append)
    bars_before = list(simulation.lesson.row_compare.scaled.data["weight"])
    weights_before = heatmap_column(simulation, "weight").copy()
    simulation.state.temperature = 4.0
    simulation.state.temperature = 0.25
    assert not np.allclose(heatmap_column(simulation, "weight"), weights_before)
    assert "0.25" not in str(simulation.lesson.collapse.caption.html)
    assert list(simulation.lesson.row_compare.scaled.data["weight"]) == bars_before
    assert len(pending) == 1, "two moves before the lesson's turn make one lesson update"
    pending.pop()()
    assert "temperature 0.25 " in simulation.lesson.collapse.caption.html
    assert list(simulation.lesson.row_compare.scaled.data["weight"]) != bars_before
    simulation.state.d_k = 128
    assert len(pending) == 1


def test_controls_follow_at_once_and_moves_fold_into_one_lesson_update() -> None:
    pending: list = []
    simulation = Session(defer=pending.append)
    simulation.layout.open_more()
    d_k_slider = simulation.widgets["d_k"]
    exact = simulation.widgets["d_k_exact"]
    d_k_slider.value = 128
    d_k_slider.value = 256  # a second move before the update below the plots
    assert simulation.state.d_k == 256 and exact.value == 256
    assert simulation.histograms.raw.figure.title.text.startswith("Raw q·k at d_k = 256")
    assert len(pending) == 1, "both moves make one update of the lesson and the URL"
    pending.pop()()
    exact.value = 100  # typed: the slider follows, to its nearest position
    assert d_k_slider.value == nearest_on_grid(100, D_K_GRID) and simulation.state.d_k == 100
    pending.pop()()
    assert not pending


def test_control_updates_are_not_taken_back_as_changes_from_the_page(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Panel takes a widget change released by an outer hold for one from the page."""
    pending: list = []
    simulation = Session(defer=pending.append)
    simulation.layout.open_more()
    document = Document()
    document.add_root(simulation.page.get_root(document))
    document.on_change(lambda event: None)  # a session listens: Bokeh then holds changes
    from_page: list = []
    monkeypatch.setattr(
        Syncable,
        "_process_events",
        lambda self, events: from_page.append((type(self).__name__, events)),
    )
    exact = simulation.widgets["d_k_exact"]
    query_box = simulation.lesson.row_compare.row_input
    with set_curdoc(document):  # as in a session: pn.io.hold() holds this document
        simulation.state.d_k = 300  # the exact d_k box follows
        pending.pop()()
        simulation.state.n = 64  # the row comparison's query box gets a new bound
        pending.pop()()
    assert exact.value == 300 and query_box.end == 63
    assert from_page == []
    document.clear()


def test_lesson_is_built_at_once_outside_a_server() -> None:
    simulation = Session()
    assert simulation.lesson is not None
    assert simulation.lesson.collapse.panel in simulation.layout.content.objects


def test_slider_moves_update_sources_in_place() -> None:
    app = Session()
    figure, source = app.heatmap.figure, app.heatmap.source
    raw_before = heatmap_column(app, "raw")
    weights_before = heatmap_column(app, "weight").copy()
    app.state.temperature = 0.2
    assert app.heatmap.figure is figure and app.heatmap.source is source
    assert heatmap_column(app, "raw") is raw_before, "a temperature move must not resend scores"
    assert not np.allclose(heatmap_column(app, "weight"), weights_before)
    app.state.n = 64
    assert heatmap_column(app, "weight").shape == (64, 64)
    assert app.heatmap.source.data["dw"] == [64]
    assert (app.heatmap.figure.y_range.start, app.heatmap.figure.y_range.end) == (64, 0)


def test_a_zoom_stays_until_n_changes() -> None:
    app = Session()
    x_range, y_range = app.heatmap.figure.x_range, app.heatmap.figure.y_range
    # The student zooms into the first eight keys and queries (the page sets the ranges).
    x_range.update(start=0, end=8)
    y_range.update(start=8, end=0)
    app.state.d_k = 256
    app.state.seed = 3
    app.state.causal = True
    assert (x_range.start, x_range.end, y_range.start, y_range.end) == (0, 8, 8, 0)
    app.state.n = 16
    assert (x_range.start, x_range.end, y_range.start, y_range.end) == (0, 16, 16, 0)
    assert x_range.bounds == y_range.bounds == (0, 16)


def test_view_switches_column_and_colour_bar() -> None:
    app = Session()
    assert visible_column(app) == "weight"
    assert tuple(app.heatmap.mapper.palette) == tuple(WEIGHTS_PALETTE)
    assert (app.heatmap.mapper.low, app.heatmap.mapper.high) == (0.0, 1.0)
    app.state.view = "raw"
    assert visible_column(app) == "raw"
    assert tuple(app.heatmap.mapper.palette) == tuple(SCORES_PALETTE)
    assert app.heatmap.mapper.low == -app.heatmap.mapper.high
    assert app.heatmap.mapper.high == pytest.approx(np.nanmax(np.abs(heatmap_column(app, "raw"))))
    app.state.view = "scaled"
    assert visible_column(app) == "scaled"
    assert app.heatmap.mapper.high == pytest.approx(app.model.scores.scaled_limit)
    # New scores in a scores view: the colour range follows them, the view stays.
    app.state.view = "raw"
    app.state.d_k = 1024
    assert visible_column(app) == "raw"
    assert app.heatmap.mapper.high == pytest.approx(app.model.scores.raw_limit)
    assert app.heatmap.mapper.high > 4 * app.model.scores.scaled_limit


def test_d_k_updates_histograms_titles_and_readouts() -> None:
    app = Session()
    app.state.d_k = 1024
    assert "d_k = 1024" in app.histograms.raw.figure.title.text
    assert app.histograms.raw.figure.x_range.end == pytest.approx(4.5 * 32)
    html = app.readouts.pane.html
    assert ">32.0<" in html and "√d_k = 32.0" in html


def test_query_sets_state_and_notice() -> None:
    app = Session({"d_k": [b"4"], "n": [b"100000"], "view": [b"<b>x</b>"]})
    assert app.state.d_k == 4 and app.state.n == 1024
    assert app.layout.notice.visible
    assert "1024" in app.layout.notice.object and "<" not in app.layout.notice.object
    quiet = Session({"d_k": [b"4"]})
    assert not quiet.layout.notice.visible


def test_controls_follow_the_state_both_ways() -> None:
    state = SimulationState()
    controls = build_controls(state)
    sliders = [controls[name] for name in ("d_k", "temperature", "n")]
    d_k_slider, temperature_slider, n_slider = sliders
    exact = controls["d_k_exact"]
    d_k_slider.value = 128
    assert state.d_k == 128 and exact.value == 128
    exact.value = 100  # off the slider's grid: kept exactly, the slider shows the nearest
    assert state.d_k == 100
    assert d_k_slider.value == nearest_on_grid(100, D_K_GRID) != 100
    state.temperature = 3.0
    assert temperature_slider.value == 3.0
    n_slider.value = 256
    assert state.n == 256
    assert [c.label for c in sliders] == ["d_k (key dimension)", "temperature", "sequence length n"]


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
    before = app.readouts.pane.html
    app.state.temperature = 0.1
    assert app.readouts.pane.html == readouts_html(app.model) != before
    # A page cannot write the markup back: its change is refused, the server's stays.
    document = Document()
    model = app.readouts.pane.get_root(document)
    shown = app.readouts.pane.html
    with set_curdoc(document):
        model.data.set_from_json("html", "<img src=x onerror=alert(1)>", setter=object())
    assert app.readouts.pane.html == shown


def test_server_markup_replaces_the_markup_of_every_rendered_page() -> None:
    markup = ServerMarkup(html="<b>a</b>")
    models = [markup.get_root(Document()) for _ in range(2)]  # two pages show it
    markup.show("<b>b</b>")
    assert [model.data.html for model in models] == ["<b>b</b>", "<b>b</b>"]
    assert markup.html == "<b>b</b>"  # for a page rendered later
    assert markup.get_root(Document()).data.html == "<b>b</b>"


def test_d_k_move_sends_only_what_changed_in_the_histograms() -> None:
    app = Session()
    scaled, raw = app.histograms.scaled, app.histograms.raw
    scaled_curve, scaled_left = scaled.curve.data["x"], scaled.bars.data["left"]
    raw_curve = raw.curve.data["x"]
    app.state.d_k = 256
    # The scaled histogram keeps its bins and its Normal(0, 1) curve: only heights change.
    assert scaled.curve.data["x"] is scaled_curve
    assert scaled.bars.data["left"] is scaled_left
    np.testing.assert_array_equal(scaled.bars.data["top"], app.model.scaled_histogram.density)
    # The raw one spreads out with √d_k: new bins and a new curve.
    assert raw.curve.data["x"] is not raw_curve
    assert raw.bars.data["right"][-1] == pytest.approx(4.5 * 16)
    np.testing.assert_array_equal(raw.bars.data["top"], app.model.raw_histogram.density)


def test_no_renderer_carries_unused_glyph_copies() -> None:
    """Nothing selects or mutes: each copy would be one more model in every message."""
    app = Session()
    document = Document()
    document.add_root(app.page.get_root(document))
    renderers = [model for model in document.models if isinstance(model, GlyphRenderer)]
    assert len(renderers) >= 20  # the heatmap, histograms and the lesson's figures
    for renderer in renderers:
        assert renderer.nonselection_glyph is None and renderer.muted_glyph is None, renderer


def test_the_update_after_the_plots_waits_for_the_plots() -> None:
    """Many messages before the plots' turn make one plot update and one update after it."""
    plots: list = []
    after: list = []
    simulation = Session(pace=plots.append, defer=after.append)
    simulation.layout.open_more()
    for d_k in (128, 256, 512):
        simulation.state.d_k = d_k
    simulation.state.temperature = 2.0
    assert len(plots) == 1 and not after, "the lesson and the URL wait for the plots"
    exact = simulation.widgets["d_k_exact"]
    assert exact.value == 512, "the controls follow the state at once"
    plots.pop()()
    assert len(after) == 1
    after.pop()()


def test_lesson_sections_behind_their_own_button_are_built_when_opened() -> None:
    simulation = Session()
    lesson = simulation.lesson
    assert lesson is not None
    built_views = len(lesson.views)
    for section in lesson.lazy_sections:
        assert section.view is None and section.panel.objects == [section.button]
    simulation.state.set_controls(d_k=256)  # moves before opening update nothing there
    lesson.assumptions.open()
    assert lesson.assumptions.view is not None
    assert len(lesson.views) == built_views + 1
    # Built from the model as it is when opened.
    assert lesson.assumptions.view.readouts.html == assumptions_html(simulation.model)
    lesson.assumptions.button.opened = False
    assert not lesson.assumptions.view.panel.visible
    lesson.assumptions.button.opened = True
    assert lesson.assumptions.view.panel.visible
    assert len(lesson.assumptions.panel.objects) == 2, "built once"
