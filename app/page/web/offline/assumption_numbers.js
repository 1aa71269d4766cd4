/*
 * The offline assumptions section's numbers: the lesson's "When the assumptions break" section computed
 * in the page — other standard deviations of q and k, the softmax in float32, float16 or
 * bfloat16 with or without the max subtraction, and the two CSV files.
 *
 * Each function mirrors its sdpa_core or app counterpart (named in its comment) step for
 * step; tests/export compares them under Node and in the page. Pure functions: no DOM, no
 * Bokeh.
 */
import * as kernel from "../shared/kernel.js";
import * as text from "../shared/text.js";

/**
 * `x` rounded to the nearest number with `bits` significant bits (ties to even), with a
 * fixed ulp below 2**minExponent (subnormals) and ±inf beyond `maxFinite`.
 */
function roundToBits(x, bits, minExponent, maxFinite) {
  if (!Number.isFinite(x) || x === 0) {
    return x;
  }
  const size = Math.abs(x);
  let exponent = Math.floor(Math.log2(size));
  // Math.log2 may miss by one next to a power of two.
  if (2 ** exponent > size) {
    exponent -= 1;
  } else if (2 ** (exponent + 1) <= size) {
    exponent += 1;
  }
  const ulp = 2 ** (Math.max(exponent, minExponent) - (bits - 1));
  const scaled = size / ulp;
  let whole = Math.floor(scaled);
  const rest = scaled - whole;
  if (rest > 0.5 || (rest === 0.5 && whole % 2 === 1)) {
    whole += 1;
  }
  const rounded = whole * ulp > maxFinite ? Infinity : whole * ulp;
  return x < 0 ? -rounded : rounded;
}

const FLOAT16_MAX = 65504;
const BFLOAT16_MAX = (2 - 2 ** -7) * 2 ** 127;

/**
 * sdpa_core.precision.round_to_format, by format name: float64 as is, float32 by
 * Math.fround, float16 straight from the double (as the core's bit rounding does) and
 * bfloat16 through float32 (as ml_dtypes casts a float64).
 */
const ROUND = {
  float64: (x) => x,
  float32: Math.fround,
  float16: (x) => roundToBits(x, 11, -14, FLOAT16_MAX),
  bfloat16: (x) => roundToBits(Math.fround(x), 8, -126, BFLOAT16_MAX),
};

/** Every value of `values` rounded to the format `precision` (a new float64 array). */
function roundToFormat(values, precision) {
  return Float64Array.from(values, ROUND[precision]);
}

/** The arithmetic a format's operations run in (sdpa_core.accumulator_dtype). */
function accumulate(precision) {
  return precision === "float64" ? (x) => x : Math.fround;
}

/** NumPy's pairwise sum of `values[start, start + count)`, each addition through `op`. */
function pairwiseSum(values, start, count, op) {
  if (count < 8) {
    let sum = 0;
    for (let i = start; i < start + count; i++) {
      sum = op(sum + values[i]);
    }
    return sum;
  }
  if (count <= 128) {
    const partial = [];
    for (let j = 0; j < 8; j++) {
      partial.push(values[start + j]);
    }
    let i = 8;
    for (; i < count - (count % 8); i += 8) {
      for (let j = 0; j < 8; j++) {
        partial[j] = op(partial[j] + values[start + i + j]);
      }
    }
    const [a, b, c, d, e, f, g, h] = partial;
    let sum = op(op(op(a + b) + op(c + d)) + op(op(e + f) + op(g + h)));
    for (; i < count; i++) {
      sum = op(sum + values[start + i]);
    }
    return sum;
  }
  let half = Math.floor(count / 2);
  half -= half % 8;
  return op(
    pairwiseSum(values, start, half, op) + pairwiseSum(values, start + half, count - half, op),
  );
}

/**
 * sdpa_core.softmax(logits, stable=, dtype=precision) of each row of `logits`
 * (rows×cols, float64, -Infinity where masked): the logits rounded to the format, then
 * the subtraction, exp, row sum and division each rounded to it. Overflow stays inf or
 * NaN; only an entirely masked row gets zeros.
 */
function softmaxInFormat(logits, rows, cols, precision, stable) {
  const round = ROUND[precision];
  const op = accumulate(precision);
  const out = new Float64Array(rows * cols);
  for (let i = 0; i < rows; i++) {
    const start = i * cols;
    const end = start + cols;
    let masked = true;
    for (let j = start; j < end; j++) {
      out[j] = round(logits[j]);
      masked = masked && out[j] === -Infinity;
    }
    if (stable) {
      let max = -Infinity;
      for (let j = start; j < end; j++) {
        // NumPy's max: NaN wins, +inf over everything.
        if (out[j] > max || Number.isNaN(out[j])) {
          max = out[j];
        }
      }
      if (masked) {
        max = 0;
      }
      for (let j = start; j < end; j++) {
        out[j] = round(op(out[j] - max));
      }
    }
    for (let j = start; j < end; j++) {
      out[j] = round(op(Math.exp(out[j])));
    }
    const sum = masked ? 1 : round(pairwiseSum(out, start, cols, op));
    for (let j = start; j < end; j++) {
      out[j] = round(op(out[j] / sum));
    }
  }
  return out;
}

/**
 * sdpa_core.precision_report: the non-finite entries of `values` (NaN and ±inf) and the
 * largest |values − reference| where both are finite (NaN when nowhere).
 */
function precisionReport(values, reference) {
  let nan = 0;
  let inf = 0;
  let error = -Infinity;
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (Number.isNaN(value)) {
      nan += 1;
    } else if (!Number.isFinite(value)) {
      inf += 1;
    } else if (Number.isFinite(reference[i])) {
      error = Math.max(error, Math.abs(value - reference[i]));
    }
  }
  return {
    size: values.length,
    nan,
    inf,
    nonFinite: nan + inf,
    maxAbsError: error === -Infinity ? NaN : error,
  };
}

/** Where a weight is inf or NaN (n×n, 1 or 0), or null when every weight is finite. */
function overflowMask(weights, n) {
  let any = false;
  const mask = new Uint8Array(n * n);
  for (let i = 0; i < n * n; i++) {
    if (!Number.isFinite(weights[i])) {
      mask[i] = 1;
      any = true;
    }
  }
  return any ? mask : null;
}

/** Mean of `values` over the rows `keep` says (all when null); NaN over none. */
function meanOver(values, keep) {
  let sum = 0;
  let count = 0;
  for (let i = 0; i < values.length; i++) {
    if (!keep || keep[i]) {
      sum += values[i];
      count += 1;
    }
  }
  return count ? sum / count : NaN;
}

/**
 * app.simulation.parts.weights_frame of the controls' values `controls` (the spec's names,
 * as the Python reads them), with its precision and max subtraction: the weights of the
 * top-left n×n raw scores, the collapse readouts over the rows whose weights are all
 * finite, the report against float64 and the largest logit.
 */
function weightsFrame(raw, stride, controls) {
  const { n, d_k: d, scaled, temperature, causal, precision } = controls;
  const stable = controls.subtract_max;
  const factor = (scaled ? 1.0 / Math.sqrt(d) : 1.0) / temperature;
  const frame = kernel.weightsFrame(raw, stride, controls);
  // The factor is positive, so the largest logit is the largest visible score times it.
  let maxRaw = -Infinity;
  for (let i = 0; i < n; i++) {
    const visible = causal ? i + 1 : n;
    for (let j = 0; j < visible; j++) {
      maxRaw = Math.max(maxRaw, raw[i * stride + j]);
    }
  }
  const common = { precision, stable, maxLogit: maxRaw * factor };
  if (precision === "float64" && stable) {
    const report = { size: n * n, nan: 0, inf: 0, nonFinite: 0, maxAbsError: 0 };
    return { ...frame, ...common, report, overflow: null };
  }
  const logits = kernel.logits(raw, stride, n, factor, causal);
  const weights = softmaxInFormat(logits, n, n, precision, stable);
  const report = precisionReport(weights, frame.weights);
  const overflow = report.nonFinite ? overflowMask(weights, n) : null;
  let rows = null;
  if (overflow) {
    rows = Uint8Array.from(
      { length: n },
      (_, i) => !overflow.subarray(i * n, (i + 1) * n).includes(1),
    );
  }
  return {
    ...frame,
    ...common,
    weights,
    weightsImage: maskedImage(weights, n, causal),
    meanMaxWeight: meanOver(kernel.maxWeight(weights, n, n), rows),
    meanEntropy: meanOver(kernel.rowEntropy(weights, n, n), rows),
    report,
    overflow,
  };
}

/** Float32 copy of n×n weights, NaN where the causal mask hides (app.simulation.parts.masked_image). */
function maskedImage(weights, n, causal) {
  const image = new Float32Array(weights);
  if (causal) {
    for (let i = 0; i < n; i++) {
      image.fill(NaN, i * n + i + 1, (i + 1) * n);
    }
  }
  return image;
}

/**
 * The heatmap's overflow layer (app.page.views.heatmap's _overflow_data): 1 where a weight
 * overflowed, NaN (transparent) elsewhere, or a single NaN cell when none did.
 */
function overflowImage(overflow, n) {
  if (!overflow) {
    return { image: new Float32Array([NaN]), shape: [1, 1] };
  }
  const image = new Float32Array(n * n);
  for (let i = 0; i < n * n; i++) {
    image[i] = overflow[i] ? 1 : NaN;
  }
  return { image, shape: [n, n] };
}

/** σ_q·σ_k: what every raw score and pooled dot product is multiplied by (ρ = 0). */
function lawFactor(state) {
  return state.sigma_q * state.sigma_k;
}

/** sdpa_core.dot_product_moments(d, sigma_q, sigma_k) at ρ = 0: [mean, variance]. */
function dotProductMoments(d, sigmaQ, sigmaK) {
  const rho = 0.0;
  const scale = sigmaQ * sigmaK;
  return [rho * d * scale, d * scale * scale * (1.0 + rho * rho)];
}

/** Raw scores of Q' = σ_q·Q, K' = σ_k·K: every entry times σ_q·σ_k (a new array). */
function scaleScores(raw, factor) {
  const out = new Float64Array(raw.length);
  for (let i = 0; i < raw.length; i++) {
    out[i] = raw[i] * factor;
  }
  return out;
}

/**
 * sdpa_core.dot_product_pool with sigma_q, sigma_k (ρ = 0): the float32 pooled dot
 * products times σ_q·σ_k in float64, rounded to float32 once.
 */
function scaleDotProducts(values, factor) {
  const out = new Float32Array(values.length);
  for (let i = 0; i < values.length; i++) {
    out[i] = values[i] * factor;
  }
  return out;
}

/** Python's repr of a float: the shortest digits that give it back, in Python's layout. */
function pythonRepr(x) {
  if (!Number.isFinite(x)) {
    return Number.isNaN(x) ? "nan" : x > 0 ? "inf" : "-inf";
  }
  const [mantissa, exponentText] = x.toExponential().split("e");
  const exponent = Number(exponentText);
  const negative = mantissa.startsWith("-");
  const digits = mantissa.replace("-", "").replace(".", "");
  let body;
  if (exponent < -4 || exponent >= 16) {
    const fraction = digits.length > 1 ? `.${digits.slice(1)}` : "";
    const size = String(Math.abs(exponent)).padStart(2, "0");
    body = `${digits[0]}${fraction}e${exponent < 0 ? "-" : "+"}${size}`;
  } else if (exponent < 0) {
    body = `0.${"0".repeat(-exponent - 1)}${digits}`;
  } else if (digits.length <= exponent + 1) {
    body = `${digits.padEnd(exponent + 1, "0")}.0`;
  } else {
    body = `${digits.slice(0, exponent + 1)}.${digits.slice(exponent + 1)}`;
  }
  return (negative || Object.is(x, -0) ? "-" : "") + body;
}

/** "%.9g" of a float32 value: nine significant digits, which give the float32 back. */
function nineDigits(x) {
  return text.formatGeneral(x, 9);
}

/**
 * app.simulation.csv_files.matrix_csv: every cell of the heatmap, row by row (query, key, raw,
 * scaled, weight as the page draws them); masked cells empty, overflow "nan"/"inf".
 */
function matrixCsv(columns, n, causal, rawImage, scaledImage, weightsImage) {
  const lines = [columns.join(",")];
  for (let i = 0; i < n; i++) {
    const visible = causal ? i + 1 : n;
    for (let j = 0; j < n; j++) {
      const at = i * n + j;
      lines.push(
        j < visible
          ? `${i},${j},${nineDigits(rawImage[at])},${nineDigits(scaledImage[at])},` +
              nineDigits(weightsImage[at])
          : `${i},${j},,,`,
      );
    }
  }
  return `${lines.join("\n")}\n`;
}

/** app.simulation.csv_files.histogram_rows: one histogram's bins, named `name`. */
function histogramRows(name, frame) {
  const variance = frame.expectedStd ** 2;
  const mean = frame.expectedMean || 0;
  const norm = Math.sqrt(2 * Math.PI * variance);
  return Array.from(frame.density, (density, b) => {
    const left = frame.left[b];
    const right = frame.right[b];
    const centre = (left + right) / 2;
    const count = Math.round(density * frame.count * Math.fround(right - left));
    const curve = Math.exp((-0.5 * (centre - mean) ** 2) / variance) / norm;
    return [
      name,
      pythonRepr(left),
      pythonRepr(right),
      count,
      pythonRepr(density),
      pythonRepr(curve),
    ].join(",");
  });
}

/**
 * app.simulation.csv_files.histogram_csv: both histograms' bins, raw first, then scaled, each named
 * as `rowNames` says (app.simulation.csv_files.HISTOGRAM_ROW_NAMES).
 */
function histogramCsv(columns, rowNames, raw, scaled) {
  const [rawName, scaledName] = rowNames;
  const rows = [...histogramRows(rawName, raw), ...histogramRows(scaledName, scaled)];
  return `${columns.join(",")}\n${rows.join("\n")}\n`;
}

/** app.simulation.csv_files's _short: a control's value in a file name, in `words`' terms. */
function shortValue(value, words) {
  if (typeof value === "boolean") {
    return value ? words.on : words.off;
  }
  return typeof value === "number" ? text.fill(words.number, { value }) : String(value);
}

/** app.simulation.csv_files's _changed: "name-value" for each named control not at its default. */
function changedParts(state, names, defaults, words) {
  return names
    .filter((name) => name in state && state[name] !== defaults[name])
    .map((name) => text.fill(words.control, { name, value: shortValue(state[name], words) }));
}

/** app.simulation.csv_files.matrix_filename, from its words and templates (`csv.words`). */
function matrixFilename(state, csv) {
  const words = csv.words;
  const parts = [
    words.start,
    text.fill(words.d_k, { d_k: state.d_k }),
    text.fill(words.temperature, { temperature: state.temperature }),
    text.fill(words.n, { n: state.n }),
    state.scaled ? words.scaled : words.unscaled,
  ];
  if (state.causal) {
    parts.push(words.causal);
  }
  parts.push(...changedParts(state, csv.matrix_name_controls, csv.defaults, words));
  return parts.join(words.join) + words.end;
}

/** app.simulation.csv_files.histogram_filename, from its words and templates (`csv.words`). */
function histogramFilename(state, csv) {
  const words = csv.words;
  const parts = [
    words.start,
    text.fill(words.d_k, { d_k: state.d_k }),
    ...changedParts(state, csv.histogram_name_controls, csv.defaults, words),
    words.histogram,
  ];
  return parts.join(words.join) + words.end;
}

/**
 * app.page.views.assumptions.finite_readout: `value` written by `template` (its `{value}` field), or
 * `texts.missing` when it is not finite.
 */
function finiteOrMissing(texts, template, value) {
  return Number.isFinite(value) ? text.fill(template, { value }) : texts.missing;
}

/**
 * app.page.views.assumptions.assumptions_html: the law of q·k (expected against measured) and
 * the softmax's overflow in the chosen format, for `state` and its frames, from `texts`
 * (app.page.views.assumptions.ASSUMPTION_TEXTS, the section's config); `threshold` is where exp
 * overflows in the state's format; with `keep` (the tile ids of a group,
 * app.page.views.assumptions.READOUT_GROUPS), those tiles only, in its order. The file has
 * neither ρ nor QK-norm.
 */
function sectionReadoutsHtml(texts, state, raw, scaled, weights, threshold, keep) {
  const d = state.d_k;
  const [mean, variance] = dotProductMoments(d, state.sigma_q, state.sigma_k);
  const report = weights.report;
  const tiles = {
    "law-mean": [texts.mean_label, finiteOrMissing(texts, texts.mean, mean), texts.mean_reference],
    "law-std": [
      texts.std_label,
      text.fill(texts.std, { value: scaled.std }),
      text.fill(texts.std_reference, { expected: Math.sqrt(variance / d), raw: raw.expectedStd }),
    ],
    "largest-logit": [
      texts.logit_label,
      finiteOrMissing(texts, texts.logit, weights.maxLogit),
      text.fill(texts.logit_reference, { threshold, precision: state.precision }),
    ],
    "precision-non-finite": [
      texts.non_finite_label,
      text.fill(texts.non_finite, { value: report.nonFinite }),
      text.fill(texts.non_finite_reference, { size: report.size }),
    ],
    "precision-error": [
      texts.error_label,
      text.numberOrMissing(texts, texts.error, report.maxAbsError),
      texts.error_reference,
    ],
  };
  const shown = (keep || Object.keys(tiles)).map((id) => text.tile(texts, id, ...tiles[id]));
  return text.fill(texts.section, { tiles: shown.join("") });
}

export {
  dotProductMoments,
  histogramCsv,
  histogramFilename,
  lawFactor,
  matrixCsv,
  matrixFilename,
  overflowImage,
  pairwiseSum,
  precisionReport,
  pythonRepr,
  roundToBits,
  roundToFormat,
  scaleDotProducts,
  scaleScores,
  sectionReadoutsHtml,
  softmaxInFormat,
  weightsFrame,
};
