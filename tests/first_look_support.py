"""Issue 49, what a student sees first, checked alike on the served page (tests/browser) and
the offline file (tests/export): the heatmap's square cells, the lesson under its button,
the heatmap's one toolbar button, and the pages' heads.

The tests import it as a top-level module (pytest puts ``tests/`` on the path).
"""

from __future__ import annotations

from html.parser import HTMLParser
from typing import Any

from app.page.head import HEAD

SIZES = {
    "1280": ({"width": 1280, "height": 800}, ""),
    "embedded-800x600": ({"width": 800, "height": 600}, "?embed=true"),
    "400": ({"width": 400, "height": 800}, ""),
}
"""Where a student sees the page: a laptop, an 800×600 iframe on a course page, a phone."""

SCHEMES = ("light", "dark")

FIND_JS = """
  const documents = [...Bokeh.documents];
  for (const view of Bokeh.index) {
    const doc = view.model.document;
    if (doc && !documents.includes(doc)) documents.push(doc);
  }
  const named = (name) => {
    for (const doc of documents) {
      const model = doc.get_model_by_name(name);
      if (model) return model;
    }
    return null;
  };
  const rect = (element) => {
    const box = element.getBoundingClientRect();
    return {left: box.left, top: box.top, right: box.right, bottom: box.bottom,
            width: box.width, height: box.height};
  };
  // Every element under root, across shadow roots.
  const deep = (root, out = []) => {
    for (const element of root.querySelectorAll('*')) {
      out.push(element);
      if (element.shadowRoot) deep(element.shadowRoot, out);
    }
    return out;
  };
"""
"""JavaScript for both pages: the model of a name in any Bokeh document on the page, an
element's box, and every element under a root across shadow roots."""

HEATMAP_JS = f"""() => {{
  {FIND_JS}
  const figure = named('heatmap');
  const view = Bokeh.index.find_one(figure);
  const box = view.el.getBoundingClientRect();
  const frame = view.frame.bbox;
  const inside = deep(view.el.shadowRoot);
  const toolbar = inside.find((element) => element.classList.contains('bk-Toolbar'));
  const title = named('heatmap_title');
  const raw = Bokeh.index.find_one(named('raw_histogram'));
  const image = figure.renderers.find((renderer) => renderer.name === 'heatmap_image');
  return {{
    figure: rect(view.el),
    frame: {{left: box.left + frame.left, top: box.top + frame.top,
             right: box.left + frame.right, bottom: box.top + frame.bottom,
             width: frame.width, height: frame.height}},
    title: rect(Bokeh.index.find_one(title).el),
    raw: rect(raw.el),
    n: image.data_source.data.dw[0],
    xRange: [figure.x_range.start, figure.x_range.end],
    yRange: [figure.y_range.start, figure.y_range.end],
    toolbar: toolbar ? rect(toolbar) : null,
    location: figure.toolbar_location,
    logo: figure.toolbar.logo,
    buttons: figure.toolbar.tools.filter((tool) => tool.visible).map((tool) => tool.type),
    // What Tab reaches in the toolbar: its buttons.
    tabStops: toolbar
      ? [toolbar, ...deep(toolbar.shadowRoot ?? toolbar)].filter((element) =>
          element.tabIndex >= 0 && element.getClientRects().length > 0)
          .map((element) => element.getAttribute('title'))
      : [],
    viewport: {{width: innerWidth, height: innerHeight}},
    scrollWidth: document.documentElement.scrollWidth,
  }};
}}"""
"""Where the heatmap figure, its plotting frame, its title above it, its toolbar and the raw
histogram are, what the heatmap shows (n, ranges), and the toolbar's buttons and Tab stops."""

SETTLED_JS = f"""(previous) => {{
  {FIND_JS}
  const view = Bokeh.index.find_one(named('heatmap'));
  const frame = view.frame.bbox;
  const now = [frame.width, frame.height, view.el.getBoundingClientRect().top].join();
  window.__sdpaFrameSeen = window.__sdpaFrameSeen || [];
  window.__sdpaFrameSeen.push(now);
  const seen = window.__sdpaFrameSeen;
  // The same size on five polls in a row (100 ms apart): sized to its room.
  return seen.length >= 5 && seen.slice(-5).every((one) => one === now);
}}"""
"""True once the heatmap's frame has kept its size (and place) for five polls: the page has
sized it to its room (heatmap_frame.js sizes it after a layout or a resize)."""


def wait_settled(page: Any) -> None:
    """Wait until the heatmap's frame has its size for the page's room."""
    page.evaluate("() => { window.__sdpaFrameSeen = []; }")
    page.wait_for_function(SETTLED_JS, arg=None, polling=100)


def heatmap(page: Any) -> dict[str, Any]:
    """What :data:`HEATMAP_JS` measures, once the frame is settled."""
    wait_settled(page)
    return page.evaluate(HEATMAP_JS)


def assert_square_and_in_view(shown: dict[str, Any], size: str, first_screen: bool) -> None:
    """The heatmap's plotting frame is square and shows the whole n×n matrix (so its cells
    are square), the figure fits the window's width and height, and, ``first_screen``, the
    heatmap and the raw histogram are both in the first screen."""
    frame, figure, viewport = shown["frame"], shown["figure"], shown["viewport"]
    n = shown["n"]
    assert abs(frame["width"] - frame["height"]) <= 1, f"{size}: frame {frame} not square"
    assert shown["xRange"] == [0, n] and shown["yRange"] == [n, 0], shown
    assert frame["width"] >= min(150, viewport["width"] / 3), f"{size}: frame {frame} squeezed"
    assert figure["left"] >= -1 and figure["right"] <= viewport["width"] + 1, (size, figure)
    assert figure["height"] <= viewport["height"], f"{size}: figure taller than the screen"
    assert shown["scrollWidth"] <= viewport["width"], f"{size}: the page scrolls sideways"
    if first_screen:
        for part in ("figure", "raw"):
            box = shown[part]
            assert box["top"] >= 0 and box["bottom"] <= viewport["height"] + 1, (size, part, box)


def assert_one_save_button(shown: dict[str, Any], size: str) -> None:
    """The heatmap's toolbar holds the save button alone, no logo, beside the figure (not in
    a row above it, over the title), one Tab stop."""
    assert shown["buttons"] == ["SaveTool"], shown["buttons"]
    assert shown["logo"] is None
    assert shown["location"] == "right"
    assert shown["tabStops"] == ["Save"], f"{size}: {shown['tabStops']}"
    toolbar, title, frame = shown["toolbar"], shown["title"], shown["frame"]
    assert toolbar is not None
    assert toolbar["top"] >= title["bottom"] - 1, f"{size}: toolbar {toolbar} over {title}"
    assert toolbar["left"] >= frame["right"], f"{size}: toolbar {toolbar} over the matrix"
    assert toolbar["right"] <= shown["viewport"]["width"] + 1, f"{size}: toolbar cut off"


HEAD_JS = """() => ({
  title: document.title,
  description: document.querySelector('meta[name="description"]')?.content ?? null,
  viewport: document.querySelector('meta[name="viewport"]')?.content ?? null,
  icon: document.querySelector('link[rel~="icon"]')?.getAttribute('href') ?? null,
})"""
"""What the page's head says: its title, description and viewport, and its icon's address."""


def assert_head(page: Any) -> dict[str, Any]:
    """The page's title, description and viewport are app/page/head.py's."""
    head = page.evaluate(HEAD_JS)
    assert head["title"] == HEAD.title
    assert head["description"] == HEAD.description
    assert head["viewport"] == HEAD.viewport
    return head


LESSON_GAP_JS = f"""() => {{
  {FIND_JS}
  const elements = deep(document);
  const one = (selector) => elements.find((element) => element.matches(selector));
  const intro = one('.sdpa-intro');
  // The lesson's first section: its markup or its component's first element shown.
  const lesson = one('.sdpa-lesson');
  const sections = deep(lesson).filter((element) => element.matches('.sdpa-section')
    && element.getClientRects().length > 0);
  const panel = one('.sdpa-sidebar, .sdpa-control-panel');
  return {{intro: rect(intro), first: rect(sections[0]), panel: rect(panel),
           viewport: {{width: innerWidth, height: innerHeight}}}};
}}"""
"""Where the paragraph under the plots, the lesson's first section and the controls' card
are."""


def assert_lesson_follows(shown: dict[str, Any]) -> None:
    """The lesson starts under the paragraph below the plots (and its button), not below the
    controls' card: no empty band between them."""
    gap = shown["first"]["top"] - shown["intro"]["bottom"]
    assert 0 <= gap <= 80, f"the lesson starts {gap:.0f} px below the text above it: {shown}"


class HeadParser(HTMLParser):
    """The title, the named meta tags and the links of an HTML page's head."""

    def __init__(self) -> None:
        super().__init__()
        self.meta: dict[str, str] = {}
        self.links: list[dict[str, str | None]] = []
        self.title = ""
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "meta" and values.get("name"):
            self.meta[values["name"] or ""] = values.get("content") or ""
        if tag == "link":
            self.links.append(values)
        self._in_title = tag == "title"

    def handle_endtag(self, tag: str) -> None:
        self._in_title = False

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data


def parse_head(html: str) -> HeadParser:
    """The head of the HTML page ``html`` (up to its ``</head>``)."""
    parser = HeadParser()
    parser.feed(html[: html.index("</head>")])
    return parser


def assert_head_markup(html: str) -> HeadParser:
    """The page's HTML says app/page/head.py's title, description and viewport."""
    head = parse_head(html)
    assert head.title == HEAD.title
    assert head.meta["description"] == HEAD.description
    assert head.meta["viewport"] == HEAD.viewport
    return head
