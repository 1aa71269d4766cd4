"""What the Material UI page needs for assistive technology.

A ``theme_config`` (panel-material-ui's public theming: Material UI's default props by
component) for the page whose markup would otherwise break an axe-core rule
(docs/accessibility.md).
"""

from __future__ import annotations

from typing import Any

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
