"""The lesson's "When the assumptions break" section in Chromium: its controls from the URL
and the keyboard, the float16 overflow on the heatmap and in the readouts, the CSV downloads."""

from __future__ import annotations

import csv
import io
import math
from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import Locator, expect

from app.page.views.assumptions import ASSUMPTIONS_TITLE
from app.page.views.heatmap import OVERFLOW_COLOUR

if TYPE_CHECKING:
    from conftest import AppPage

pytestmark = pytest.mark.browser

OVERFLOW = "?d_k=1024&scaled=false&precision=float16&subtract_max=false"

OVERFLOW_JS = """() => {
  const figure = sdpaFigure('heatmap');
  const layer = sdpaFigure('overflow_renderer');
  const legend = sdpaFigure('overflow_legend');
  if (!layer || !layer.visible || !legend || !legend.visible) return null;
  const image = layer.data_source.data.overflow[0];
  const [rows, cols] = image.shape;
  let count = 0, first = null;
  for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) {
    if (image[i * cols + j] === 1) { count++; if (first === null) first = [i, j]; }
  }
  const weight = sdpaHeatmap().data.weight[0];
  let nan = 0;
  for (const value of weight) if (Number.isNaN(value)) nan++;
  const view = Bokeh.index.find_one(figure);
  const ratio = view.canvas_view.pixel_ratio;
  const x = view.frame.x_scale.compute(first[1] + 0.5);
  const y = view.frame.y_scale.compute(first[0] + 0.5);
  const pixel = view.canvas_view.compose().canvas.getContext('2d')
    .getImageData(Math.floor(x * ratio), Math.floor(y * ratio), 1, 1).data;
  return {count, nan, rows, first, pixel: Array.from(pixel),
          labels: legend.items.filter((item) => item.visible).map((item) => item.label.value)};
}"""
"""The overflow layer as drawn: its cells, the NaN weights and the colour painted at the
first overflowed cell; null while it is not shown."""

WEIGHTS_JS = """() => {
  const data = sdpaHeatmap().data;
  return ['raw', 'scaled', 'weight'].map((name) => Array.from(data[name][0], (v) =>
    Number.isNaN(v) ? null : v));
}"""


def section(app_page: AppPage) -> Locator:
    """The lesson's section (More controls holds the same controls too)."""
    return app_page.page.locator(".assumptions").first


def rgb(colour: str) -> list[int]:
    return [int(colour[i : i + 2], 16) for i in (1, 3, 5)]


def test_the_new_controls_come_from_the_url(app_page: AppPage) -> None:
    app_page.open("?sigma_q=2&sigma_k=0.5&rho=-0.3&qk_norm=true&precision=bfloat16&subtract_max=0")
    app_page.open_section(ASSUMPTIONS_TITLE)
    app_page.wait_url(
        sigma_q="2",
        sigma_k="0.5",
        rho="-0.3",
        qk_norm="true",
        precision="bfloat16",
        subtract_max="false",
    )
    box = section(app_page)
    expect(box.get_by_role("switch", name="normalise q and k")).to_be_checked()
    expect(box.get_by_role("switch", name="subtract the row max")).not_to_be_checked()
    expect(box.get_by_role("slider", name="σ_q (query std)")).to_have_attribute(
        "aria-valuetext", "2"
    )
    expect(box.get_by_role("slider", name="ρ (q–k correlation)")).to_have_attribute(
        "aria-valuetext", "-0.3"
    )
    expect(box.get_by_role("button", name="bfloat16")).to_have_attribute("aria-pressed", "true")
    assert "(QK-norm)" in app_page.histogram("raw_histogram")["title"]
    # Clamped like the others, with a notice.
    app_page.open("?sigma_q=100&rho=-7", lesson=False)
    app_page.wait_url(sigma_q="4", rho="-0.95")
    expect(app_page.page.locator(".query-notice")).to_contain_text("sigma_q = 100 is above")


def test_the_new_controls_work_from_the_keyboard(app_page: AppPage) -> None:
    app_page.open("?d_k=256")
    app_page.open_section(ASSUMPTIONS_TITLE)
    box = section(app_page)
    sigma = box.get_by_role("slider", name="σ_q (query std)")
    sigma.focus()
    sigma.press("ArrowRight")
    app_page.wait_url(sigma_q="1.2")
    app_page.page.wait_for_function(
        """() => sdpaFigure('raw_histogram')
             .title.text.includes('std ≈ 19.2')"""
    )
    rho = box.get_by_role("slider", name="ρ (q–k correlation)")
    rho.focus()
    rho.press("ArrowLeft")
    app_page.wait_url(rho="-0.05")
    switch = box.get_by_role("switch", name="normalise q and k")
    switch.focus()
    switch.press("Space")
    app_page.wait_url(qk_norm="true")
    expect(app_page.page.get_by_test_id("std-scaled").locator(".ref")).to_contain_text(
        "QK-norm restores it"
    )
    assert app_page.histogram("scaled_histogram")["std"] == pytest.approx(1.0, rel=0.1)
    button = box.get_by_role("button", name="float16", exact=True)
    button.focus()
    button.press("Enter")
    app_page.wait_url(precision="float16")
    expect(app_page.page.get_by_test_id("non-finite")).to_contain_text("float16")
    stable = box.get_by_role("switch", name="subtract the row max")
    stable.focus()
    stable.press("Space")
    app_page.wait_url(subtract_max="false")


def test_float16_overflow_is_marked_and_counted(app_page: AppPage) -> None:
    app_page.open(OVERFLOW)
    app_page.open_section(ASSUMPTIONS_TITLE)
    drawn = app_page.page.wait_for_function(OVERFLOW_JS).json_value()
    assert drawn["count"] == drawn["nan"] > 0
    assert drawn["labels"] == ["inf/NaN weight (overflow)"]
    painted = drawn["pixel"]
    assert painted[3] == 255
    assert max(abs(a - b) for a, b in zip(painted[:3], rgb(OVERFLOW_COLOUR), strict=True)) <= 8
    count = f"{drawn['count']:,}"
    assert app_page.readout("non-finite") == count
    expect(section(app_page).get_by_test_id("precision-non-finite").locator(".value")).to_have_text(
        count
    )
    # Subtracting the row max keeps every row finite: the layer goes.
    stable = section(app_page).get_by_role("switch", name="subtract the row max")
    stable.focus()
    stable.press("Space")
    app_page.wait_url(subtract_max="true")
    app_page.page.wait_for_function(
        "() => !sdpaHeatmap().data.weight[0].some(Number.isNaN)"
        " && !sdpaFigure('overflow_renderer').visible"
    )
    assert app_page.readout("non-finite") == "0"
    assert app_page.heatmap()["rowSums"] == pytest.approx([1.0] * 32, abs=5e-3)


def read_download(app_page: AppPage, label: str) -> tuple[str, list[dict[str, str]]]:
    button = section(app_page).get_by_role("button", name=label)
    with app_page.page.expect_download() as info:
        button.click()
    download = info.value
    with open(download.path(), encoding="utf-8") as file:
        text = file.read()
    return download.suggested_filename, list(csv.DictReader(io.StringIO(text)))


def test_the_matrix_csv_equals_the_pages_values(app_page: AppPage) -> None:
    app_page.open(OVERFLOW + "&n=12&causal=true")
    app_page.open_section(ASSUMPTIONS_TITLE)
    name, rows = read_download(app_page, "Download CSV: heatmap matrix")
    assert name == "sdpa_d_k-1024_T-1_n-12_unscaled_causal_precision-float16_subtract_max-off.csv"
    raw, scaled, weight = app_page.page.evaluate(WEIGHTS_JS)
    assert len(rows) == 144
    for column, shown in (("raw", raw), ("scaled", scaled), ("weight", weight)):
        for row, value in zip(rows, shown, strict=True):
            text = row[column]
            if value is None:
                assert text in ("", "nan"), (column, row)
                assert (text == "") == (int(row["key"]) > int(row["query"]))
            else:
                assert float(text) == pytest.approx(value, rel=1e-7, abs=1e-30), (column, row)
    assert any(row["weight"] == "nan" for row in rows)


def test_the_histogram_csv_equals_the_pages_bars(app_page: AppPage) -> None:
    app_page.open("?sigma_q=2&rho=0.5")
    app_page.open_section(ASSUMPTIONS_TITLE)
    name, rows = read_download(app_page, "Download CSV: histograms")
    assert name == "sdpa_d_k-64_sigma_q-2_rho-0.5_histogram.csv"
    bars = app_page.page.evaluate(
        """() => ['raw_histogram', 'scaled_histogram'].map((name) => {
          const figure = sdpaFigure(name);
          const data = figure.renderers.find((r) => r.glyph.type === 'Quad').data_source.data;
          return {left: Array.from(data.left), right: Array.from(data.right),
                  top: Array.from(data.top)};
        })"""
    )
    for histogram, drawn in zip(("raw", "scaled"), bars, strict=True):
        mine = [row for row in rows if row["histogram"] == histogram]
        assert [float(r["left"]) for r in mine] == drawn["left"]
        assert [float(r["right"]) for r in mine] == drawn["right"]
        assert [float(r["density"]) for r in mine] == drawn["top"]
        assert sum(int(r["count"]) for r in mine) <= 10_000
        assert all(math.isfinite(float(r["reference_density"])) for r in mine)
