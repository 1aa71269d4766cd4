"""Issue 15 on the offline page: the first screen is the experiment.

The controls a student moves most sit beside or above the heatmap and the raw histogram,
which all fit the first viewport of a phone or a small course-page frame; the others open
under "More controls"; ``?controls=`` shows exactly the controls a link names, read by
query.js as app.simulation.query.parse_shown_controls reads it, notice for notice.
"""

from __future__ import annotations

from typing import Any

import pytest
from tornado.httputil import parse_qs_bytes

from app.export.page import shown_controls_spec
from app.simulation.query import parse_shown_controls, query_spec
from app.simulation.spec import CONTROL_BY_NAME, CONTROLS, FIRST_SCREEN_CONTROLS, VIEWS

from .conftest import OfflinePage
from .js_harness import Runner

SPEC = query_spec()
SHOWN = shown_controls_spec()
LABEL = {control.name: control.label for control in CONTROLS}
OFFLINE = [control.name for control in CONTROLS if control.offline]
PANEL_CONTROLS = [name for name in OFFLINE if not CONTROL_BY_NAME[name].lesson_section]
"""The offline controls of the controls panel (the others sit in their lesson section)."""
SIZES = [(800, 600), (400, 700)]

CASES = [
    "",
    "controls=d_k",
    "controls=d_k,scaled",
    "controls=scaled,d_k,scaled",
    "controls= D_K , Temperature ,,",
    "controls=view,causal,n",
    "controls=",
    "controls=,,,",
    "controls=seed",
    "controls=preset,row",
    "controls=d_k,<script>alert(1)</script>",
    "controls=nope&controls=n",
    "controls=n&controls=nope",
    f"controls={'d_k,' * 16}",
    f"controls={'x' * 65}",
    f"controls={'x' * 64}",
    "controls=%E2%80%83d_k%E2%80%83,%C2%A0n",
    "controls=d%5Fk",
    "controls=D_K%2CTEMPERATURE",
    "controls=temperature;n",
    "controls=%FF%FE",
    "controls=k%C3%A9y,%D9%A3",
]
"""Links for both parsers: names, case, spaces (Unicode ones too), repeats, junk, lengths."""


def test_shown_controls_are_read_as_the_served_app_reads_them(node: Runner) -> None:
    results = node([("query", "parseShownControls", [f"?{query}", SPEC, SHOWN]) for query in CASES])
    for query, result in zip(CASES, results, strict=True):
        shown, notices = parse_shown_controls(
            parse_qs_bytes(query, keep_blank_values=True), SHOWN["names"]
        )
        assert (result["shown"], result["notices"]) == (
            list(shown) if shown else None,
            notices,
        ), query


def test_the_page_can_show_its_own_controls_only() -> None:
    assert SHOWN["names"] == ["preset", *OFFLINE]
    assert SHOWN["first_screen"] == [name for name in FIRST_SCREEN_CONTROLS if name in OFFLINE]


def box(opened: OfflinePage, what: str) -> dict[str, float]:
    """The viewport box of a control's widget (by name) or of a figure (by model name)."""
    return opened.page.evaluate(
        """(name) => {
            const widget = document.querySelector(`[data-widget="${name}"]`);
            const model = widget ? null : Bokeh.documents[0].get_model_by_name(name);
            const box = (widget ?? Bokeh.index.find_one(model).el).getBoundingClientRect();
            return {left: box.left, top: box.top, right: box.right, bottom: box.bottom,
                    width: box.width, height: box.height};
        }""",
        what,
    )


def in_view(opened: OfflinePage, what: str, width: int, height: int) -> bool:
    shown = box(opened, what)
    return (
        shown["width"] > 0
        and shown["height"] > 0
        and shown["left"] >= 0
        and shown["top"] >= 0
        and shown["right"] <= width
        and shown["bottom"] <= height
    )


def control_cells(opened: OfflinePage, where: str) -> list[str]:
    """The controls in the first-screen grid or the "More controls" section, in order."""
    return opened.page.evaluate(
        "(where) => [...document.querySelectorAll(`#${where} > [data-widget]`)]"
        ".map((cell) => cell.dataset.widget)",
        where,
    )


def more_button(opened: OfflinePage) -> Any:
    return opened.page.get_by_role("button", name="More controls", exact=False)


@pytest.mark.browser
@pytest.mark.parametrize(("width", "height"), SIZES)
@pytest.mark.parametrize("query", ["", "?embed=true"])
def test_the_experiment_fills_the_first_screen(
    open_export, width: int, height: int, query: str
) -> None:
    opened = open_export(query, width=width, height=height)
    assert opened.page.evaluate("[window.scrollX, window.scrollY]") == [0, 0]
    for what in ("heatmap", "raw_histogram", "d_k"):
        assert in_view(opened, what, width, height), (what, box(opened, what))
    assert opened.page.evaluate("document.documentElement.scrollWidth") <= width
    assert control_cells(opened, "sdpa-first") == SHOWN["first_screen"]
    button = more_button(opened)
    assert button.is_visible() and button.get_attribute("aria-expanded") == "false"
    # The d_k slider moves the heatmap with the keyboard, from where it sits.
    before = opened.model("heatmap_image", "Array.from(m.data_source.data.shown[0])")
    count = opened.updates()
    opened.page.get_by_role("slider", name=LABEL["d_k"], exact=True).press("End")
    opened.wait_for_update_after(count)
    assert opened.snapshot()["state"]["d_k"] == 512
    after = opened.model("heatmap_image", "Array.from(m.data_source.data.shown[0])")
    assert after != before
    assert opened.page.evaluate("[window.scrollX, window.scrollY]") == [0, 0]


@pytest.mark.browser
def test_more_controls_open_in_place_and_work(open_export) -> None:
    opened = open_export(width=400, height=700)
    page = opened.page
    button = more_button(opened)
    causal = page.get_by_role("switch", name=LABEL["causal"], exact=True)
    assert not causal.is_visible()
    button.press("Enter")
    assert button.get_attribute("aria-expanded") == "true"
    more = ["preset", *(name for name in PANEL_CONTROLS if name not in SHOWN["first_screen"])]
    assert control_cells(opened, "sdpa-more") == more
    assert causal.is_visible()
    count = opened.updates()
    page.get_by_role("button", name=VIEWS["raw"], exact=True).press("Enter")
    opened.wait_for_update_after(count)
    count = opened.updates()
    causal.press("Space")
    opened.wait_for_update_after(count)
    state = opened.snapshot()["state"]
    assert (state["view"], state["causal"]) == ("raw", True)
    # The opened section's widgets are laid out to its width, not left at zero size: the
    # view's buttons take a whole row.
    grid = page.evaluate("document.getElementById('sdpa-more').getBoundingClientRect().width")
    assert box(opened, "view")["width"] >= 0.9 * grid > 100
    button.click()
    assert button.get_attribute("aria-expanded") == "false"
    assert not causal.is_visible()


@pytest.mark.browser
def test_a_wide_full_page_opens_more_controls_at_once(open_export) -> None:
    opened = open_export(width=1280, height=800)
    assert more_button(opened).get_attribute("aria-expanded") == "true"
    assert opened.page.get_by_role("switch", name=LABEL["causal"], exact=True).is_visible()
    embedded = open_export("?embed=true", width=1280, height=800)
    assert more_button(embedded).get_attribute("aria-expanded") == "false"


@pytest.mark.browser
def test_a_link_shows_exactly_the_controls_it_names(open_export) -> None:
    opened = open_export("?controls=scaled,VIEW,bogus,scaled&d_k=16", width=800, height=600)
    page = opened.page
    assert control_cells(opened, "sdpa-first") == ["scaled", "view"]
    assert not more_button(opened).is_visible()
    for name in PANEL_CONTROLS:
        visible = name in ("scaled", "view")
        if name == "view":
            shown = page.get_by_role("button", name=VIEWS["raw"], exact=True).is_visible()
        elif name == "scaled":
            shown = page.get_by_role("switch", name=LABEL[name], exact=True).is_visible()
        else:
            role = "switch" if name == "causal" else "slider"
            shown = page.get_by_role(role, name=LABEL[name], exact=True).is_visible()
        assert shown is visible, name
    notice = opened.model("notice", "m.text")
    listed = ", ".join(SHOWN["names"])
    assert f"controls: “bogus” is not one of {listed}, so it was ignored." in notice
    # The shown ones work, and the link's other values were read as usual.
    count = opened.updates()
    page.get_by_role("button", name=VIEWS["raw"], exact=True).press("Enter")
    opened.wait_for_update_after(count)
    state = opened.snapshot()["state"]
    assert (state["view"], state["d_k"]) == ("raw", 16)
    assert "controls=scaled" in page.url


@pytest.mark.browser
def test_a_link_naming_no_known_control_keeps_the_usual_screen(open_export) -> None:
    opened = open_export(f"?controls={'x' * 65}&embed=1", width=400, height=700)
    assert control_cells(opened, "sdpa-first") == SHOWN["first_screen"]
    assert more_button(opened).is_visible()
    assert "controls: the value is 65 characters long" in opened.model("notice", "m.text")
