/*
 * The served page's lesson sections drawn in the browser (app/served/components/lesson.py): put
 * their markup in, embed their figures' Bokeh items once, and draw and grade them with
 * lesson_figures.js, as the offline page does; the row comparison and the output draw the
 * numbers the session sends, on the frame and view properties or on the session's own
 * channel (channel.js). The markup, the figures' items and the config are page data
 * (page_data.js), the same for every student.
 */

import * as SdpaControlDrawing from "../shared/control_widgets.js";
import * as Figures from "../shared/first_screen_figures.js";
import * as Kernel from "../shared/kernel.js";
import * as LessonDrawing from "../shared/lesson_figures.js";
import * as Text from "../shared/text.js";
import * as SdpaChannel from "./channel.js";
import { answerChart } from "./class_answers.js";
import { figureModels, followTheme, unpack } from "./embedding.js";
import { pageData } from "./page_data.js";

/** Each page's row box → its component's message (the box's callback's hook). */
const ROW_INPUTS = new Map();

/**
 * Runs the jobs given to it once the page's next frame has been painted (the first
 * screen's `Figures.afterFrame`): a move's numbers for the lesson arrive
 * right behind the first screen's, and drawn at once they would hold the heatmap under the
 * student's hand back by the lesson's repaint. Jobs given a key replace the one waiting
 * under it (only the newest view is drawn); the others run in order.
 */
function afterNextPaint() {
  const waiting = new Map();
  let ordered = 0;
  let scheduled = false;
  const runAll = () => {
    scheduled = false;
    const jobs = [...waiting.values()];
    waiting.clear();
    for (const job of jobs) job();
  };
  return (job, key = `#${ordered++}`) => {
    waiting.delete(key);
    waiting.set(key, job);
    if (scheduled) return;
    scheduled = true;
    Figures.afterFrame(runAll);
  };
}

export function render({ model, el }) {
  // The sections' markup, figures and config are the same for every student: page data.
  pageData(model).then((data) => drawLesson(model, el, data));
}

/** Draw the lesson of `model` into `el` from its page data (`html`, `figures`, `config`). */
function drawLesson(model, el, data) {
  const config = data.config;
  const key = model.channel_key;
  const target = model.channel_target;
  // Opened at once (the first screen's components have opened it already, if any).
  SdpaChannel.open(key, model.channel_address);
  /** What comes on the session's channel for this component, once it can draw it. */
  const handlers = {};
  const afterPaint = afterNextPaint();
  const box = document.createElement("div");
  box.className = "sdpa-drawn-lesson";
  // Trusted markup, built once per process by app/page/lesson.py.
  box.innerHTML = data.html;
  el.append(box);
  /** What tests read: the models once embedded, the views and frames drawn. */
  const record = { models: null, views: 0, frames: 0, sequence: 0 };
  globalThis.SdpaDrawnLessons ??= [];
  globalThis.SdpaDrawnLessons.push(record);

  if (box.querySelector("#sdpa-worked-switch")) LessonDrawing.listenToWorkedSwitch(box);
  if (box.querySelector("#sdpa-quiz")) {
    // Each answer checked goes to the session too: in class mode it counts the class's.
    LessonDrawing.listenToQuiz(box, config.quiz, config.query, (question, answer) => {
      const message = { quiz: { question, answer } };
      if (!SdpaChannel.send(key, target, message)) model.send_msg(message);
    });
    showClassResult(model, box);
  }
  for (const button of box.querySelectorAll("button[data-lazy]")) lazySection(model, box, button);
  const trainingBox = box.querySelector(".sdpa-training");
  const training = trainingBox ? new ServedTraining(model, trainingBox, config.dark_theme) : null;
  record.training = training?.record ?? null;
  if (training) {
    training.listen((button) => {
      const message = { training: button };
      if (!SdpaChannel.send(key, target, message)) model.send_msg(message);
    });
  }
  const assumptionsBox = box.querySelector(".sdpa-drawn-assumptions");
  const assumptions = assumptionsBox
    ? new ServedAssumptions(
        model,
        assumptionsBox,
        config.assumptions,
        config.dark_theme,
        (message) => {
          const sent = { assumptions: message };
          if (!SdpaChannel.send(key, target, sent)) model.send_msg(sent);
        },
      )
    : null;
  record.assumptions = assumptions?.record ?? null;
  if (assumptions) {
    // Without the channel, what the session sends the section comes as messages.
    model.on("msg:custom", (message) => {
      if (message?.assumptions) assumptions.take(message.assumptions);
    });
  }
  /** What comes on the channel as values: the collapse curves' view, the sections'. */
  let takeView = null;
  handlers.values = (values) => {
    if (values.view && takeView) takeView(values.view);
    if (values.training && training) training.take(values.training);
    if (values.assumptions && assumptions) assumptions.take(values.assumptions);
  };
  /** Draws a frame's row comparison and output, once their figures are embedded. */
  let drawRows = null;
  const drawFrame = (sent = model.frame) => {
    const frame = unpack(sent);
    if (!frame?.parts || frame.sequence <= record.sequence) return;
    drawRows?.(frame);
    assumptions?.drawFrame(frame);
    record.frames += 1;
    record.sequence = frame.sequence;
  };
  const listen = () => {
    drawFrame();
    model.on("frame", () => drawFrame());
    handlers.frame = (sent) => afterPaint(() => drawFrame(sent));
    SdpaChannel.listen(key, target, handlers);
    model.on("remove", () => SdpaChannel.forget(key, target));
  };
  if (!data.figures) {
    listen();
    model.on("remove", () => forget(record));
    return;
  }

  const { items, models: ids } = data.figures;
  const cells = [...box.querySelectorAll(".sdpa-figure-cell")];
  const embed = (item, i) => globalThis.Bokeh.embed.embed_item(item, cells[i]);
  Promise.all(items.map(embed)).then((managers) => {
    const models = figureModels(managers, ids);
    followTheme(managers, config.dark_theme, model);
    record.models = models;
    if (models.collapse_scaled) {
      const table = Kernel.float64FromBase64(config.collapse.table);
      const caption = box.querySelector("#sdpa-collapse-caption .collapse-caption");
      const collapse = new LessonDrawing.CollapseDrawing(models, config.collapse, table, caption);
      const drawView = () => {
        collapse.draw(model.view);
        record.views += 1;
      };
      drawView();
      model.on("view", drawView);
      takeView = (view) => {
        afterPaint(() => {
          collapse.draw(view);
          record.views += 1;
        }, "view");
      };
    }
    if (models.row_figure) {
      const rows = new LessonDrawing.RowDrawing(models, config.row);
      const outputs = new LessonDrawing.OutputDrawing(models, config.output.dim);
      const { row: rowPart, output: outputPart } = config.parts;
      drawRows = (frame) => {
        const { n, row } = frame.state;
        if (frame.parts.includes(rowPart)) rows.draw(frame.numbers[rowPart], n, row);
        if (frame.parts.includes(outputPart)) outputs.draw(frame.numbers[outputPart], n);
      };
      globalThis[config.row_input_hook] ??= (input) => ROW_INPUTS.get(input)?.(input.value);
      ROW_INPUTS.set(models.row_input, (value) => {
        if (typeof value !== "number" || !Number.isFinite(value)) return;
        if (!SdpaChannel.send(key, target, { row_input: value }))
          model.send_msg({ row_input: value });
      });
      model.on("remove", () => ROW_INPUTS.delete(models.row_input));
    }
    listen();
  });
  model.on("remove", () => forget(record));
}

/**
 * The served training section (app/served/components/training.py's markup): its figures, embedded
 * once the session sends them (when the process's grid is ready), drawn by
 * lesson_figures.js's TrainingDrawing; the session's view (bands, words, buttons, progress)
 * and the run's steps. They come on the channel as changes (`take`), or on the component's
 * `training_*` properties whole.
 */
class ServedTraining {
  constructor(model, section, theme) {
    this.model = model;
    this.section = section;
    this.theme = theme;
    this.drawing = null;
    this.embedding = false;
    this.view = {};
    this.run = { step: [], loss: [], accuracy: [] };
    /** What tests read: whether the session has spoken, the figures once embedded, the
     * views and runs drawn. */
    this.record = { ready: false, models: null, views: 0, runs: 0 };
    this.status = section.querySelector(".training-status");
    this.bar = section.querySelector("[role=progressbar]");
    this.buttons = Object.fromEntries(
      [...section.querySelectorAll("button[data-training]")].map((b) => [b.dataset.training, b]),
    );
    this.take({
      figures: model.training_figures,
      view: model.training_view,
      run: { from: 0, ...model.training_run },
    });
    model.on("training_figures", () => this.take({ figures: model.training_figures }));
    model.on("training_view", () => this.take({ view: model.training_view }));
    model.on("training_run", () => this.take({ run: { from: 0, ...model.training_run } }));
  }

  /** Call `press` with a button's name ("train", "stop") when it is pressed. */
  listen(press) {
    for (const [name, button] of Object.entries(this.buttons)) {
      button.addEventListener("click", () => press(name));
    }
  }

  /** Take what the session sent: `figures` (JSON), `view` (changed keys), `run` (steps from `from`). */
  take({ figures, view, run }) {
    if (view && Object.keys(view).length) this.record.ready = true;
    if (figures) this.embed(figures);
    if (view && Object.keys(view).length) {
      Object.assign(this.view, view);
      this.showView();
    }
    if (run && Array.isArray(run.step)) {
      const from = Math.min(run.from ?? 0, this.run.step.length);
      for (const name of Object.keys(this.run)) {
        this.run[name] = this.run[name].slice(0, from).concat(run[name] ?? []);
      }
      if (this.drawing) this.drawRun();
    }
  }

  embed(figures) {
    if (this.embedding) return;
    this.embedding = true;
    const { items, models: ids, spec } = JSON.parse(figures);
    const cells = [...this.section.querySelectorAll(".sdpa-training-cell")];
    const embed = (item, i) => globalThis.Bokeh.embed.embed_item(item, cells[i]);
    Promise.all(items.map(embed)).then((managers) => {
      const models = figureModels(managers, ids);
      followTheme(managers, this.theme, this.model);
      const table = Kernel.float32FromBase64(spec.table);
      this.drawing = new LessonDrawing.TrainingDrawing(models, spec, table);
      this.record.models = models;
      this.showView();
      this.drawRun();
    });
  }

  showView() {
    const view = this.view;
    if (typeof view.status === "string") this.status.textContent = view.status;
    if (Number.isFinite(view.progress)) {
      const percent = Math.min(Math.max(view.progress, 0), 100);
      this.bar.setAttribute("aria-valuenow", String(percent));
      this.bar.firstElementChild.style.transform = `scaleX(${percent / 100})`;
    }
    if (this.buttons.train) this.buttons.train.disabled = view.train !== true;
    if (this.buttons.stop) this.buttons.stop.disabled = view.stop !== true;
    // Trusted markup the session builds from numbers (app.page.views.training_grid).
    const note = this.section.querySelector("[data-training-note]");
    if (typeof view.note === "string" && note.innerHTML !== view.note) note.innerHTML = view.note;
    const summary = this.section.querySelector("[data-training-summary]");
    if (typeof view.summary === "string" && summary.innerHTML !== view.summary) {
      summary.innerHTML = view.summary;
    }
    if (this.drawing && Number.isInteger(view.bands)) this.drawing.drawBands(view.bands);
    this.record.views += 1;
  }

  drawRun() {
    if (!this.drawing) return;
    this.drawing.drawRun(this.run);
    this.record.runs += 1;
  }
}

/**
 * The served assumptions section (app/served/components/assumptions.py's markup and config): its
 * controls drawn by control_widgets.js (a move goes to the session), its histogram embedded
 * once the session first speaks to it (when the section is opened) and drawn by first_screen_figures.js
 * from the lesson's frames, its readouts the session's HTML, and the CSV files the session
 * writes when a download button asks, saved as the offline page saves its own.
 */
class ServedAssumptions {
  constructor(model, section, config, theme, send) {
    this.model = model;
    this.section = section;
    this.config = config;
    this.theme = theme;
    this.send = send;
    this.models = null;
    this.embedding = false;
    /** The newest frame with the histograms' numbers, until the histogram is embedded. */
    this.pending = null;
    /** What tests read: whether the session has spoken (the controls then show its
     * values), the histogram's models once embedded, what has been drawn. */
    this.record = { ready: false, models: null, histograms: 0, readouts: 0, downloads: 0 };
    /** The controls' boxes: hidden until the session sends their values. */
    this.grids = [];
    /** The controls drawn, by name. */
    this.controls = {};
    for (const [group, specs] of Object.entries(config.controls)) {
      const grid = section.querySelector(`[data-controls="${group}"]`);
      grid.hidden = true;
      this.grids.push(grid);
      for (const spec of specs) {
        const drawn = SdpaControlDrawing.build(spec, (move) => send({ control: move }));
        this.controls[spec.name] = drawn;
        grid.append(drawn.element);
      }
    }
    this.downloads = {};
    for (const button of section.querySelectorAll("button[data-download]")) {
      this.downloads[button.dataset.download] = button;
      button.addEventListener("click", () => {
        button.setAttribute("aria-busy", "true");
        send({ download: button.dataset.download });
      });
    }
  }

  /** Take what the session sent: `controls` (values by name), `readouts` (HTML by group), `download`. */
  take({ controls, readouts, download }) {
    this.embed();
    if (!this.record.ready) {
      for (const grid of this.grids) grid.hidden = false;
      this.record.ready = true;
    }
    for (const [name, value] of Object.entries(controls ?? {})) this.controls[name]?.show(value);
    for (const [group, html] of Object.entries(readouts ?? {})) {
      // Trusted markup the session builds from numbers (app.page.views.assumptions).
      const box = this.section.querySelector(`[data-readouts="${group}"]`);
      if (box) box.innerHTML = html;
      this.record.readouts += 1;
    }
    if (download && typeof download.text === "string" && typeof download.name === "string") {
      LessonDrawing.saveText(download.name, download.text);
      this.downloads[download.which]?.removeAttribute("aria-busy");
      this.record.downloads += 1;
    }
  }

  /** Embed the histogram's figure (once). */
  embed() {
    if (this.embedding) return;
    this.embedding = true;
    const cell = this.section.querySelector(".sdpa-assumptions-cell");
    const histogram = this.config.histogram;
    globalThis.Bokeh.embed.embed_item(histogram.item, cell).then((manager) => {
      this.models = figureModels([manager], histogram.models);
      followTheme([manager], this.theme, this.model);
      this.record.models = this.models;
      if (this.pending) this.drawHistogram(this.pending);
    });
  }

  /** Draw the histogram of `frame` if it carries the histograms' numbers. */
  drawFrame(frame) {
    if (!frame.parts.includes(this.config.part)) return;
    this.pending = frame;
    if (this.models) this.drawHistogram(frame);
  }

  /** The scaled histogram again, with its words, as the first screen draws it. */
  drawHistogram(frame) {
    const texts = Text;
    const histogram = this.config.histogram;
    const { raw, scaled } = frame.numbers[this.config.part];
    const state = frame.state;
    const law = texts.lawOf(state);
    const titles = texts.histogramTitles(histogram.texts, state.d_k, raw, scaled, law);
    Figures.drawHistogram(
      this.models,
      histogram.which,
      scaled,
      titles.scaled.title,
      titles.scaled.curve,
      histogram.headroom,
    );
    this.pending = null;
    this.record.histograms += 1;
  }
}

/**
 * A lesson section built when first opened (app/served/components/lazy_section.py): its `button`
 * opens and closes its box on the page and tells the session which are open (`opened`);
 * the box holds the child of the section's name, a column the session puts the section's
 * view in when it is first opened.
 */
function lazySection(model, box, button) {
  const name = button.dataset.lazy;
  const slot = box.querySelector(`#${button.getAttribute("aria-controls")}`);
  const title = button.textContent;
  const show = () => {
    const open = model.opened.includes(name);
    button.textContent = `${title} ${open ? "▴" : "▾"}`;
    button.setAttribute("aria-expanded", String(open));
    slot.hidden = !open;
  };
  // A section the page draws has its markup in its box from the start; one built of Panel
  // objects goes in it as the child of its name.
  const drawn = slot.childElementCount > 0;
  const fill = () => {
    const child = model.get_child(name);
    slot.replaceChildren(...(child ? [child] : []));
  };
  button.addEventListener("click", () => {
    const others = model.opened.filter((opened) => opened !== name);
    model.opened = model.opened.includes(name) ? others : [...others, name];
    show();
  });
  if (!drawn) {
    fill();
    model.on(name, fill);
  }
  show();
  model.on("opened", show);
}

/**
 * Class mode: once the presenter shows the class's answers, each quiz question shows them
 * under its feedback (`model.class_result`: app.served.components.class_bar.shown_result),
 * where the student answered; they go again when hidden.
 */
function showClassResult(model, box) {
  const show = () => {
    const result = model.class_result ?? {};
    for (const button of box.querySelectorAll("#sdpa-quiz button[data-check]")) {
      const within = button.closest(".quiz-question");
      const key = button.dataset.check;
      let shown = within.querySelector(".sdpa-quiz-class");
      const question = result.questions?.[key];
      if (!question) {
        shown?.remove();
        continue;
      }
      if (!shown) {
        shown = document.createElement("div");
        shown.className = "sdpa-quiz-class";
        within.append(shown);
      }
      const chart = answerChart(result.texts, key, question, result.answers[key] ?? {});
      chart.querySelector("figcaption").textContent =
        `${result.texts.answers}: ${chart.querySelector("figcaption").textContent}`;
      shown.replaceChildren(chart);
    }
  };
  show();
  model.on("class_result", show);
}

/** Drop a removed component's record. */
function forget(record) {
  const records = globalThis.SdpaDrawnLessons;
  records.splice(records.indexOf(record), 1);
}
