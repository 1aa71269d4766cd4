/*
 * The heatmap's plotting frame, kept square on both pages: a score matrix's cells are
 * square, and a causal mask's edge is a diagonal.
 *
 * app/page/views/heatmap.py gives the figure a square frame (frame_width = frame_height) and
 * lets the axes, the colour bar and the save button take what they need around it. This
 * sizes the side to the room the page has: the heatmap's column's width, and the screen's
 * height below where the heatmap starts, less the raw histogram when it sits under the
 * heatmap (a phone, a small frame): the heatmap and the raw histogram then share the
 * first screen. It sizes again when the column or the window changes size, and when
 * BokehJS has laid the figure out anew with other room around the frame (the colour bar's
 * labels, the overflow legend).
 *
 * `frame` (app.page.figures.figures_config's heatmap.frame): `min_side`, the smallest side
 * the screen's height may ask for; `screen_fraction`, how far down the screen the heatmap
 * is taken to start at most.
 */

/** What a frame's side may grow by without a change of room: less, and a layout's own
 * rounding could make the side go back and forth. */
const GROWTH_PX = 2;

/** Px kept free right of the figure and below the raw histogram. */
const SLACK_PX = 2;

/** The element that holds `node` in the page, across shadow roots. */
function parentOf(node) {
  if (node.parentElement) return node.parentElement;
  const root = node.getRootNode();
  return root instanceof ShadowRoot ? root.host : null;
}

/** How far `element`'s page is scrolled down above it: each scrolling container's offset
 * (the served page scrolls a container of its own) and the document's. */
function scrolledAbove(element) {
  let offset = document.scrollingElement?.scrollTop ?? 0;
  for (let node = parentOf(element); node; node = parentOf(node)) {
    if (node !== document.scrollingElement) offset += node.scrollTop;
  }
  return offset;
}

/** Whether BokehJS is still building the views of renderers or annotations just added to
 * `figure` (the overflow legend is added to it while a weight overflows). */
function building(figure, view) {
  const { above, below, left, right, center, renderers } = figure;
  const parts = [...above, ...below, ...left, ...right, ...center, ...renderers];
  return parts.some((part) => !view.renderer_views.has(part));
}

/**
 * The side of a square frame that fits: `room` holds the column's width, the screen's
 * height, where the figure starts on the (unscrolled) page, what goes under it and the
 * figure's extents around its frame. A pure function (tests/js/heatmap_frame.test.mjs).
 */
function frameSide(room, frame) {
  const byWidth = room.width - room.aroundWidth - SLACK_PX;
  const top = Math.min(room.top, frame.screen_fraction * room.height);
  const byHeight = room.height - top - room.below - room.aroundHeight - SLACK_PX;
  const side = Math.min(byWidth, Math.max(byHeight, frame.min_side));
  return Math.max(1, Math.floor(side));
}

/**
 * Keep `figure`'s frame square and sized to its room, now and whenever that changes.
 * `boxes`: `heatmap`, the element the heatmap's column is (its width is the room's);
 * `histograms`, the histograms' element; `rawHistogram`, the raw histogram figure's
 * element (first in it), whose height counts when the histograms sit under the heatmap.
 * `figureView()` returns the heatmap figure's view. Returns a function that stops.
 */
function keepSquare(figure, figureView, boxes, frame) {
  let scheduled = null;
  /** Whether the room may have changed (a resize), not only BokehJS's layout. */
  let resized = true;

  function fit() {
    scheduled = null;
    const { inner_width: innerWidth, inner_height: innerHeight } = figure;
    const { outer_width: outerWidth, outer_height: outerHeight } = figure;
    const view = figureView();
    const width = boxes.heatmap.clientWidth;
    if (!(outerWidth > 0) || !(innerWidth > 0) || !view || !(width > 0)) return;
    if (building(figure, view)) {
      // A new frame size lays the figure out at once, and a layout before the views of
      // what was just added exist fails ("cannot find a view"): BokehJS lays it out once
      // they do, and this looks again then.
      schedule(false);
      return;
    }
    const element = view.el;
    const placed = element.getBoundingClientRect();
    const heatmap = boxes.heatmap.getBoundingClientRect();
    const histograms = boxes.histograms.getBoundingClientRect();
    // Under the heatmap (one column of plots): the raw histogram shares the screen.
    const under = histograms.top > heatmap.top + 1 && histograms.height > 0;
    const raw = boxes.rawHistogram()?.getBoundingClientRect();
    const below = under ? histograms.top - placed.bottom + (raw?.height ?? 0) : 0;
    const side = frameSide(
      {
        width,
        height: window.innerHeight,
        top: placed.top + scrolledAbove(element),
        below: Math.max(0, below),
        aroundWidth: outerWidth - innerWidth,
        aroundHeight: outerHeight - innerHeight,
      },
      frame,
    );
    const current = figure.frame_width;
    const grows = side - current;
    const byLayoutOnly = !resized;
    resized = false;
    if (side === current && figure.frame_height === side) return;
    // A layout of its own may shrink the frame (the room around it grew) but not grow it
    // by a rounding.
    if (byLayoutOnly && grows > 0 && grows < GROWTH_PX) return;
    figure.setv({ frame_width: side, frame_height: side });
  }

  function schedule(resize) {
    resized ||= resize;
    scheduled ??= globalThis.requestAnimationFrame(fit);
  }

  const onResize = () => schedule(true);
  const observer = new ResizeObserver(onResize);
  observer.observe(boxes.heatmap);
  window.addEventListener("resize", onResize);
  const laidOut = () => schedule(false);
  const sizes = ["inner_width", "inner_height", "outer_width", "outer_height"];
  const signals = sizes.map((name) => figure.properties[name].change);
  for (const signal of signals) signal.connect(laidOut);
  fit();
  return () => {
    observer.disconnect();
    window.removeEventListener("resize", onResize);
    for (const signal of signals) signal.disconnect(laidOut);
    if (scheduled != null) globalThis.cancelAnimationFrame(scheduled);
  };
}

export { frameSide, keepSquare };
