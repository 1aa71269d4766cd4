"""A single, self-contained HTML file of the simulation that needs no server.

``sdpa-sim export OUT.html`` writes one file that an instructor can upload to a learning
platform or open from disk (``file://``): BokehJS, the page's scripts and styles and its
data are all inlined, and it makes no network request at all. Its first screen is the
served app's experiment: the controls a student moves most (d_k, temperature, n, scale
on/off) beside or above the heatmap and the dot-product histograms, the others (preset
scene, heatmap view, causal mask) under "More controls", then the readouts, all computed
in the browser by a small JavaScript kernel (``kernel.js``) that mirrors :mod:`sdpa_core`
step by step. The lesson follows, from the served page's own sources (``lesson.py``,
``lesson.js``): the FAQ, the collapse curves (precomputed by :mod:`sdpa_core` for every
temperature of the slider), "Does the scale matter for learning?" (the default training
grid, trained at export time: ``training.py``), one query scaled vs unscaled, the output
weights·V beside V, the worked example, the quiz and "When the assumptions break"
(σ_q, σ_k, the softmax's format and max subtraction, and the two CSV downloads:
``assumptions.py``, ``assumptions.js``). The lesson's figures and controls are a second
Bokeh document, drawn once the first screen is painted. It reads the served app's URL query
parameters with the served app's rules (``query.js``, from :func:`app.simulation.query.query_spec`),
presets and ``controls=`` included, clamping bad values with a short plain-text notice,
and keeps the link's other parameters in the URL as they came.

Limits, set by the 5 MB the file may weigh (defaults; ``--n-max``/``--d-max`` change them):

* n ≤ 128 and d_k ≤ 512. Q and K are embedded as the first 128 tokens × 512 dimensions of
  ``sdpa_core.sample_qk`` (float32, base64: 0.7 MB), so every n and d_k below the limits
  is a top-left block of the same samples the server uses.
* d_k moves in 32 steps (four per octave, every other position of the served app's d_k
  slider, up to the limit): the histograms need the 10,000 pooled dot products of
  ``sdpa_core.dot_product_pool`` for each d_k offered, 40 kB per d_k, 1.7 MB in base64.
  A link with another d_k goes to the nearest step, with a notice.
* The seed is fixed when the file is exported (``--seed``); a link asking for another one
  keeps it, with a notice.
* ρ and QK-norm stay with the server: their histograms would need the pooled q·q and k·k
  for every d_k step too, 1.7 MB each in base64. A link asking for them gets a notice.
* BokehJS itself takes 1.8 MB; the lesson's curves and values about 0.1 MB, and the
  training section's bands, notes and figures another 0.1 MB. The export refuses to write
  a file over 5,000,000 bytes.

Precision: the page computes in float64 from the float32 Q and K, the server from float64
ones, so the weights agree to 1e-7 in ordinary states (scaled, temperature 1) and within
7.1e-6 at the extremes (seed 0, unscaled, temperature 0.05, any d_k step and n); the
histograms and their standard deviations use the core's own float32 dot products and agree
exactly, bin for bin. Other behaviour: the page keeps its state in the URL, as the served
app does, so a copied link reopens the same view.
"""

from __future__ import annotations

from pathlib import Path

from app.page.kernel_data import D_MAX_DEFAULT, N_MAX_DEFAULT, build_export_data
from app.simulation.spec import SPEC, SimulationSpec

MAX_BYTES = 5_000_000
"""Largest file the export writes: learning platforms often cap uploads at 5 MB."""


class ExportTooLargeError(ValueError):
    """The page for the requested limits would weigh more than :data:`MAX_BYTES`."""


def render(
    n_max: int = N_MAX_DEFAULT,
    d_max: int = D_MAX_DEFAULT,
    seed: int = 0,
    *,
    spec: SimulationSpec = SPEC,
) -> str:
    """The exported page for these limits and seed, as HTML text, offering ``spec``'s
    ``offline`` controls (the app's unless given).

    Raises:
        ValueError: if a limit or the seed is out of range.
        ExportTooLargeError: if the page would weigh more than :data:`MAX_BYTES`.
    """
    # Imported here: the page pulls in the served app's views (and Panel through them),
    # which ``sdpa-sim`` does not need for serving.
    from app.export.page import render_html

    html = render_html(build_export_data(n_max, d_max, seed), spec)
    size = len(html.encode("utf-8"))
    if size > MAX_BYTES:
        raise ExportTooLargeError(
            f"the page would weigh {size / 1e6:.1f} MB, more than the {MAX_BYTES / 1e6:.0f} MB "
            f"limit: lower --n-max (now {n_max}) or --d-max (now {d_max})"
        )
    return html


def export_html(
    path: str | Path,
    *,
    n_max: int = N_MAX_DEFAULT,
    d_max: int = D_MAX_DEFAULT,
    seed: int = 0,
    spec: SimulationSpec = SPEC,
) -> int:
    """Write the exported page of ``spec``'s controls (:func:`render`) to ``path``; return
    its size in bytes.

    Raises:
        ValueError: if a limit or the seed is out of range.
        ExportTooLargeError: if the page would weigh more than :data:`MAX_BYTES`.
    """
    data = render(n_max, d_max, seed, spec=spec).encode("utf-8")
    Path(path).write_bytes(data)
    return len(data)


__all__ = ["MAX_BYTES", "ExportTooLargeError", "export_html", "render"]
