"""Responsive page layouts from Panel's own flex boxes, styled with CSS.

They replace nested Material UI grids: each of those is a React component that walks every
model below it when the page is built and re-lays the page out when it mounts, which made
the first render of a session several hundred milliseconds slower. These are plain Bokeh
layout models, and the browser's own flex and grid layout does the wrapping.
"""

from __future__ import annotations

from collections.abc import Sequence

import panel as pn

GRID_CSS = """
:host {{
  display: grid !important;
  grid-template-columns: repeat(auto-fill, minmax(min({min_width}px, 100%), 1fr));
  gap: {gap}px;
}}
div {{ min-width: 0; }}
"""
"""A grid's items may shrink below their content's width: a row of buttons then never
widens its column past the page's edge."""


def side_by_side(
    items: Sequence[pn.viewable.Viewable],
    basis: Sequence[int],
    *,
    grow: Sequence[int] | None = None,
    gap: int = 8,
) -> pn.FlexBox:
    """``items`` in a row, each at least ``basis`` px wide; below that they wrap to new lines.

    ``grow`` shares out the room left over (one share each if not given), so a plot and
    its neighbours keep their proportions as the row widens.
    """
    grow = grow or [1] * len(items)
    for item, width, share in zip(items, basis, grow, strict=True):
        item.styles = {**item.styles, "flex": f"{share} 1 {width}px", "min-width": "0"}
    return pn.FlexBox(
        *items,
        flex_wrap="wrap",
        gap=f"{gap}px",
        sizing_mode="stretch_width",
    )


def grid(items: Sequence[pn.viewable.Viewable], *, min_width: int, gap: int = 8) -> pn.Column:
    """``items`` in as many equal columns of at least ``min_width`` px as fit, row by row."""
    return pn.Column(
        *items,
        sizing_mode="stretch_width",
        stylesheets=[GRID_CSS.format(min_width=min_width, gap=gap)],
    )
