"""The offline page is generated from app/simulation/spec.py, as the served page is.

Its config carries every control the spec marks ``offline`` with the spec's label, kind,
bounds, grid and choices; its widgets are the served page's, drawn from the same specs by
the same code, showing the spec's labels and words; its title, intro, recompute graph, URL
order and readout thresholds are the spec's; and its JavaScript names no control: a new control
is one spec entry plus its view.
"""

from __future__ import annotations

import re
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path

import pytest

from app.export.page import build_document
from app.page.bundle import WEB
from app.page.controls import control_spec, widget_spec
from app.page.kernel_data import FIXED_CONTROLS, build_export_data, slider_grids
from app.page.lesson import LESSON_CONTROLS
from app.simulation.spec import (
    CONTROLS,
    INPUTS,
    INTRO,
    TITLE,
    Control,
    SimulationSpec,
    page_spec,
)

from .test_page import config_of

OFFLINE = [control for control in CONTROLS if control.offline]
WIDGET_ROLE = {"slider": "slider", "switch": "switch", "buttons": "group"}
"""Accessible role of each widget kind named by its label (a group of buttons: each of its
buttons is named by its choice)."""


@pytest.fixture(scope="module")
def config(html: str) -> dict:
    """The JSON the default export's scripts read."""
    return config_of(html)


def test_config_carries_every_offline_control_as_the_spec_describes_it(config: dict) -> None:
    entries = {entry["name"]: entry for entry in config["controls"]}
    assert list(entries) == [control.name for control in OFFLINE]
    grids = slider_grids(build_export_data(128, 512, 0))
    for control in OFFLINE:
        entry = entries[control.name]
        assert entry["label"] == control.label
        assert (entry["kind"], entry["widget"]) == (control.kind, control.widget)
        assert entry["bounds"] == (list(control.bounds) if control.bounds else None)
        assert entry["choices"] == dict(control.choices)
        assert entry["url_format"] == control.url_format
        # A slider moves over the spec's grid, cut to what the samples carry.
        assert entry["grid"] == grids.get(control.name, list(control.grid))
        assert entry["grid"] == [value for value in control.grid if value in entry["grid"]]


def test_config_carries_the_specs_graph_texts_and_thresholds(config: dict) -> None:
    spec = page_spec(offline_only=True)
    offered = {control.name for control in OFFLINE}
    assert config["inputs"]  # the parts the page draws, each with what it depends on
    for part, names in config["inputs"].items():
        assert set(names) == INPUTS[part] & offered, part
    assert set(config["parts"].values()) == set(config["inputs"])
    for key in ("title", "intro", "one_hot_threshold", "uniform_entropy_fraction"):
        assert config[key] == spec[key], key
    # The URL: the preset, then the controls in the spec's order, the fixed seed among them.
    kept = (*FIXED_CONTROLS, *LESSON_CONTROLS)
    written = [c.name for c in CONTROLS if c.offline or c.name in kept]
    assert config["url_names"] == ["preset", *written]


class _Text(HTMLParser):
    """The text of the elements with a given class, and of <title> and <h1>."""

    def __init__(self) -> None:
        super().__init__()
        self.open: list[str] = []
        self.text: dict[str, str] = {}
        self.strong: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        key = tag if tag in ("title", "h1", "strong") else dict(attrs).get("class") or tag
        self.open.append(key if tag in ("title", "h1", "p", "strong") else "")

    def handle_endtag(self, tag: str) -> None:
        self.open.pop()

    def handle_data(self, data: str) -> None:
        for key in filter(None, self.open):
            self.text[key] = self.text.get(key, "") + data
        if self.open and self.open[-1] == "strong":
            self.strong.append(data)


def test_title_and_intro_are_the_specs(html: str) -> None:
    page = html[html.index("<title>") : html.index("</title>") + 8]
    body = html[html.index('<div class="sdpa-page">') :]
    parser = _Text()
    parser.feed(page + body[: body.index('<section class="sdpa-lesson"')])
    assert parser.text["title"] == parser.text["h1"] == TITLE
    # The intro's Markdown shown as the served page shows it: **bold** as <strong>.
    assert " ".join(parser.text["sdpa-intro"].split()) == INTRO.replace("**", "")
    assert parser.strong == re.findall(r"\*\*(.+?)\*\*", INTRO)


def exported_words(config: dict, control: Control) -> tuple[str, list[str]]:
    """The label an exported control's widget shows, and its buttons' words (if any)."""
    spec = config["widgets"][control.name]
    return spec["label"], [words for _, words in spec.get("choices", [])]


def test_every_offline_control_is_drawn_from_the_served_pages_spec() -> None:
    data = build_export_data(16, 16, 0)
    _, config, _ = build_document(data)
    grids = slider_grids(data)
    for control in OFFLINE:
        label, words = exported_words(config, control)
        assert label == control.label == control_spec(control)["label"]  # the served page's
        assert words == list(control.choices.values())
        # The served page's spec, on the file's own slider steps.
        assert config["widgets"][control.name] == control_spec(control, grids.get(control.name))
    # Only those, and the preset scenes: the page offers no other control, and draws each
    # widget in exactly one grid.
    offered = {control.name for control in OFFLINE}
    assert set(config["widgets"]) == offered | {"preset"}
    placed = [name for names in config["grids"].values() for name in names]
    assert sorted(placed) == sorted(config["widgets"])


def test_a_label_changed_in_the_spec_changes_both_pages() -> None:
    renamed = SimulationSpec(
        tuple(replace(control, label=f"{control.label} (renamed)") for control in CONTROLS)
    )
    _, config, _ = build_document(build_export_data(16, 16, 0), renamed)
    labels = {entry["name"]: entry["label"] for entry in config["controls"]}
    offline = [control for control in renamed.controls if control.offline]
    assert [control.name for control in offline] == [control.name for control in OFFLINE]
    for control in offline:
        assert control.label.endswith(" (renamed)")
        assert exported_words(config, control)[0] == control.label
        assert labels[control.name] == control.label
        assert control_spec(control)["label"] == control.label
        if control.widget != "none":
            assert widget_spec(control.name, renamed)["label"] == control.label


def code_of(script: Path) -> str:
    """A browser module without its comments (which may well mention a control)."""
    source = script.read_text(encoding="utf-8")
    # Apart: with DOTALL, a line comment's ``.*`` would run to the end of the script.
    source = re.sub(r"/\*.*?\*/", "", source, flags=re.S)
    return re.sub(r"^\s*//.*$", "", source, flags=re.M)


SCRIPTS = sorted([*WEB.glob("shared/*.js"), *WEB.glob("offline/*.js")])
"""The browser modules the offline file runs (the served components' own name their Python
properties, one of which, ``view``, shares a control's name)."""


@pytest.mark.parametrize("script", SCRIPTS, ids=[str(path.relative_to(WEB)) for path in SCRIPTS])
def test_the_scripts_name_no_control_and_copy_no_spec_text(script: Path) -> None:
    source = code_of(script)
    for control in CONTROLS:
        for quote in "\"'`":
            assert f"{quote}{control.name}{quote}" not in source, (script, control.name)
            assert f"{quote}{control.label}{quote}" not in source, (script, control.label)
    assert TITLE not in source and INTRO[:40] not in source
    # The thresholds come from the config: no 0.9 or 0.95 of the script's own.
    assert not re.search(r"(?<![\d.])0\.95?(?![\d])", source), script


@pytest.mark.browser
def test_the_page_names_each_widget_by_its_spec_label(open_export) -> None:
    opened = open_export()
    opened.open_sections()
    page = opened.page
    for control in OFFLINE:
        if control.widget in WIDGET_ROLE:
            widget = page.get_by_role(WIDGET_ROLE[control.widget], name=control.label, exact=True)
            assert widget.count() == 1, control.name
        for words in control.choices.values():
            assert page.get_by_role("button", name=words, exact=True).count() == 1, words
