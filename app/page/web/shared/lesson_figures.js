/*
 * The lesson's figures, drawn by both pages: the sections that need no numbers a session
 * computes (the collapse curves, the training grid's bands, the worked example, the quiz),
 * the served page's training run, and those that draw the numbers of the `row` and `output`
 * parts (the row comparison, the output), into their Bokeh models and markup
 * (app/page/lesson.py builds both, once). The offline page (offline/lesson_driver.js) calls it
 * with the page's document; the served lesson (served/lesson_component.js) with its own
 * element.
 */
import { bokehImage } from "./bokeh_image.js";
import * as lesson from "./lesson_numbers.js";

/** `value` as a list: the models of a name, one per document that holds it. */
const all = (value) => (Array.isArray(value) ? value : [value]);

/**
 * app.page.views.collapse.CollapseView: the curves at the temperature (the nearest the
 * data carries), the ring at d_k on the curve of the scale switch, and its caption.
 * `sources` holds the curves' and the marker's sources by name (`collapse_scaled`,
 * `collapse_unscaled`, `collapse_marker`: a model or a list of them), `caption` the
 * element whose text is the caption.
 */
class CollapseDrawing {
  constructor(sources, spec, table, caption) {
    this.scaled = all(sources.collapse_scaled);
    this.unscaled = all(sources.collapse_unscaled);
    this.marker = all(sources.collapse_marker);
    this.spec = spec;
    this.table = table;
    this.caption = caption;
    /** The temperature index whose curves the sources hold. */
    this.curves = null;
  }

  /** Draw the state's `d_k`, `scaled` and `temperature`. */
  draw({ d_k: d, scaled, temperature }) {
    const spec = this.spec;
    const t = lesson.curveTemperature(spec, temperature);
    if (this.curves !== t) {
      const [scaledCurve, unscaledCurve] = lesson.collapseCurves(spec, this.table, t);
      for (const source of this.scaled) source.data = scaledCurve;
      for (const source of this.unscaled) source.data = unscaledCurve;
      this.curves = t;
    }
    const marker = lesson.collapseMarker(spec, this.table, t, d, scaled);
    for (const source of this.marker) source.data = marker;
    this.caption.textContent = lesson.collapseCaption(spec, d, scaled, spec.temperatures[t]);
  }
}

/**
 * app.page.views.row_compare.RowCompareView: the two bar sources, the title, the legend
 * and the query's box for the row comparison `comparison` (lesson_numbers.js's rowComparison, or
 * a session's `row` numbers) of the n×n matrix, the box showing `row`. `models` holds
 * the models by name (app.page.lesson.row_views), `spec` the row's data (row_spec).
 */
class RowDrawing {
  constructor(models, spec) {
    this.models = models;
    this.spec = spec;
  }

  draw(comparison, n, row) {
    const m = this.models;
    const shown = lesson.rowView(this.spec, comparison);
    m.row_scaled.data = shown.scaled;
    m.row_unscaled.data = shown.unscaled;
    m.row_figure.title.text = shown.title;
    m.row_scaled_item.label = { value: shown.legend[0] };
    m.row_unscaled_item.label = { value: shown.legend[1] };
    m.row_input.high = n - 1;
    if (m.row_input.value !== row) {
      m.row_input.value = row;
    }
  }
}

/**
 * app.page.views.output.OutputView: V and weights·V (`frame`: lesson_numbers.js's outputFrame,
 * or a session's `output` numbers) for an n-row matrix of `dim` columns, into `models`
 * by name (app.page.lesson.output_views).
 */
class OutputDrawing {
  constructor(models, dim) {
    this.models = models;
    this.dim = dim;
  }

  draw(frame, n) {
    const m = this.models;
    const image = (values) => bokehImage(values, n, this.dim);
    m.output_source.data = {
      values: [image(frame.valuesImage)],
      output: [image(frame.outputImage)],
      n: [n],
    };
    for (const figure of [m.values_figure, m.output_figure]) {
      figure.y_range.setv({ start: n, end: 0 });
    }
    m.output_mapper.setv({ low: -frame.limit, high: frame.limit });
  }
}

/**
 * app.page.views.training_grid.TrainingFigures: the grid's bands at one grid d_k and that d_k
 * marked on the summary; on the served page, the student's run. `models` holds by name
 * the bands' sources (`training_scaled`, `training_unscaled`), the summary's mark
 * (`training_span`) and, where there is a run, its sources (`training_run`) and legend
 * entries (`training_run_items`): a model or a list of them. `spec` and `table` are the
 * grid's bands (app.page.training.training_spec, band_table as float32).
 */
class TrainingDrawing {
  constructor(models, spec, table) {
    this.scaled = all(models.training_scaled);
    this.unscaled = all(models.training_unscaled);
    this.span = all(models.training_span);
    this.run = models.training_run ? all(models.training_run) : [];
    this.runItems = models.training_run_items ? all(models.training_run_items) : [];
    this.spec = spec;
    this.table = table;
    /** The grid d_k index whose bands the sources hold. */
    this.bands = null;
  }

  /** Draw the bands of the grid's `g`-th d_k and mark that d_k (only on a change). */
  drawBands(g) {
    if (this.bands === g) return;
    const [scaledBands, unscaledBands] = lesson.trainingBands(this.spec, this.table, g);
    for (const source of this.scaled) source.data = scaledBands;
    for (const source of this.unscaled) source.data = unscaledBands;
    for (const span of this.span) span.location = this.spec.grid_d_values[g];
    this.bands = g;
  }

  /**
   * Draw the run `run` (its `step`, `loss` and `accuracy` columns), its legend entries
   * shown while it has a step: the entry of an empty line would show its label alone.
   */
  drawRun(run) {
    for (const source of this.run) {
      source.data = {
        step: run.step.slice(),
        loss: run.loss.slice(),
        accuracy: run.accuracy.slice(),
      };
    }
    const shown = run.step.length > 0;
    for (const item of this.runItems) {
      if (item.visible !== shown) item.visible = shown;
    }
  }
}

/** Save `body` as the CSV file `name`, as a download link does. */
function saveText(name, body) {
  const link = document.createElement("a");
  link.href = URL.createObjectURL(new Blob([body], { type: "text/csv" }));
  link.download = name;
  document.body.appendChild(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 0);
}

/** The worked example's switch shows the unscaled steps instead of the scaled ones. */
function listenToWorkedSwitch(scope) {
  const switchBox = scope.querySelector("#sdpa-worked-switch");
  const show = () => {
    scope.querySelector("#sdpa-worked-scaled").hidden = switchBox.checked;
    scope.querySelector("#sdpa-worked-unscaled").hidden = !switchBox.checked;
  };
  switchBox.addEventListener("change", show);
  show();
}

/**
 * The quiz under `scope` (app.page.lesson.quiz_html's markup): Check, or Enter in an
 * answer box, grades a question with `spec` (quiz_spec) and the query's `rules`, and
 * shows why in the question's feedback box; `onAnswer(question, answer)`, if given, hears
 * each answer checked (the served page counts a class's answers).
 */
function listenToQuiz(scope, spec, rules, onAnswer) {
  const quiz = scope.querySelector("#sdpa-quiz");
  const show = (button, result) => {
    const box = button.closest(".quiz-question").querySelector(".quiz-feedback");
    box.className = `${box.className.replace(/ (info|success|error)$/, "")} ${result.severity}`;
    box.querySelector(".quiz-title").textContent = result.title;
    box.querySelector(".quiz-message").textContent = result.message;
    box.hidden = false;
  };
  const check = (button) => {
    const question = button.dataset.check;
    const within = button.closest(".quiz-question");
    if (question === "matching") {
      const selects = [...within.querySelectorAll("select")];
      const answers = Object.fromEntries(selects.map((box) => [box.dataset.item, box.value]));
      const result = lesson.matchingFeedback(answers, spec);
      for (const box of selects) {
        // Nothing chosen yet is not an error; a wrong choice is marked.
        const wrong = result.correct !== null && !result.results[box.dataset.item];
        box.setAttribute("aria-invalid", String(wrong));
      }
      show(button, result);
      onAnswer?.(question, answers);
      return;
    }
    const answer = within.querySelector("input").value;
    show(button, lesson.answerFeedback(question, answer, spec, rules));
    onAnswer?.(question, answer);
  };
  for (const button of quiz.querySelectorAll("button[data-check]")) {
    button.addEventListener("click", () => check(button));
  }
  for (const input of quiz.querySelectorAll("input[data-question]")) {
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter") {
        check(input.closest(".quiz-question").querySelector("button[data-check]"));
      }
    });
  }
}

export {
  CollapseDrawing,
  listenToQuiz,
  listenToWorkedSwitch,
  OutputDrawing,
  RowDrawing,
  saveText,
  TrainingDrawing,
};
