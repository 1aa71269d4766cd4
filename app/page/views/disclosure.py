"""The look of a button that opens a section in place: "More controls", a lesson section's title."""

from __future__ import annotations

DISCLOSURE_CSS = """
:host { box-sizing: border-box; padding: 2px 10px 4px; }
button {
  box-sizing: border-box;
  width: 100%;
  padding: 4px 10px;
  font: inherit;
  font-size: 14px;
  font-weight: 500;
  text-align: left;
  color: var(--sdpa-accent-text, #1565c0);
  background: transparent;
  border: 1px solid var(--sdpa-accent-border, #90caf9);
  border-radius: 6px;
  cursor: pointer;
}
button:hover { background: var(--sdpa-accent-hover, #e3f2fd); }
button:focus-visible { outline: 3px solid var(--sdpa-accent-text, #1565c0); outline-offset: 2px; }
"""
"""The button's look; the dark theme's colours come from app/page/theme.py."""


def boxed_disclosure_css() -> str:
    """:data:`DISCLOSURE_CSS` for a plain button in a ``.sdpa-disclosure`` box (not a
    component's shadow root): "More controls" on both pages, a lesson section's title on
    the offline page."""
    return DISCLOSURE_CSS.replace(":host", ".sdpa-disclosure").replace(
        "button", ".sdpa-disclosure > button"
    )
