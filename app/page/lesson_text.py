"""Short explanations placed beside the views, as Markdown constants.

They answer the simulation page's FAQ (what the scale does, what temperature does, why the
histogram is drawn against Normal(0, d_k), why d_k is one number per layer) and introduce
the collapse curves, the worked example and the quiz. Plain text only: no user input is
ever formatted into them.
"""

from __future__ import annotations

SCALE = (
    "**What removing the scale does.** Without the 1/√d_k factor the scores q·k keep their "
    "natural spread, a standard deviation of √d_k (32 at d_k = 1024). The softmax "
    "exponentiates them, so the largest score in a row takes almost all the weight: the "
    "row turns one-hot and attention copies a single value. A one-hot softmax also passes "
    "back almost no gradient, which is how an unscaled transformer can stall early in "
    "training. Switch **scale by 1/√d_k** off at a large d_k and watch the rows collapse."
)
"""Beside the heatmap: what happens when the 1/√d_k scale is switched off."""

TEMPERATURE = (
    "**What temperature does.** The simulation divides the logits by a temperature T as "
    "well: higher T makes every row more uniform (flatter), lower T makes it sharper, "
    "pushing weight onto the largest score. T = 1 is standard attention. Dividing by √d_k "
    "is itself a temperature chosen so the scores have spread 1 whatever d_k is; a fixed T "
    "cannot do that, because the spread it would have to undo grows with d_k."
)
"""Beside the temperature control or the heatmap: higher is flatter, lower is sharper."""

HISTOGRAM = (
    "**Why the histogram is drawn against Normal(0, d_k).** For random queries and keys "
    "with unit-variance entries, q·k is a sum of d_k independent products of variance 1, "
    "so it is close to Normal(0, d_k). The bars following that curve show that the growth "
    "of the scores is not an accident of one draw: their standard deviation is √d_k. "
    "Dividing by exactly that number puts every d_k on the same Normal(0, 1), the right panel."
)
"""Beside the dot-product histograms: the theory the bars are checked against."""

SAME_D_K = (
    "**Why d_k is the same for every query of a layer.** d_k is the width of the layer's "
    "query and key projections, so every query and every key in it has exactly d_k "
    "entries; a dot product needs both vectors to have the same length. One scale "
    "1/√d_k therefore serves the whole layer. Different models or layers may choose a "
    "different d_k (often the model width divided by the number of heads, such as 64)."
)
"""Beside d_k: it is fixed by the layer's projections, so one scale fits all its queries."""

COLLAPSE_CURVES = (
    "Each point averages 32 random draws of 32 queries and 32 keys; the shaded bands hold "
    "the middle 80 % of draws. Unscaled (orange), the entropy falls towards 0, the largest "
    "weight rises towards 1 and the gradient through the softmax fades as d_k grows; "
    "scaled (blue), all three stay flat. The ring marks the current d_k on the curve of "
    "the current scale switch, at the current temperature."
)
"""Above the collapse curves: what the three panels show and how to read the marker."""

WORKED_EXAMPLE = (
    "The lesson's small case, step by step, with d_k = 2: two queries, two keys and two "
    "values. Every number comes from the simulation's own attention code. Switch the scale "
    "off to see the same steps without dividing by √2 and compare the last matrix."
)
"""Above the worked example: what the steps are and what the switch does."""

QUIZ = (
    "Check what you have learned. Each answer gets immediate feedback and a short "
    "explanation; try again as often as you like."
)
"""Above the quiz: an invitation to answer."""


FAQ = (SCALE, TEMPERATURE, HISTOGRAM, SAME_D_K)
"""The answers beside the plots, in reading order."""
