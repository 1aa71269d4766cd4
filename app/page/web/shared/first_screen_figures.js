/*
 * The first screen's figures: the heatmap, the two histograms and the readouts, drawn
 * from frames of numbers.
 *
 * One drawing code for both pages: the offline file's offline/page.js (ExportPage) and the
 * served page's component (app/served/components/figures.py) hand it the Bokeh models of the
 * figures app/page/figures.py builds, and the numbers their source delivered
 * (kernel_source.js describes frames). It never computes a number; the words come from
 * text.js's templates, filled with the frames' numbers.
 *
 * `config` holds what app.page.figures.figures_config gives: `parts` (the model parts'
 * names), `heatmap` (columns, titles, palettes), `histogram.headroom`, `texts` (the
 * readouts' and histograms' templates) and the verdict's thresholds.
 */
import { bokehImage } from "./bokeh_image.js";
import * as T from "./text.js";

/**
 * Run `task` once the next animation frame is on screen: a message posted from the
 * frame's callbacks runs after the browser has painted that frame.
 */
function afterFrame(task) {
  globalThis.requestAnimationFrame(() => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => task();
    channel.port2.postMessage(null);
  });
}

/** Run `task` when the page is idle, or after `timeout` ms at the latest. */
function onIdle(task, timeout) {
  if (typeof globalThis.requestIdleCallback === "function") {
    globalThis.requestIdleCallback(task, { timeout });
  } else {
    globalThis.setTimeout(task, 0);
  }
}

/** A flat row-major array as the n×columns image a Bokeh image glyph draws
 * (bokeh_image.js). */
function ndarray(values, n, columns = n) {
  return bokehImage(values, n, columns);
}

/**
 * The numbers a page last received, by part: each part from the newest frame that
 * carries it, with the state it is of; an older frame never replaces a newer one.
 */
class FrameStore {
  constructor() {
    /** By part: the numbers last kept, the state they are of, the frame they came in. */
    this.numbers = {};
    this.numberStates = {};
    this.numberSequences = {};
  }

  /** Keep what `frame` brings that is newer than what is kept; return those parts. */
  take(frame) {
    const fresh = frame.parts.filter((part) => !(this.numberSequences[part] >= frame.sequence));
    for (const part of fresh) {
      this.numberSequences[part] = frame.sequence;
      this.numberStates[part] = frame.state;
      if (part in frame.numbers) {
        this.numbers[part] = frame.numbers[part];
      }
    }
    return fresh;
  }
}

class FirstScreenFigures {
  /**
   * `models`: the figures' Bokeh models by the names app/page/figures.py gives them;
   * `readouts`: the element the readout tiles are written into.
   */
  constructor(models, config, readouts) {
    this.models = models;
    this.config = config;
    this.readouts = readouts;
    this.part = config.parts;
    /** Whether the overflow layer shows an image (it then must be cleared). */
    this.overflowDrawn = false;
    /** The n the heatmap's ranges show the whole matrix of. */
    this.rangesN = null;
  }

  /** The parts this code draws: what a first screen's frame carries. */
  get parts() {
    const part = this.part;
    return [part.scores, part.weights, part.histograms, part.view];
  }

  /** The numbers the first screen shows, from `store` (a FrameStore). */
  shown(store) {
    const numbers = store.numbers;
    const { raw, scaled } = numbers[this.part.histograms];
    return { scores: numbers[this.part.scores], weights: numbers[this.part.weights], raw, scaled };
  }

  /**
   * Draw the heatmap and the readouts for `parts` (a Set), computed for `state`, from
   * the numbers `store` keeps; the histograms are drawHistograms', a frame later.
   */
  draw(parts, state, store) {
    const m = this.models;
    const part = this.part;
    const { n, d_k: d, view } = state;
    if (parts.has(part.scores) || parts.has(part.view)) {
      this.drawView(view, store);
    }
    // The glyph draws the "shown" column (see views.py): a view change is a data change,
    // the one change BokehJS always maps to new colours.
    if ([part.scores, part.weights, part.view].some((name) => parts.has(name))) {
      const { scores, weights } = this.shown(store);
      // Each image has the n of the state it was computed for: from a source that
      // answers out of order, the parts' states may differ for a frame.
      const scoresN = store.numberStates[part.scores].n;
      const images = {
        raw: [ndarray(scores.rawImage, scoresN)],
        scaled: [ndarray(scores.scaledImage, scoresN)],
        weight: [ndarray(weights.weightsImage, store.numberStates[part.weights].n)],
      };
      const heatmap = this.config.heatmap;
      m.source.data = {
        ...images,
        [heatmap.shown_column]: images[heatmap.columns[view]],
        x: [0],
        y: [0],
        dw: [n],
        dh: [n],
      };
    }
    if (parts.has(part.scores) && n !== this.rangesN) {
      // A zoom stays while the matrix keeps its size.
      this.rangesN = n;
      this.drawRanges(n);
    }
    if (parts.has(part.weights) || parts.has(part.view)) {
      this.drawOverflow(state, store);
    }
    if (parts.has(part.weights) || parts.has(part.histograms)) {
      const { raw, scaled, weights } = this.shown(store);
      // Markup built from numbers and the config's templates only (text.js), never from
      // the URL; the thresholds are the config's too (app.simulation.spec).
      const texts = this.config.texts.readouts;
      const law = T.lawOf(state);
      this.readouts.innerHTML = T.readoutsHtml(texts, d, raw, scaled, weights, this.config, law);
    }
  }

  /**
   * app.page.views.heatmap's overflow layer: overflowed weights in their own colour over the
   * weights view, with a legend (and the mask's entry when the mask is on).
   */
  drawOverflow(state, store) {
    const m = this.models;
    const { n, view } = state;
    const overflow = store.numbers[this.part.weights].overflowImage;
    if (overflow || this.overflowDrawn) {
      // None overflowed: one transparent cell (app.page.views.heatmap's _overflow_data).
      const image = overflow ? ndarray(overflow, n) : ndarray(new Float32Array([NaN]), 1);
      m.overflow_source.data = { overflow: [image], x: [0], y: [0], dw: [n], dh: [n] };
      this.overflowDrawn = Boolean(overflow);
    }
    const shown = Boolean(overflow) && view === "weights";
    m.overflow_renderer.visible = shown;
    this.showOverflowLegend(shown, state);
  }

  /**
   * The overflow legend and its keys are in the heatmap figure only while shown
   * (app/page/figures.py takes them out): BokehJS measures a legend's labels on every
   * paint, shown or not.
   */
  showOverflowLegend(shown, state) {
    const { heatmap, overflow_legend: legend, overflow_keys: keys } = this.models;
    legend.items[1].visible = Boolean(state.causal);
    if (heatmap.below.includes(legend) !== shown) {
      heatmap.below = shown
        ? [...heatmap.below, legend]
        : heatmap.below.filter((item) => item !== legend);
    }
    legend.visible = shown;
    for (const key of keys) {
      key.visible = shown;
    }
  }

  /**
   * Show the whole n×n matrix, query 0 at the top. The figure's ranges have bounds
   * "auto", which BokehJS fixes from the first n and clamps every later start and end
   * to: the bounds must move first, and the reset tool must return to the new view.
   */
  drawRanges(n) {
    const { x_range: x, y_range: y } = this.models.heatmap;
    for (const [range, start, end] of [
      [x, 0, n],
      [y, n, 0],
    ]) {
      range.setv({ bounds: [0, n] });
      range.setv({ start, end, reset_start: start, reset_end: end });
    }
  }

  /** app.page.views.heatmap's view (HeatmapView, colour_range): which image, title, colour bar and mapper range. */
  drawView(view, store) {
    const m = this.models;
    const heatmap = this.config.heatmap;
    m.heatmap_title.text = heatmap.titles[view];
    m.colour_bar.title = heatmap.colour_bar_titles[view];
    let colours = { palette: heatmap.weights_palette, low: 0.0, high: 1.0 };
    if (view !== "weights") {
      const { rawLimit, scaledLimit } = store.numbers[this.part.scores];
      const limit = Math.max(view === "raw" ? rawLimit : scaledLimit, 1e-9);
      colours = { palette: heatmap.scores_palette, low: -limit, high: limit };
    }
    m.mapper.setv(colours);
    m.colour_bar_mapper.setv(colours);
  }

  /** The dashed outline of query `row` on the heatmap of an n×n matrix. */
  drawOutline(n, row) {
    // Just outside the row (app.page.views.heatmap.row_outline): its cells stay in full view.
    const gap = this.config.heatmap.outline_gap;
    this.models.row_outline.data = {
      left: [0],
      right: [n],
      top: [row - gap],
      bottom: [row + 1 + gap],
    };
  }

  /** The raw and the scaled histogram: numbers, models and words by the same name. */
  drawHistograms(store) {
    const histograms = store.numbers[this.part.histograms];
    const state = store.numberStates[this.part.histograms];
    const texts = this.config.texts.histograms;
    const { raw, scaled } = histograms;
    const titles = T.histogramTitles(texts, state.d_k, raw, scaled, T.lawOf(state));
    for (const [which, words] of Object.entries(titles)) {
      this.drawHistogram(which, histograms[which], words.title, words.curve);
    }
  }

  /** A histogram as app.page.views.histogram builds it, into the histogram `which` of this page's models. */
  drawHistogram(which, frame, title, curveLabel) {
    drawHistogram(this.models, which, frame, title, curveLabel, this.config.histogram.headroom);
  }
}

/**
 * A histogram as app.page.views.histogram builds it: bars, curve, ranges, title and curve label, in place, into
 * the models `models` holds by the names `${which}_histogram`, `_bars`, `_curve` and
 * `_curve_item`; the y range reaches `headroom` times the highest bar or curve point.
 */
function drawHistogram(models, which, frame, title, curveLabel, headroom) {
  const figure = models[`${which}_histogram`];
  const bars = models[`${which}_bars`];
  const curve = models[`${which}_curve`];
  const curveItem = models[`${which}_curve_item`];
  // A new label object re-lays the legend out even when its text is the same. First,
  // while the page's layout is still clean: the legend measures itself at once, which
  // after the changes below would make the browser lay the page out there and then.
  if (curveItem.label?.value !== curveLabel) {
    curveItem.label = { value: curveLabel };
  }
  bars.data = { left: frame.left, right: frame.right, top: frame.density };
  curve.data = { x: frame.curveX, y: frame.curveY };
  figure.x_range.setv({ start: frame.left[0], end: frame.right[frame.right.length - 1] });
  const top = Math.max(Math.max(...frame.density), Math.max(...frame.curveY));
  figure.y_range.setv({ start: 0, end: headroom * top });
  figure.title.text = title;
}

export { afterFrame, drawHistogram, FirstScreenFigures, FrameStore, ndarray, onIdle };
