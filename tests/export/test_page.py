"""The exported file: self-contained, within 5 MB, carrying the core's samples (no browser)."""

from __future__ import annotations

import base64
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

import sdpa_core
from app.export import MAX_BYTES, ExportTooLargeError, export_html
from app.export.page import PAGE_CONTROLS, build_document, initial_state, inline_bundle
from app.page.assumptions import SECTION_CONTROLS
from app.page.head import ICON
from app.page.kernel_data import build_export_data
from app.page.views.heatmap import LEGEND_KEY_NAME


def config_of(html: str) -> dict:
    """The JSON the page's scripts read."""
    match = re.search(
        r'<script type="application/json" id="sdpa-export-config">(.*?)</script>', html, re.S
    )
    assert match is not None
    return json.loads(match.group(1))


def test_file_weighs_at_most_5_mb(exported_file: Path) -> None:
    size = exported_file.stat().st_size
    assert 1_000_000 < size <= MAX_BYTES


class _Tags(HTMLParser):
    """Collects the page's elements (script and style contents are text, not elements)."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def test_nothing_is_loaded_from_elsewhere(html: str) -> None:
    parser = _Tags()
    parser.feed(html)
    names = {tag for tag, _ in parser.tags}
    assert {"script", "style", "div"} <= names
    assert not names & {"img", "iframe", "object", "embed", "source", "base"}
    # One link: the icon, inline (a data: address, which the browser does not request).
    links = [attrs for tag, attrs in parser.tags if tag == "link"]
    assert links == [{"rel": "icon", "href": ICON}] and ICON.startswith("data:")
    addressed = [attrs for tag, attrs in parser.tags if {"src", "href", "action"} & attrs.keys()]
    assert [attrs for attrs in addressed if attrs not in links] == []
    # BokehJS is inline, with its widgets (the sliders) but not the parts the page skips.
    assert "/* BEGIN bokeh.min.js */" in html
    assert "/* BEGIN bokeh-widgets.min.js */" in html
    assert "bokeh-mathjax" not in html


def test_no_external_scripts_even_after_panel_is_imported() -> None:
    # Importing Panel registers models whose external files Bokeh would add to any page.
    import panel  # noqa: F401

    document, _, _ = build_document(build_export_data(8, 8, 0))
    bundle = inline_bundle(document)
    assert bundle.js_files == [] and bundle.css_files == []
    assert any("bokeh" in script[:200].lower() for script in bundle.js_raw)


def test_page_carries_the_cores_samples(html: str) -> None:
    data = config_of(html)["data"]
    n_max, d_max = data["n_max"], data["d_max"]
    assert (n_max, d_max, data["seed"]) == (128, 512, 0)
    q = np.frombuffer(base64.b64decode(data["q"]), dtype="<f4").reshape(n_max, d_max)
    np.testing.assert_array_equal(q, sdpa_core.sample_qk(n_max, d_max, 0)[0].astype(np.float32))
    dot = np.frombuffer(base64.b64decode(data["dot"]), dtype="<f4").reshape(-1, data["pairs"])
    row = data["d_values"].index(64)
    np.testing.assert_array_equal(dot[row], sdpa_core.dot_product_pool(64, 0))


def test_page_states_its_limits(html: str) -> None:
    assert "n ≤ 128 and d_k ≤ 512" in html
    assert "(32 steps)" in html
    assert "seed 0" in html


def test_every_control_is_drawn_in_the_browser_not_a_bokeh_widget() -> None:
    documents, config, _ = build_document(build_export_data(16, 16, 0))
    for name in PAGE_CONTROLS:
        # The page draws it (control_drawing.js) into one of its grids.
        assert documents.get_model_by_name(name) is None, name
        assert config["widgets"][name]["name"] == name
        assert sum(name in names for names in config["grids"].values()) == 1, name
    # The page starts at the served defaults, moved onto its slider positions.
    assert {control["name"]: control["default"] for control in config["controls"]} == {
        "d_k": 16,
        "temperature": 1.0,
        "n": 16,
        "scaled": True,
        "view": "weights",
        "causal": False,
        "sigma_q": 1.0,
        "sigma_k": 1.0,
        "precision": "float64",
        "subtract_max": True,
    }


def test_too_large_a_page_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "big.html"
    with pytest.raises(ExportTooLargeError, match="lower --n-max"):
        export_html(target, n_max=1024, d_max=1024)
    assert not target.exists()


def test_heatmap_draws_only_the_current_view() -> None:
    document, _, _ = build_document(build_export_data(16, 16, 0))
    figure = document.get_model_by_name("heatmap")
    visible = [
        renderer.name
        for renderer in figure.renderers
        if renderer.visible and renderer.name != LEGEND_KEY_NAME
    ]
    # The image, and the served outline of the query the row comparison shows; the overflow
    # layer is there, hidden until a weight overflows.
    assert visible == ["heatmap_image", "row_outline"]
    assert document.get_model_by_name("heatmap_overflow").visible is False
    image = document.get_model_by_name("heatmap_image")
    assert image.glyph.image == "shown"
    np.testing.assert_array_equal(
        image.data_source.data["shown"][0], image.data_source.data["weight"][0]
    )


def test_the_config_carries_the_servers_templates(html: str) -> None:
    """text.js and assumptions.js fill the templates of the modules that own the words."""
    from app.page.views.assumptions import ASSUMPTION_TEXTS
    from app.page.views.histogram import HISTOGRAM_TEXTS
    from app.page.views.readouts import READOUT_TEXTS

    config = config_of(html)
    assert config["texts"] == {"readouts": READOUT_TEXTS, "histograms": HISTOGRAM_TEXTS}
    assert config["assumptions"]["texts"] == ASSUMPTION_TEXTS


def test_readouts_start_as_the_servers(html: str) -> None:
    from app.page.views.readouts import readouts_html
    from app.simulation.model import SimulationModel

    expected = readouts_html(SimulationModel(initial_state(build_export_data(128, 512, 0))))
    assert f'<div class="sdpa-readouts" id="sdpa-readouts">{expected}</div>' in html


def test_the_lesson_is_a_document_of_its_own() -> None:
    # BokehJS builds, lays out and paints every root's views before the page shows anything:
    # the lesson sections' figures and controls are drawn after the first screen, from a
    # second document; the first holds the first screen alone.
    documents, config, _ = build_document(build_export_data(16, 16, 0))
    later = {root.name for root in documents.sections.roots}
    first = {root.name for root in documents.first.roots}
    assert not later & first
    # The section's controls are drawn by the page into the section's own grids.
    section_grids = [names for grid, names in config["grids"].items() if "assumptions" in grid]
    assert sorted(name for names in section_grids for name in names) == sorted(SECTION_CONTROLS)
    lesson_figures = {"training_loss", "training_accuracy", "row_panel", "output_panel"}
    assert lesson_figures | {"collapse_entropy"} <= later
    assert {"heatmap_panel", "histograms"} <= first
    assert documents.get_model_by_name("training_loss") is not None
    assert documents.get_model_by_name("heatmap") is documents.first.get_model_by_name("heatmap")
