/*
 * The offline lesson's driver: the exported page's lesson views and when they redraw.
 *
 * The lesson below the first screen (the collapse curves, the training bands, one query
 * scaled vs unscaled, the output weights·V and "When the assumptions break") is drawn
 * with the served page's lesson code (lesson_figures.js) once the first screen is
 * complete and the page is idle, one view per frame, each only when what it shows moved
 * (lessonKeys). The views drawn from numbers of their own (the row comparison, the
 * output) ask the page's number source for them when they are drawn (lessonNumbers).
 *
 * page.js's page (globalThis.SdpaExport.page) owns the state, the models and the
 * source; an OfflineLesson reads them through it and asks it for numbers (`request`). It
 * reads its config from the page's (app/export/page.py) and names no control.
 */

import { afterFrame, onIdle } from "../shared/first_screen_figures.js";
import * as kernel from "../shared/kernel.js";
import * as lessonDrawing from "../shared/lesson_figures.js";
import * as lessonTexts from "../shared/lesson_numbers.js";
import * as textRules from "../shared/text.js";
import * as assumptionsSection from "./assumption_numbers.js";

const CONFIG = JSON.parse(document.getElementById("sdpa-export-config").textContent);
const DATA = CONFIG.data;
/** The parts' names in app.simulation.spec, by the names this script gives them. */
const PART = CONFIG.parts;
/** The state's name for the query the row comparison shows (set only by the lesson). */
const ROW = CONFIG.row.name;
/** The lesson section's controls ("When the assumptions break"), in its order. */
const SECTION = CONFIG.assumptions;

/**
 * The lesson's views in the order they redraw: the name `drawn` and lessonKeys know
 * each by, the method that draws it, for a view of the lesson's document (drawn after
 * the first screen) a model it cannot draw without, and for a view drawn from a part of
 * its own (asked for when drawn: lessonNumbers) that part's name in CONFIG.parts.
 */
const LESSON_VIEWS = [
  ["collapse", "renderCollapse", "collapse_scaled"],
  ["training", "renderTraining", "training_scaled"],
  ["rowComparison", "renderRow", "row_figure", PART.row],
  ["output", "renderOutput", "output_source", PART.output],
  ["assumptions", "renderAssumptions", "assumptions_histogram"],
];

/** The part each lesson view with numbers of its own draws, by the view's name. */
const VIEW_PART = Object.fromEntries(
  LESSON_VIEWS.filter((view) => view.length > 3).map(([name, , , part]) => [name, part]),
);

/**
 * The lesson's views of `page` (offline/page.js's ExportPage: its state, models, number
 * store, figures and `request(parts)`), each redrawn only when what it shows moved.
 */
class OfflineLesson {
  constructor(page) {
    this.page = page;
    this.collapseTable = kernel.float64FromBase64(CONFIG.collapse.table);
    this.trainingTable = kernel.float32FromBase64(CONFIG.training.table);
    /** What the lesson's views last drew, by view: they redraw only on a change. */
    this.drawn = {};
    /** By lesson view with numbers of its own: the key (lessonKeys) last asked for. */
    this.asked = {};
    /** A lesson pass is scheduled or under way (schedule). */
    this.scheduled = false;
    /** How many times the lesson's views have all come to show the page's state. */
    this.updates = 0;
  }

  /**
   * Update the lesson's views once the first screen is complete and the page is idle,
   * one view per frame: a message posted from the next animation frame runs after that
   * frame, and an idle callback waits out a burst of key presses (a held arrow key), so
   * the lesson is drawn once for the burst, never holds up the first screen, and holds
   * up a key press that comes while it is drawn by one view's frame at the most.
   */
  schedule() {
    if (this.scheduled) {
      return;
    }
    this.scheduled = true;
    const later = () => afterFrame(() => onIdle(step, 250));
    const step = () => {
      const stale = this.staleLessonViews();
      if (stale.length > 0) {
        this.drawLessonView(stale[0]);
      }
      if (stale.length > 1) {
        later();
        return;
      }
      this.scheduled = false;
      this.lessonDrawn();
    };
    later();
  }

  /** Redraw each lesson view whose inputs changed since it was last drawn. */
  render() {
    for (const view of this.staleLessonViews()) {
      this.drawLessonView(view);
    }
    this.lessonDrawn();
  }

  /**
   * The LESSON_VIEWS entries whose inputs changed since they were drawn (lessonKeys) and
   * that can be drawn now: their models are there and their numbers not on their way.
   */
  staleLessonViews() {
    const keys = this.lessonKeys();
    return LESSON_VIEWS.filter(
      ([name, , needs, part]) =>
        this.drawn[name] !== keys[name] &&
        (!needs || needs in this.page.models) &&
        !(part && this.awaiting(name)),
    );
  }

  /** Draw one view of LESSON_VIEWS and remember what it shows (unless its numbers are
   * still on their way: their frame schedules the lesson again). */
  drawLessonView([name, render]) {
    if (this[render]() !== false) {
      this.drawn[name] = this.lessonKeys()[name];
    }
  }

  /**
   * The numbers lesson view `view` (a LESSON_VIEWS name with a part) draws for the
   * page's state, or null while they are on their way: asked for once per state (its
   * lessonKeys key); the frame that brings them schedules the lesson again (receive).
   */
  lessonNumbers(view) {
    const key = this.lessonKeys()[view];
    if (this.numbersKey(view) !== key && this.asked[view] !== key) {
      this.asked[view] = key;
      this.page.request([VIEW_PART[view]]);
    }
    return this.numbersKey(view) === key ? this.page.store.numbers[VIEW_PART[view]] : null;
  }

  /** Whether lesson view `view`'s numbers for the page's state were asked for and have
   * not come yet. */
  awaiting(view) {
    const key = this.lessonKeys()[view];
    return this.asked[view] === key && this.numbersKey(view) !== key;
  }

  /** The lessonKeys key, for lesson view `view`, of the state its numbers are of. */
  numbersKey(view) {
    const state = this.page.store.numberStates[VIEW_PART[view]];
    return state && this.lessonKeys(state)[view];
  }

  /** The lesson's views all show the current state. */
  lessonDrawn() {
    this.updates += 1;
  }

  /**
   * What each lesson view would show for `state` (the page's, unless another is given),
   * by its name in `drawn` (see LESSON_VIEWS).
   */
  lessonKeys(state = this.page.state) {
    const { d_k: d, scaled, temperature } = state;
    const t = lessonTexts.curveTemperature(CONFIG.collapse, temperature);
    return {
      collapse: `${d} ${scaled} ${t}`,
      training: String(lessonTexts.trainingIndex(DATA.d_values, d)),
      rowComparison: `${this.frameKey(state)} ${state[ROW]}`,
      output: this.frameKey(state),
      assumptions: this.frameKey(state),
    };
  }

  /** What the first screen computes from: the lesson's views redraw when it moved. */
  frameKey(state = this.page.state) {
    const { d_k: d, n, causal, scaled, temperature } = state;
    const section = SECTION.controls.map((name) => state[name]).join(" ");
    return `${d} ${n} ${causal} ${scaled} ${temperature} ${section}`;
  }

  /**
   * app.page.views.assumptions.AssumptionsView.update: the section's scaled histogram and
   * each group's readouts.
   */
  renderAssumptions() {
    const { raw, scaled, weights } = this.page.shownNumbers();
    const state = this.page.shownState;
    const threshold = SECTION.overflow_thresholds[state.precision];
    const titles = textRules.histogramTitles(
      CONFIG.texts.histograms,
      state.d_k,
      raw,
      scaled,
      textRules.lawOf(state),
    );
    this.page.figures.drawHistogram(
      SECTION.histogram,
      scaled,
      titles.scaled.title,
      titles.scaled.curve,
    );
    for (const [group, keep] of Object.entries(SECTION.readout_groups)) {
      document.getElementById(`sdpa-assumptions-${group}-readouts`).innerHTML =
        assumptionsSection.sectionReadoutsHtml(
          SECTION.texts,
          state,
          raw,
          scaled,
          weights,
          threshold,
          keep,
        );
    }
  }

  /** A "Download CSV" press: the file app.simulation.csv_files writes, from what the page shows. */
  download(which) {
    const csv = SECTION.csv;
    const { scores, weights, raw, scaled } = this.page.shownNumbers();
    const state = this.page.shownState;
    const { n, causal } = state;
    const [name, body] =
      which === "matrix"
        ? [
            assumptionsSection.matrixFilename(state, csv),
            assumptionsSection.matrixCsv(
              csv.matrix_columns,
              n,
              causal,
              scores.rawImage,
              scores.scaledImage,
              weights.weightsImage,
            ),
          ]
        : [
            assumptionsSection.histogramFilename(state, csv),
            assumptionsSection.histogramCsv(csv.histogram_columns, csv.histogram_rows, raw, scaled),
          ];
    lessonDrawing.saveText(name, body);
  }

  /**
   * app.page.views.row_compare.RowCompareView, and the heatmap's dashed outline; false
   * while the row's numbers are on their way.
   */
  renderRow() {
    const comparison = this.lessonNumbers("rowComparison");
    if (comparison === null) {
      return false;
    }
    const state = this.page.store.numberStates[PART.row];
    const { n } = state;
    this.rowDrawing ??= new lessonDrawing.RowDrawing(this.page.models, CONFIG.row);
    this.rowDrawing.draw(comparison, n, state[ROW]);
    this.page.figures.drawOutline(n, comparison.row);
  }

  /**
   * app.page.views.output.OutputView: V and weights·V for the current weights; false
   * while their numbers are on their way.
   */
  renderOutput() {
    const frame = this.lessonNumbers("output");
    if (frame === null) {
      return false;
    }
    const { n } = this.page.store.numberStates[PART.output];
    this.outputDrawing ??= new lessonDrawing.OutputDrawing(this.page.models, CONFIG.output.dim);
    this.outputDrawing.draw(frame, n);
  }

  /** The collapse curves, as the served page's lesson draws them (lesson_figures.js). */
  renderCollapse() {
    this.collapse ??= new lessonDrawing.CollapseDrawing(
      this.page.models,
      CONFIG.collapse,
      this.collapseTable,
      document.querySelector("#sdpa-collapse-caption .collapse-caption"),
    );
    this.collapse.draw(this.page.state);
  }

  /**
   * The served training section without the student's run (lesson_figures.js's
   * TrainingDrawing, which the served page runs too): the bands of the grid d_k the
   * served section shows at this d_k, that d_k marked, the note under them.
   */
  renderTraining() {
    const spec = CONFIG.training;
    const index = lessonTexts.trainingIndex(DATA.d_values, this.page.state.d_k);
    this.training ??= new lessonDrawing.TrainingDrawing(this.page.models, spec, this.trainingTable);
    this.training.drawBands(spec.shown[index]);
    // Markup computed by app.page.views.training_grid.grid_note from numbers, at export time.
    document.getElementById("sdpa-training-note").innerHTML = spec.notes[index];
  }
}

export { OfflineLesson };
