"""A landmark around a part of the page: assistive technology lists it and jumps to it.

Panel's layouts are plain ``div`` elements. The served page's Material UI Page puts its
content in a ``main`` element; the embedded page has no Page, so its content is wrapped in
one of these instead (axe-core's region and landmark-one-main rules).
"""

from __future__ import annotations

from typing import ClassVar

import param
from panel.custom import Child, JSComponent


class Landmark(JSComponent):
    """``object`` inside a ``main`` (or another landmark element ``tag``), named ``label``
    if given."""

    object = Child(doc="What the landmark holds.")
    tag = param.Selector(
        default="main",
        objects=["main", "section", "header", "footer", "aside", "nav"],
        doc="The landmark's element.",
    )
    label = param.String(default="", doc="The landmark's accessible name (none if empty).")

    _esm = """
export function render({ model }) {
  const landmark = document.createElement(model.tag)
  landmark.className = 'landmark'
  if (model.label) landmark.setAttribute('aria-label', model.label)
  landmark.append(model.get_child('object'))
  return landmark
}
"""

    _stylesheets: ClassVar[list[str]] = [".landmark { display: block; width: 100%; }"]
