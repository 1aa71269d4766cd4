"""What Material UI widgets need to be named and outlined for assistive technology.

Each is a ``theme_config`` (panel-material-ui's public theming: Material UI's default props
by component) for the widgets whose markup would otherwise break an axe-core rule
(docs/accessibility.md).
"""

from __future__ import annotations

from typing import Any

STEPPER_THEME: dict[str, Any] = {
    "components": {
        # The −/+ buttons beside a number box repeat what its arrow keys do: out of the tab
        # order and hidden from assistive technology, as a native number input's spin
        # buttons are, rather than two more unnamed buttons per box.
        "MuiIconButton": {"defaultProps": {"tabIndex": -1, "aria-hidden": "true"}},
        # The info icon's tooltip describes its (empty) anchor instead of labelling it: an
        # aria-label is not allowed on a plain span.
        "MuiTooltip": {"defaultProps": {"describeChild": True}},
    }
}
"""For Material UI's number boxes (IntInput)."""

PAGE_HEADINGS_THEME: dict[str, Any] = {
    "components": {
        "MuiTypography": {
            # The header's title (variant h3) is the page's one h1; the empty h5 Material
            # UI puts under the fixed header to push the content down is no heading.
            "defaultProps": {"variantMapping": {"h3": "h1", "h5": "div"}},
        }
    }
}
"""For the served page (panel-material-ui's Page) and everything in it."""
