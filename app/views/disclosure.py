"""A "More controls" button that opens a section in place, built only when first opened."""

from __future__ import annotations

import param
from panel.custom import JSComponent

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
"""The button's look; the dark theme's colours come from app/views/system_theme.py."""


def boxed_disclosure_css() -> str:
    """:data:`DISCLOSURE_CSS` for a plain button in a ``.sdpa-disclosure`` box (not a
    component's shadow root): "More controls" on both pages, a lesson section's title on
    the offline page."""
    return DISCLOSURE_CSS.replace(":host", ".sdpa-disclosure").replace(
        "button", ".sdpa-disclosure > button"
    )


class Disclosure(JSComponent):
    """A button that opens and closes a section below it (``aria-expanded`` says which).

    ``opened`` flows both ways: a press in the page toggles it, the server shows or hides
    the section. With ``open_if_wider_than`` > 0 the page opens it by itself when its
    window is at least that wide as it renders, so a wide page shows everything at once and
    a narrow one (a course page's iframe, a phone) shows the experiment first. Give it
    ``stylesheets=[DISCLOSURE_CSS]`` for its look.
    """

    opened = param.Boolean(default=False, doc="Whether the section below is open.")
    label = param.String(default="More controls", doc="The button's text and accessible name.")
    open_if_wider_than = param.Integer(
        default=0,
        bounds=(0, None),
        doc="Window width in px from which the page opens the section as it renders (0: never).",
    )

    _esm = """
export function render({ model }) {
  const button = document.createElement('button')
  button.type = 'button'
  button.className = 'disclosure'
  const show = () => {
    button.textContent = `${model.label} ${model.opened ? '▴' : '▾'}`
    button.setAttribute('aria-expanded', String(model.opened))
  }
  button.addEventListener('click', () => { model.opened = !model.opened })
  model.on('opened', show)
  show()
  if (!model.opened && model.open_if_wider_than > 0 &&
      window.innerWidth >= model.open_if_wider_than) {
    model.opened = true
  }
  return button
}
"""
