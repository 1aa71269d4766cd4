/*
 * The lesson's numbers and feedback: what the lesson's views below the first screen show, computed
 * in the page from the data app/page/lesson.py embeds (the served page's own numbers
 * and words). Pure functions of that data and the page's state; offline/page.js puts their
 * results into the Bokeh models and the page.
 */

import * as kernel from "./kernel.js";
import * as query from "./query.js";
import * as text from "./text.js";

/** numpy.interp(x, xp, fp) for increasing xp: linear between points, flat beyond them. */
function interp(x, xp, fp) {
  const last = xp.length - 1;
  if (x <= xp[0]) {
    return fp[0];
  }
  if (x >= xp[last]) {
    return fp[last];
  }
  let j = 0;
  while (xp[j + 1] <= x) {
    j += 1;
  }
  const slope = (fp[j + 1] - fp[j]) / (xp[j + 1] - xp[j]);
  return slope * (x - xp[j]) + fp[j];
}

/** The slider temperature whose curves the page carries nearest `temperature`. */
function curveTemperature(spec, temperature) {
  return kernel.nearestIndex(spec.temperatures, temperature);
}

/** One band of `table` (app.page.lesson.collapse_table) as a plain array. */
function band(spec, table, t, s, m, b) {
  const points = spec.d_values.length;
  const start = (((t * 2 + s) * spec.metrics.length + m) * 3 + b) * points;
  return Array.from(table.subarray(start, start + points));
}

/**
 * The two curves at temperature index `t` as the served view's sources hold them
 * (app.page.views.collapse.curve_data): scaled first, then unscaled.
 */
function collapseCurves(spec, table, t) {
  return spec.labels.map((label, s) => {
    const data = { d: spec.d_values.slice(), curve: spec.d_values.map(() => label) };
    spec.metrics.forEach((name, m) => {
      data[name] = band(spec, table, t, s, m, 0);
      data[`${name}_low`] = band(spec, table, t, s, m, 1);
      data[`${name}_high`] = band(spec, table, t, s, m, 2);
    });
    return data;
  });
}

/** app.page.views.collapse.marker_data: the ring at `d` on the curve of the scale switch. */
function collapseMarker(spec, table, t, d, scaled) {
  const s = scaled ? 0 : 1;
  const logD = spec.d_values.map((value) => Math.log2(value));
  const data = { d: [d], colour: [spec.colours[s]] };
  spec.metrics.forEach((name, m) => {
    data[name] = [interp(Math.log2(d), logD, band(spec, table, t, s, m, 0))];
  });
  return data;
}

/** app.page.views.collapse.marker_caption's sentence, from numbers and the served words. */
function collapseCaption(spec, d, scaled, temperature) {
  const values = [String(d), spec.which[scaled ? 0 : 1], text.formatGeneral(temperature, 6)];
  return spec.caption.replace(/\{(\d)\}/g, (_match, index) => values[Number(index)]);
}

/**
 * Which of the page's d_k (`dValues`, the config's order) `d` is: the index of the
 * training spec's entries for it (app.page.training.training_spec), the nearest if a
 * value off the page's steps ever reaches it.
 */
function trainingIndex(dValues, d) {
  const index = dValues.indexOf(d);
  return index >= 0 ? index : kernel.nearestIndex(dValues, d);
}

/**
 * The bands of grid d_k index `g` as the served view's sources hold them
 * (app.page.views.training_grid.band_data), scaled first, then unscaled, from `table`
 * (app.page.training.band_table, float32).
 */
function trainingBands(spec, table, g) {
  const points = spec.steps.length;
  const columns = spec.columns.length;
  return [0, 1].map((s) => {
    const data = { step: spec.steps.slice() };
    spec.columns.forEach((name, c) => {
      const start = ((g * 2 + s) * columns + c) * points;
      data[name] = Array.from(table.subarray(start, start + points));
    });
    return data;
  });
}

/**
 * app.simulation.parts.row_comparison: query `row` of the controls' values `controls` (the
 * spec's names; clamped to the n×n matrix) of the raw scores (`stride` columns per row) as
 * softmax weights with and without the 1/√d_k scale, over the keys it may attend to, and
 * the entropy of each.
 */
function rowComparison(raw, stride, controls) {
  const { n, row, d_k: d, temperature, causal } = controls;
  const query = Math.min(Math.max(Math.trunc(row), 0), n - 1);
  const visible = causal ? query + 1 : n;
  const weights = [1.0 / Math.sqrt(d), 1.0].map((scale) => {
    const factor = scale / temperature;
    const x = new Float64Array(visible);
    for (let j = 0; j < visible; j++) {
      x[j] = raw[query * stride + j] * factor;
    }
    return kernel.softmaxRows(x, 1, visible);
  });
  const [scaled, unscaled] = weights;
  return {
    row: query,
    keys: visible,
    scaled,
    unscaled,
    scaledEntropy: kernel.rowEntropy(scaled, 1, visible)[0],
    unscaledEntropy: kernel.rowEntropy(unscaled, 1, visible)[0],
  };
}

/**
 * What the row comparison's figure shows (app.page.views.row_compare): the two bar sources,
 * the title and the two legend labels, from the served words in `spec`.
 */
function rowView(spec, comparison) {
  const bars = (weights, offset) => ({
    x: Array.from({ length: comparison.keys }, (_, j) => j + offset),
    weight: Array.from(weights),
  });
  const entropy = (value) => ({ entropy: text.formatFixed(value, 2) });
  return {
    scaled: bars(comparison.scaled, -spec.offset),
    unscaled: bars(comparison.unscaled, spec.offset),
    title: text.fill(spec.title, { row: comparison.row, keys: comparison.keys }),
    legend: [
      text.fill(spec.legend[0], entropy(comparison.scaledEntropy)),
      text.fill(spec.legend[1], entropy(comparison.unscaledEntropy)),
    ],
  };
}

/**
 * app.simulation.parts.output_frame: the first n rows of the values V (`dim` columns, float64)
 * and weights·V for the n×n `weights`, both as float32, and the largest |V| entry.
 */
function outputFrame(weights, n, values, dim) {
  const valuesImage = Float32Array.from(values.subarray(0, n * dim));
  const output = new Float32Array(n * dim);
  const row = new Float64Array(dim);
  for (let i = 0; i < n; i++) {
    row.fill(0);
    for (let j = 0; j < n; j++) {
      const w = weights[i * n + j];
      if (w !== 0) {
        for (let c = 0; c < dim; c++) {
          row[c] += w * values[j * dim + c];
        }
      }
    }
    output.set(row, i * dim);
  }
  let limit = 0;
  for (let i = 0; i < n * dim; i++) {
    limit = Math.max(limit, Math.abs(values[i]));
  }
  return { valuesImage, outputImage: output, limit };
}

/**
 * app.page.views.quiz's _clean: the answer stripped as Python strips it (`rules`: the query
 * rules' Unicode spaces), or null if it is not text or longer than the quiz reads.
 */
function cleanAnswer(answer, spec, rules) {
  if (typeof answer !== "string" || [...answer].length > spec.max_length) {
    return null;
  }
  return query.strip(answer, rules);
}

/** app.page.views.quiz.check_divisor: the number question 1 wants, read as float() reads it. */
function checkDivisor(answer, spec, rules) {
  const cleaned = cleanAnswer(answer, spec, rules);
  return Boolean(cleaned) && query.pythonFloat(cleaned, rules) === spec.divisor;
}

/** app.page.views.quiz.check_sqrt_blank: np.sqrt, numpy.sqrt, sqrt, with or without (). */
function checkSqrtBlank(answer, spec, rules) {
  const cleaned = cleanAnswer(answer, spec, rules);
  return Boolean(cleaned) && new RegExp(`^(?:${spec.sqrt_pattern})$`).test(cleaned.toLowerCase());
}

/** app.page.views.quiz.check_matching: by item key, whether its chosen match is right. */
function checkMatching(answers, spec) {
  return Object.fromEntries(
    spec.items.map((item) => [item.key, answers[item.key] === item.answer]),
  );
}

const SEVERITY = { none: "info", right: "success", wrong: "error" };

/** A feedback entry of the spec, with its severity (app.page.views.quiz.Feedback.severity). */
function feedback(entry, outcome) {
  return { ...entry, severity: SEVERITY[outcome] };
}

/** app.page.views.quiz.divisor_feedback and sqrt_blank_feedback, by question. */
function answerFeedback(question, answer, spec, rules) {
  const table = spec.feedback[question];
  if (typeof answer === "string" && query.strip(answer, rules) === "") {
    return feedback(table.none, "none");
  }
  const check = question === "divisor" ? checkDivisor : checkSqrtBlank;
  const outcome = check(answer, spec, rules) ? "right" : "wrong";
  return feedback(table[outcome], outcome);
}

/** app.page.views.quiz.matching_feedback, and which items are right (for marking the wrong). */
function matchingFeedback(answers, spec) {
  const table = spec.feedback.matching;
  const results = checkMatching(answers, spec);
  if (!spec.items.some((item) => answers[item.key])) {
    return { ...feedback(table.none, "none"), results };
  }
  const right = Object.values(results).filter(Boolean).length;
  if (right === spec.items.length) {
    return { ...feedback(table.right, "right"), results };
  }
  const wrong = spec.items.filter((item) => !results[item.key]).map((item) => item.label);
  return {
    ...feedback(table.wrong, "wrong"),
    title: text.fill(table.wrong.title, { right, total: spec.items.length }),
    message: text.fill(table.wrong.message, { wrong: wrong.join(", ") }),
    results,
  };
}

export {
  answerFeedback,
  checkDivisor,
  checkSqrtBlank,
  collapseCaption,
  collapseCurves,
  collapseMarker,
  curveTemperature,
  interp,
  matchingFeedback,
  outputFrame,
  rowComparison,
  rowView,
  trainingBands,
  trainingIndex,
};
