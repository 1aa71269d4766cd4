/*
 * The offline page: its state and its way to the Bokeh models.
 *
 * A control change flows one way, as in the served app: control → state → ask the page's
 * number source for the parts that depend on what changed → draw the frame it delivers
 * into the Bokeh sources, ranges, titles and readouts, in place. The page computes no
 * number itself: the offline file's source is kernel_source.js (computing with kernel.js),
 * whose header describes the interface a served session's source shares. The controls are
 * the served page's, drawn by its code (control_widgets.js) before Bokeh draws the figures;
 * Bokeh CustomJS callbacks call in through `globalThis.SdpaExport`: `start(models)` once the
 * document is ready. The lesson below the first screen is lesson_driver.js's, which the page
 * tells when the first screen is complete.
 *
 * The controls (names, labels, kinds, widget specs, slider grids, URL formats), the
 * recompute graph, the URL order and the readout thresholds all come from the page's
 * config, which app/export/page.py builds from app/simulation/spec.py: this script names no
 * control.
 */

import * as controlDrawing from "../shared/control_widgets.js";
import { FirstScreenDriver } from "../shared/first_screen_driver.js";
import * as figureDrawing from "../shared/first_screen_figures.js";
import * as heatmapFrame from "../shared/heatmap_frame.js";
import * as kernel from "../shared/kernel.js";
import * as lessonDrawing from "../shared/lesson_figures.js";
import * as queryRules from "../shared/query.js";
import * as textRules from "../shared/text.js";
import * as kernelSource from "./kernel_source.js";
import * as offlineLesson from "./lesson_driver.js";

const CONFIG = JSON.parse(document.getElementById("sdpa-export-config").textContent);
/** The controls the page offers (app.simulation.spec.page_spec), in the spec's order. */
const CONTROLS = CONFIG.controls;
const CONTROL = Object.fromEntries(CONTROLS.map((control) => [control.name, control]));
/** What control_widgets.js draws each widget from (app/served/components/controls.py's specs),
 * by name, and each grid of the page (its element's id) → the widgets drawn into it. */
const WIDGETS = CONFIG.widgets;
const GRIDS = CONFIG.grids;
/** The preset scenes' buttons' name: a choice applies a whole scene. */
const PRESET = Object.values(WIDGETS).find((spec) => spec.widget === "preset")?.name;
const URL_ORDER = CONFIG.url_names;
/** The controls the page shows and those it keeps fixed: what a preset is compared on. */
const PAGE_NAMES = CONFIG.limits.controls;
/** Each model part the page draws → the controls it depends on (app.simulation.model.INPUTS). */
const INPUTS = CONFIG.inputs;
/** The parts' names in app.simulation.spec, by the names this script gives them. */
const PART = CONFIG.parts;
/** The parts the first screen draws, asked for on every change; the lesson's row
 * comparison and output are asked for when the lesson draws them. */
const FIRST_SCREEN_PARTS = [PART.scores, PART.weights, PART.histograms, PART.view];
/** The state's name for the query the row comparison shows (set only by the lesson). */
const ROW = CONFIG.row.name;
/** The lesson section's controls ("When the assumptions break"), in its order. */
const SECTION = CONFIG.assumptions;

/** What `?controls=` asks for (query.js's parseShownControls), read as the page loads. */
let shownControls = { shown: null, notices: [] };
/** The state the page opens in (openingState), read as the page loads. */
let opening = null;
/** The widgets drawn, by name: `{element, show(value)}` (control_widgets.js). */
const drawn = {};

/**
 * Open or close the section a disclosure button controls (its aria-controls), as the
 * served app.page.views.disclosure.Disclosure does: aria-expanded and the arrow say which.
 */
function setOpen(button, label, open) {
  document.getElementById(button.getAttribute("aria-controls")).hidden = !open;
  button.setAttribute("aria-expanded", String(open));
  button.textContent = `${label} ${open ? "▴" : "▾"}`;
}

/** A disclosure button opens and closes its section on a press. */
function listenToDisclosure(button, label) {
  button.addEventListener("click", () => {
    setOpen(button, label, button.getAttribute("aria-expanded") !== "true");
  });
}

/** Open or close the "More controls" section below its button. */
function setMoreOpen(open) {
  setOpen(document.getElementById("sdpa-more-button"), CONFIG.shown.more_label, open);
}

/**
 * The state the page opens in: each control's first value, then the link's (query.js's
 * parseQuery and applyQuery, as the served app reads a link), with the preset scene's
 * values as the page shows them and the link's notices.
 */
function openingState() {
  const state = {
    ...Object.fromEntries(CONTROLS.map((control) => [control.name, control.default])),
    ...CONFIG.limits.fixed,
    [ROW]: CONFIG.row.default,
    preset: "",
  };
  const parsed = queryRules.parseQuery(globalThis.location.search, CONFIG.query);
  const { values, preset, scene, notices } = queryRules.applyQuery(
    parsed.values,
    CONFIG.presets,
    CONFIG.limits,
  );
  // Only what the page shows (a link's row is for the served page's lesson).
  for (const name of PAGE_NAMES) {
    if (name in values) {
      state[name] = values[name];
    }
  }
  state.preset = preset;
  return {
    state,
    scene: Object.fromEntries(
      PAGE_NAMES.filter((name) => name in scene).map((name) => [name, scene[name]]),
    ),
    notices: [...parsed.notices, ...notices],
  };
}

/** What widget `name` shows for `state`, as control_widgets.js's `show` takes it (the
 * served session's ControlBinding sends the same). */
function shownOnWidget(name, state) {
  if (name === PRESET) {
    return { value: state.preset };
  }
  const control = CONTROL[name];
  const value = state[name];
  if (control.widget === "slider") {
    return { index: kernel.nearestIndex(control.grid, value), text: shownValue(control, value) };
  }
  return { value: control.widget === "switch" ? Boolean(value) : String(value) };
}

/**
 * Draw every widget into its grid (CONFIG.grids), showing the opening state, then put
 * each where the link asks, before Bokeh draws the figures: exactly the controls
 * `?controls=` names, in its order, without "More controls"; otherwise the first-screen
 * controls and the others under "More controls", opened at once on a full page at least
 * `wide_px` wide, as the served page does.
 */
function arrangeControls() {
  const spec = CONFIG.shown;
  const embedded = queryRules.parseEmbed(
    globalThis.location.search,
    CONFIG.query,
    spec.embed_parameter,
  );
  // Embedded, the page drops its header as the served one does: the course page around
  // it (and the iframe's title) says what it is; the title stays the page's heading for
  // assistive technology, visually hidden.
  const title = document.querySelector(".sdpa-title");
  if (title) {
    title.classList.toggle("sdpa-visually-hidden", embedded);
  }
  opening = openingState();
  const send = (message) => api.page?.onControl(message);
  for (const [id, names] of Object.entries(GRIDS)) {
    const grid = document.getElementById(id);
    for (const name of names) {
      drawn[name] = controlDrawing.build(WIDGETS[name], send);
      drawn[name].show(shownOnWidget(name, opening.state));
      drawn[name].element.dataset.widget = name;
      grid.append(drawn[name].element);
    }
  }
  shownControls = queryRules.parseShownControls(globalThis.location.search, CONFIG.query, spec);
  const first = document.getElementById("sdpa-first");
  const more = document.getElementById("sdpa-more");
  const button = document.getElementById("sdpa-more-button");
  const shown = shownControls.shown;
  if (shown) {
    // The others wait in the closed section, or in their lesson section.
    for (const name of GRIDS["sdpa-first"]) {
      if (!shown.includes(name)) {
        more.appendChild(drawn[name].element);
      }
    }
    for (const name of shown) {
      first.appendChild(drawn[name].element);
    }
    document.getElementById("sdpa-more-box").hidden = true;
    more.hidden = true;
    return;
  }
  listenToDisclosure(button, spec.more_label);
  setMoreOpen(!embedded && globalThis.innerWidth >= spec.wide_px);
}

// Before Bokeh's own DOMContentLoaded handler (registered later, at the end of <body>).
if (document.readyState === "loading") {
  document.addEventListener("DOMContentLoaded", arrangeControls);
} else {
  arrangeControls();
}

const afterFrame = figureDrawing.afterFrame;

const onIdle = figureDrawing.onIdle;

/** A value as the served widget shows it: "%g" for a number, a whole number as is. */
function shownValue(control, value) {
  return control.kind === "number" ? textRules.formatGeneral(value, 6) : String(value);
}

/** How the served app writes a control value into the URL (app.simulation.query.format_query_value). */
function urlValue(name, value) {
  if (typeof value === "boolean") {
    return value ? "true" : "false";
  }
  const general = CONTROL[name]?.url_format === "general";
  return general ? textRules.formatGeneral(value, 6) : String(value);
}

class ExportPage {
  /**
   * `source` delivers the numbers the page draws (kernel_source.js describes the
   * interface: connect, request, start).
   */
  constructor(models, source) {
    this.models = models;
    // Plain HTML in the page, outside Bokeh (see views.py).
    this.readouts = document.getElementById("sdpa-readouts");
    this.source = source;
    /** The last request's sequence number (each request takes the next). */
    this.sequence = 0;
    /** The heatmap, histograms and readouts: the drawing code the served page shares. */
    this.figures = new figureDrawing.FirstScreenFigures(models, CONFIG, this.readouts);
    /** The first screen's driver, the served page's too: each completed first screen
     * counts an update and lets the lesson follow. */
    this.driver = new FirstScreenDriver(this.figures, FIRST_SCREEN_PARTS, PART.histograms, () => {
      this.updates += 1;
      this.lesson.schedule();
    });
    /** By part: the numbers last drawn and the state they are of. */
    this.store = this.driver.store;
    /** While start draws the first picture: receive then draws it all in one frame. */
    this.starting = false;
    source.connect((frame) => this.receive(frame));
    // The link's values (openingState), read as the controls were drawn.
    opening ??= openingState();
    this.state = { ...opening.state };
    /** The preset's values as the page shows them, while the controls still have them. */
    this.scene = { ...opening.scene };
    this.updates = 0;
    this.pending = null;
    /** The lesson below the first screen (offline/lesson_driver.js). */
    this.lesson = new offlineLesson.OfflineLesson(this);
  }

  /** The state the first screen shows (that of its last frame). */
  get shownState() {
    return this.driver.shownState;
  }

  /** Whether the histograms of the last move wait for the next frame. */
  get histogramsScheduled() {
    return this.driver.histogramsScheduled;
  }

  /** The numbers the first screen shows: the score images', the weights' and the raw
   * and scaled histograms'. */
  shownNumbers() {
    return this.figures.shown(this.store);
  }

  /** The row box changed: a whole number within the state's bounds picks the query. */
  onRowInput(model) {
    const value = model.value;
    if (typeof value !== "number" || !Number.isFinite(value)) {
      return;
    }
    const [low, high] = CONFIG.row.bounds;
    this.set({ [ROW]: Math.min(Math.max(Math.round(value), low), high) });
  }

  /** A click on the heatmap picks the query row under it (app.served.session's _pick_row). */
  onHeatmapTap(y) {
    if (typeof y === "number" && y >= 0 && y < this.state.n) {
      this.set({ [ROW]: Math.trunc(y) });
    }
  }

  /** Ask the source for the numbers of `parts` (CONFIG.parts' names) for the state now. */
  request(parts) {
    this.sequence += 1;
    this.source.request({ sequence: this.sequence, state: { ...this.state }, parts });
  }

  /**
   * A frame from the source (kernel_source.js describes it): the driver keeps the numbers
   * of each part it carries unless a newer frame already brought that part, and draws the
   * first screen's (the histograms a frame later; the page's first picture in one frame,
   * start); the lesson's are drawn when the lesson is next drawn.
   */
  receive(frame) {
    const { fresh, first } = this.driver.take(frame, this.starting);
    if (!this.starting && fresh.length > first.size) {
      this.lesson.schedule();
    }
  }

  /** Apply `changes` to the state and redraw what depends on them. */
  set(changes) {
    const changed = Object.keys(changes).filter((name) => changes[name] !== this.state[name]);
    if (changed.length === 0) {
      return;
    }
    Object.assign(this.state, changes);
    this.leaveSceneIfMoved();
    const parts = FIRST_SCREEN_PARTS.filter((part) =>
      INPUTS[part].some((name) => changed.includes(name)),
    );
    if (parts.length > 0) {
      // Drawn when its frame comes (receive): at once from the offline source.
      this.request(parts);
    } else {
      // Nothing on the first screen moved (the lesson's row): the lesson follows.
      this.driver.finish(false);
    }
    this.whenIdle(() => this.writeUrl());
  }

  /**
   * Run `task` when the page is idle, once for a burst of changes: the URL need not hold
   * up the picture (replaceState alone takes a few ms).
   */
  whenIdle(task) {
    const scheduled = this.pending !== null;
    this.pending = task;
    if (scheduled) {
      return;
    }
    const run = () => {
      const pending = this.pending;
      this.pending = null;
      pending();
    };
    if (typeof globalThis.requestIdleCallback === "function") {
      globalThis.requestIdleCallback(run, { timeout: 300 });
    } else {
      globalThis.setTimeout(run, 50);
    }
  }

  /** Put every widget where the state is. */
  showWidgets() {
    for (const [name, widget] of Object.entries(drawn)) {
      widget.show(shownOnWidget(name, this.state));
    }
  }

  /**
   * A widget moved (control_widgets.js's message: `{name, index}` for a slider, `{name,
   * value}` otherwise): a preset scene applies whole; a slider position that already
   * shows the state (an exact value a link set, off the grid) changes nothing.
   */
  onControl(message) {
    if (message.name === PRESET) {
      this.onPreset(message.value);
      return;
    }
    const control = CONTROL[message.name];
    if (!control) {
      return;
    }
    if (control.widget !== "slider") {
      this.set({ [control.name]: message.value });
      return;
    }
    const index = message.index;
    if (kernel.nearestIndex(control.grid, this.state[control.name]) !== index) {
      this.set({ [control.name]: control.grid[index] });
    }
  }

  /**
   * Keep the URL in step with the state, as the served app does, so a link shares it:
   * the page's own parameters first, then the others exactly as the page was opened.
   */
  writeUrl() {
    const values = {};
    for (const name of URL_ORDER) {
      values[name] = urlValue(name, this.state[name]);
    }
    const search = queryRules.composeSearch(
      globalThis.location.search,
      values,
      CONFIG.query.reservedPrefix,
    );
    try {
      globalThis.history.replaceState(null, "", `${search}${globalThis.location.hash}`);
    } catch (_error) {
      // Some hosts (sandboxed frames) refuse URL changes; the page works without them.
    }
  }

  /**
   * Show the preset scene's label and words (CONFIG.alerts.scene, app.page.figures'
   * ALERT_TEXTS), or hide them once left; the scenes' buttons say which.
   */
  showScene() {
    const preset = CONFIG.presets[this.state.preset];
    const scene = this.models.scene;
    scene.text = preset
      ? textRules.fill(CONFIG.alerts.scene, {
          label: preset.label,
          description: preset.description,
        })
      : "";
    scene.visible = preset !== undefined;
    drawn[PRESET]?.show({ value: this.state.preset });
  }

  /**
   * A preset scene was chosen (`key`; "" for none): show it, every control it sets at
   * once, as the page shows them (app.simulation.state.SimulationState.choose_preset); none leaves
   * the scene.
   */
  onPreset(key) {
    if (key === this.state.preset) {
      return;
    }
    this.state.preset = "";
    this.scene = {};
    if (key in CONFIG.presets) {
      const chosen = queryRules.applyQuery({ preset: key }, CONFIG.presets, CONFIG.limits);
      this.set(
        Object.fromEntries(
          PAGE_NAMES.filter((name) => name in chosen.values).map((name) => [
            name,
            chosen.values[name],
          ]),
        ),
      );
      this.state.preset = chosen.preset;
      this.scene = Object.fromEntries(
        PAGE_NAMES.filter((name) => name in chosen.scene).map((name) => [name, chosen.scene[name]]),
      );
      this.showWidgets();
      this.showNotices(chosen.notices);
      this.whenIdle(() => this.writeUrl());
    }
    this.showScene();
  }

  /** A control moved away from the preset's value: the scene is left (app.simulation.state). */
  leaveSceneIfMoved() {
    const moved = Object.keys(this.scene).some((name) => this.state[name] !== this.scene[name]);
    if (this.state.preset && moved) {
      this.state.preset = "";
      this.scene = {};
      this.showScene();
    }
  }

  /** Show the link's notices under the served alert's title (CONFIG.alerts.notice), or none. */
  showNotices(notices) {
    const notice = this.models.notice;
    notice.text = notices.length
      ? textRules.fill(CONFIG.alerts.notice, { notices: notices.join(" ") })
      : "";
    notice.visible = notices.length > 0;
  }

  /** The lesson's own inputs, which change nothing in the state (the worked example's). */
  listenToLesson() {
    lessonDrawing.listenToWorkedSwitch(document);
    listenToDisclosure(document.getElementById("sdpa-training-button"), CONFIG.training.title);
    listenToDisclosure(document.getElementById("sdpa-assumptions-button"), SECTION.title);
    lessonDrawing.listenToQuiz(document, CONFIG.quiz, CONFIG.query);
    for (const button of document.querySelectorAll("#sdpa-downloads button[data-download]")) {
      button.addEventListener("click", () => this.lesson.download(button.dataset.download));
    }
  }

  /** Show the link's state (the widgets already do) and compute everything once. */
  start() {
    this.listenToLesson();
    this.showWidgets();
    this.showScene();
    this.showNotices([...opening.notices, ...shownControls.notices]);
    // The first screen in one frame, histograms included (receive), then the lesson.
    this.starting = true;
    this.request(FIRST_SCREEN_PARTS);
    this.starting = false;
    this.lesson.render();
    this.writeUrl();
    this.updates += 1;
    this.source.start?.();
    afterFrame(() => onIdle(drawSections, 500));
  }

  /** The lesson's document is drawn: take its models and draw its views. */
  attachSections(models) {
    Object.assign(this.models, models);
    this.sectionsReady = true;
    this.lesson.schedule();
  }
}

/**
 * The figures of every document drawn so far take the dark figure theme (CONFIG.dark_theme,
 * app/served/components/figures.py's, by model type) while the system prefers dark, and the
 * values they were built with otherwise: the page's CSS follows the same media query.
 */
const DARK_QUERY = globalThis.matchMedia
  ? globalThis.matchMedia("(prefers-color-scheme: dark)")
  : null;
const lightValues = new Map();
function followSystemTheme() {
  const theme = CONFIG.dark_theme;
  const dark = Boolean(DARK_QUERY?.matches);
  for (const doc of globalThis.Bokeh.documents) {
    for (const model of doc.all_models) {
      const values = theme[model.type];
      if (!values || (!dark && !lightValues.has(model))) continue;
      // The theme's Div is the heatmap's title; the page's other Divs keep their look.
      if (model.type === "Div" && model.name !== "heatmap_title") continue;
      if (!lightValues.has(model)) {
        lightValues.set(
          model,
          Object.fromEntries(Object.keys(values).map((key) => [key, model[key]])),
        );
      }
      model.setv(dark ? values : lightValues.get(model));
    }
  }
}
DARK_QUERY?.addEventListener?.("change", followSystemTheme);

/**
 * Draw the lesson's document (built by app/export/page.py beside the first one), as
 * BokehJS's own page script draws the first: its ready callback calls startSections.
 */
function drawSections() {
  const { docs_json: docs, render_items: items } = JSON.parse(
    document.getElementById("sdpa-sections").textContent,
  );
  globalThis.Bokeh.embed.embed_items(docs, items);
}

const api = {
  page: null,
  config: CONFIG,
  /** Called by the document's ready callback with the Bokeh models the page updates. */
  start(models) {
    followSystemTheme();
    api.page = new ExportPage(models, new kernelSource.KernelSource(CONFIG));
    api.page.start();
    // The heatmap's frame square and sized to its room (the served page does the same).
    const view = (model) => globalThis.Bokeh.index.find_one(model);
    heatmapFrame.keepSquare(
      models.heatmap,
      () => view(models.heatmap),
      {
        heatmap: document.querySelector(".sdpa-heatmap"),
        histograms: document.querySelector(".sdpa-histograms"),
        rawHistogram: () => view(models.raw_histogram)?.el,
      },
      CONFIG.heatmap.frame,
    );
  },
  /** Called by the lesson's document once drawn, as start is by the first. */
  startSections(models) {
    followSystemTheme();
    api.page?.attachSections(models);
  },
  onRowInput(model) {
    api.page?.onRowInput(model);
  },
  onHeatmapTap(y) {
    api.page?.onHeatmapTap(y);
  },
  /** The state and readout numbers, for tests and the benchmark. */
  snapshot() {
    const page = api.page;
    if (!page) {
      return null;
    }
    const { raw, scaled, weights } = page.shownNumbers();
    const { preset, ...state } = page.state;
    return {
      updates: page.updates,
      state,
      preset,
      raw_std: raw.std,
      scaled_std: scaled.std,
      mean_max_weight: weights.meanMaxWeight,
      mean_entropy: weights.meanEntropy,
      uniform_entropy: weights.uniformEntropy,
      uniform_max_weight: weights.uniformMaxWeight,
      lesson_updates: page.lesson.updates,
      // The histograms of the last d_k move are still to be drawn (FirstScreenDriver).
      histograms_pending: page.histogramsScheduled,
      // The lesson's document is drawn.
      sections_ready: Boolean(page.sectionsReady),
      // A lesson pass is scheduled or under way (offline/lesson_driver.js's schedule).
      lesson_pending: page.lesson.scheduled,
      non_finite: weights.report.nonFinite,
      max_abs_error: weights.report.maxAbsError,
      max_logit: weights.maxLogit,
    };
  },
};
globalThis.SdpaExport = api;
