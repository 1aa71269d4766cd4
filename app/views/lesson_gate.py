"""The lesson's door: a button at the foot of the first screen that opens the lesson below.

The lesson holds about two thirds of a page's models and costs about as much server time to
build as the first screen. A class arriving together should not pay it for every student
before anyone has read a word, so a session builds it only when the student reaches it:
when the student scrolls and the gate is near the viewport, or presses the button (keyboard
included).
"""

from __future__ import annotations

import param
from panel.custom import JSComponent

GATE_LABEL = "Why the scale matters: collapse curves, one query, the worked example and a quiz"
"""The button's text and accessible name."""

OPENING_TEXT = "Loading the lesson…"
"""What the button says between the student's request and the lesson's arrival."""

# The dark theme's colours come from app/views/system_theme.py (--sdpa-*).
GATE_CSS = """
button {
  width: 100%;
  padding: 12px 16px;
  font: inherit;
  font-size: 16px;
  font-weight: 500;
  text-align: left;
  color: var(--sdpa-accent-text, #1565c0);
  background: var(--sdpa-accent-background, #e3f2fd);
  border: 1px solid var(--sdpa-accent-border, #90caf9);
  border-radius: 6px;
  cursor: pointer;
}
button:hover { background: var(--sdpa-accent-hover, #bbdefb); }
button:focus-visible { outline: 3px solid var(--sdpa-accent-text, #1565c0); outline-offset: 2px; }
button[disabled] { cursor: progress; color: var(--sdpa-muted-text, #37474f); }
"""


class LessonGate(JSComponent):
    """A button that asks the server for the lesson, pressed or scrolled near.

    Give it ``stylesheets=[GATE_CSS]`` for its look.

    ``opened`` flows from the page to the server, once; the server builds the lesson and
    hides the gate. ``margin_px`` is how far below the viewport the gate may still be when
    the lesson is requested, so it is usually there by the time the student scrolls to it.
    """

    opened = param.Boolean(default=False, doc="Whether the student has asked for the lesson.")
    label = param.String(default=GATE_LABEL, doc="The button's text and accessible name.")
    margin_px = param.Integer(
        default=300, bounds=(0, 2000), doc="How far below the viewport the gate opens the lesson."
    )

    _esm = f"""
export function render({{ model }}) {{
  const button = document.createElement('button')
  button.type = 'button'
  button.className = 'lesson-gate'
  button.textContent = model.label + ' ▾'
  // Opened by a press, or once the student scrolls and the gate is near: a gate that
  // happens to sit in a tall first screen does not cost every arriving student the lesson.
  let observer = null
  let near = false
  let scrolled = false
  const SCROLL_EVENTS = ['scroll', 'wheel', 'touchmove']
  const onScroll = () => {{
    scrolled = true
    if (near) open()
  }}
  const onKey = (event) => {{
    if (['PageDown', 'End'].includes(event.key)) onScroll()
  }}
  const open = () => {{
    if (model.opened) return
    button.disabled = true
    button.textContent = {OPENING_TEXT!r}
    model.opened = true
    if (observer) observer.disconnect()
    for (const type of SCROLL_EVENTS) window.removeEventListener(type, onScroll)
    window.removeEventListener('keydown', onKey)
  }}
  button.addEventListener('click', open)
  // What a student does to scroll: the template scrolls an inner container in a shadow
  // root, whose scroll events do not reach the window, so listen for their causes.
  for (const type of SCROLL_EVENTS) window.addEventListener(type, onScroll, {{ passive: true }})
  window.addEventListener('keydown', onKey)
  if ('IntersectionObserver' in window) {{
    observer = new IntersectionObserver((entries) => {{
      // Near, or already scrolled past (a fast scroll can jump over it).
      near = entries.some((e) => e.isIntersecting || e.boundingClientRect.bottom < 0)
      if (near && scrolled) open()
    }}, {{ rootMargin: `0px 0px ${{model.margin_px}}px 0px` }})
    observer.observe(button)
  }}
  return button
}}
"""
