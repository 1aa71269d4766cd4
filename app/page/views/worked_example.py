"""The lesson's 2×2 worked example, every step as numbers from sdpa_core."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

import sdpa_core

Q = ((1.0, 1.0), (0.0, 2.0))
K = ((1.0, 0.0), (0.0, 1.0))
V = ((10.0, 0.0), (0.0, 10.0))
"""The lesson's queries, keys (the identity) and values (10 times the identity)."""

HEADING = "### Worked example: softmax(Q Kᵀ / √d_k) V by hand"
"""The section's heading (Markdown), above :data:`app.page.lesson_text.WORKED_EXAMPLE`."""

SWITCH_LABEL = "show the steps unscaled (no ÷√d_k)"
"""The switch between the scaled and the unscaled steps."""

WORKED_CSS = """
.worked { display: flex; flex-wrap: wrap; gap: 10px; align-items: stretch; margin: 0; }
.step { border: 1px solid rgba(127,127,127,0.35); border-radius: 8px; padding: 6px 10px;
        flex: 0 1 auto; max-width: 230px; }
.step.skipped { opacity: 0.6; border-style: dashed; }
.step h4 { margin: 0 0 2px; font-size: 13px; font-weight: 600; }
.step .note { margin: 0 0 6px; font-size: 12px; opacity: 0.85; }
.matrices { display: flex; gap: 12px; }
table.matrix { border-collapse: collapse; font-variant-numeric: tabular-nums;
               border-left: 2px solid currentColor; border-right: 2px solid currentColor; }
table.matrix caption { font-size: 12px; font-style: italic; padding-bottom: 2px; }
table.matrix td { padding: 2px 8px; text-align: right; font-size: 15px; }
.worked-result { margin: 8px 2px 0; font-size: 14px; }
"""


@dataclass(frozen=True)
class WorkedExample:
    """Every intermediate matrix of ``softmax(Q Kᵀ · scale) V`` for the lesson's case."""

    scaled: bool
    d_k: int
    divisor: float
    scores: np.ndarray
    logits: np.ndarray
    weights: np.ndarray
    output: np.ndarray


def worked_example(scaled: bool) -> WorkedExample:
    """The lesson's example computed by sdpa_core, divided by √d_k = √2 or (unscaled) not."""
    scale = None if scaled else 1.0
    d_k = len(Q[0])
    output, weights = sdpa_core.attention(Q, K, V, scale=scale)
    return WorkedExample(
        scaled=scaled,
        d_k=d_k,
        divisor=math.sqrt(d_k) if scaled else 1.0,
        scores=sdpa_core.scores_logits(Q, K, scale=1.0),
        logits=sdpa_core.scores_logits(Q, K, scale=scale),
        weights=weights,
        output=output,
    )


def format_number(value: float) -> str:
    """A number rounded to 3 decimals without trailing zeros: 5, 0.707, 1.956."""
    text = f"{value + 0.0:.3f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def matrix_table(name: str, matrix: np.ndarray) -> str:
    """A matrix as an HTML table of numbers, captioned with its (fixed, trusted) name."""
    rows = "".join(
        "<tr>" + "".join(f"<td>{format_number(value)}</td>" for value in row) + "</tr>"
        for row in np.asarray(matrix)
    )
    return f'<table class="matrix"><caption>{name}</caption>{rows}</table>'


def _step(heading: str, note: str, tables: str, *, test_id: str, skipped: bool = False) -> str:
    css = "step skipped" if skipped else "step"
    return (
        f'<div class="{css}" data-testid="{test_id}"><h4>{heading}</h4>'
        f'<p class="note">{note}</p><div class="matrices">{tables}</div></div>'
    )


def worked_example_html(example: WorkedExample, other: WorkedExample) -> str:
    """The steps of ``example`` as HTML, ending with a sentence comparing it with ``other``.

    Only numbers and fixed text go in: there is no user input to escape.
    """
    root = format_number(example.divisor) if example.scaled else ""
    if example.scaled:
        scale_step = _step(
            "2. Divide by √d_k",
            f"d_k = {example.d_k}, so divide every score by √{example.d_k} ≈ {root}.",
            matrix_table(f"S / √{example.d_k}", example.logits),
            test_id="worked-scale",
        )
    else:
        scale_step = _step(
            "2. Skip the scale",
            "Unscaled: the scores go into the softmax as they are.",
            matrix_table("S", example.logits),
            test_id="worked-scale",
            skipped=True,
        )
    steps = [
        _step(
            "Given",
            "Two queries, two keys, two values.",
            matrix_table("Q", np.asarray(Q))
            + matrix_table("K", np.asarray(K))
            + matrix_table("V", np.asarray(V)),
            test_id="worked-given",
        ),
        _step(
            "1. Scores",
            "Each query dotted with each key.",
            matrix_table("S = Q Kᵀ", example.scores),
            test_id="worked-scores",
        ),
        scale_step,
        _step(
            "3. Softmax",
            "Row by row: each row sums to 1.",
            matrix_table("A = softmax", example.weights),
            test_id="worked-weights",
        ),
        _step(
            "4. Output",
            "Weights times values.",
            matrix_table("O = A V", example.output),
            test_id="worked-output",
        ),
    ]
    return (
        f'<div class="worked">{"".join(steps)}</div>'
        f'<p class="worked-result" data-testid="worked-result">{_result(example, other)}</p>'
    )


def _result(example: WorkedExample, other: WorkedExample) -> str:
    row = ", ".join(format_number(value) for value in example.output[1])
    other_row = ", ".join(format_number(value) for value in other.output[1])
    if example.scaled:
        return (
            f"Query 1 scores both keys equally, so it averages the values: "
            f"[{', '.join(format_number(v) for v in example.output[0])}]. Query 2 prefers "
            f"key 2 but still takes some of value 1: [{row}]. Unscaled it would be "
            f"[{other_row}]."
        )
    scores = ", ".join(format_number(value) for value in example.logits[1])
    other_scores = ", ".join(format_number(value) for value in other.logits[1])
    return (
        f"Unscaled, query 2's output is [{row}] instead of [{other_row}]: the softmax sees "
        f"its scores [{scores}] instead of [{other_scores}], a wider gap, so it is sharper. "
        f"At d_k = 2 the difference is small; at d_k = 1024 the rows turn one-hot."
    )
