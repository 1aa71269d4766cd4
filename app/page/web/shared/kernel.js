/*
 * The offline kernel: the few sdpa_core computations the offline page needs.
 *
 * Each function mirrors its NumPy counterpart operation for operation (the same order of
 * floating-point steps, float32 where NumPy works in float32), so the page shows the
 * numbers the server shows; tests/export runs it under Node against sdpa_core. Pure
 * functions on typed arrays: no DOM, no Bokeh.
 */

/** The bytes of base64 text, as an ArrayBuffer (how the page embeds its numbers). */
function bufferFromBase64(text) {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) {
    bytes[i] = binary.charCodeAt(i);
  }
  return bytes.buffer;
}

/** Little-endian float32 values from base64 text (how the page embeds its samples). */
function float32FromBase64(text) {
  return new Float32Array(bufferFromBase64(text));
}

/** Little-endian float64 values from base64 text (the lesson's precomputed numbers). */
function float64FromBase64(text) {
  return new Float64Array(bufferFromBase64(text));
}

/**
 * Add the dimensions [from, to) of q_i·k_j to `out` (n×n, row-major) for tokens i, j < n.
 * q and k are row-major with `stride` dimensions per token. Feeding the dimensions in
 * several calls gives the raw scores of a growing d_k without redoing the first ones.
 */
function addDotProducts(out, q, k, stride, n, from, to) {
  for (let i = 0; i < n; i++) {
    const qi = i * stride;
    for (let j = 0; j < n; j++) {
      const kj = j * stride;
      let sum = 0;
      for (let t = from; t < to; t++) {
        sum += q[qi + t] * k[kj + t];
      }
      out[i * n + j] += sum;
    }
  }
  return out;
}

/** Raw scores q·k (n×n, float64) over the first d of `stride` dimensions. */
function rawScores(q, k, stride, n, d) {
  return addDotProducts(new Float64Array(n * n), q, k, stride, n, 0, d);
}

/**
 * The raw scores (n×n) at each d_k of an increasing grid, each position's built from the
 * one before it by adding only its new dimensions. Always built along that chain, a
 * position's numbers are the same whichever d_k asked for them first, and a page can
 * build the positions ahead, one `step()` at a time, while it is idle.
 *
 * A position asked for is kept; the ones built on the way to it only while they fit in
 * `budgetBytes` (a page exported with a large n could not keep them all).
 */
class RawScoreSteps {
  constructor(q, k, stride, n, dValues, budgetBytes = Infinity) {
    Object.assign(this, { q, k, stride, n, dValues });
    this.matrices = new Map();
    this.spare = Math.floor(budgetBytes / (n * n * Float64Array.BYTES_PER_ELEMENT));
  }

  /** The raw scores at d_k = dValues[index]. */
  at(index) {
    const known = this.matrices.get(index);
    if (known) {
      return known;
    }
    let from = -1;
    for (const built of this.matrices.keys()) {
      if (built < index && built > from) {
        from = built;
      }
    }
    const { q, k, stride, n, dValues } = this;
    let out = from < 0 ? new Float64Array(n * n) : Float64Array.from(this.matrices.get(from));
    for (let position = from + 1; position <= index; position++) {
      const low = position ? dValues[position - 1] : 0;
      addDotProducts(out, q, k, stride, n, low, dValues[position]);
      if (position < index && this.matrices.size < this.spare) {
        this.matrices.set(position, out);
        out = Float64Array.from(out);
      }
    }
    this.matrices.set(index, out);
    return out;
  }

  /** Build the lowest position not built yet; false once all are. */
  step() {
    for (let index = 0; index < this.dValues.length; index++) {
      if (!this.matrices.has(index)) {
        this.at(index);
        return true;
      }
    }
    return false;
  }
}

/**
 * The raw scores at every position of `dValues` as RawScoreSteps gives them when asked
 * for the last position first (so it builds the others on the way, or again when they do
 * not fit in `budgetBytes`).
 */
function rawScoresAtPositions(q, k, stride, n, dValues, budgetBytes = Infinity) {
  const steps = new RawScoreSteps(q, k, stride, n, dValues, budgetBytes);
  const matrices = [];
  for (let index = dValues.length - 1; index >= 0; index--) {
    matrices[index] = steps.at(index);
  }
  return matrices;
}

/**
 * The logits attention's softmax sees: raw × factor, -Infinity where the causal mask hides
 * a key (key j > query i). `raw` may be a larger matrix: its top-left n×n block is read
 * with `stride` columns per row.
 */
function logits(raw, stride, n, factor, causal) {
  const out = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      out[i * n + j] = causal && j > i ? -Infinity : raw[i * stride + j] * factor;
    }
  }
  return out;
}

/**
 * Softmax of each row of `x` (rows×cols) in place, as sdpa_core's: the row maximum is
 * subtracted first, -Infinity gets weight 0 and an all -Infinity row gives all zeros.
 */
function softmaxRows(x, rows, cols) {
  for (let i = 0; i < rows; i++) {
    const start = i * cols;
    let max = -Infinity;
    for (let j = start; j < start + cols; j++) {
      if (x[j] > max) {
        max = x[j];
      }
    }
    // An all -inf row keeps -inf after a zero shift, so exp gives 0 rather than NaN.
    if (!Number.isFinite(max)) {
      max = 0;
    }
    let sum = 0;
    for (let j = start; j < start + cols; j++) {
      x[j] = Math.exp(x[j] - max);
      sum += x[j];
    }
    if (sum === 0) {
      sum = 1;
    }
    for (let j = start; j < start + cols; j++) {
      x[j] /= sum;
    }
  }
  return x;
}

/** Largest weight of each row: sdpa_core.max_weight. */
function maxWeight(w, rows, cols) {
  const out = new Float64Array(rows);
  for (let i = 0; i < rows; i++) {
    let max = -Infinity;
    for (let j = i * cols; j < (i + 1) * cols; j++) {
      if (w[j] > max) {
        max = w[j];
      }
    }
    out[i] = max;
  }
  return out;
}

/** Shannon entropy in nats of each row, 0·log 0 counted as 0: sdpa_core.row_entropy. */
function rowEntropy(w, rows, cols) {
  const out = new Float64Array(rows);
  for (let i = 0; i < rows; i++) {
    let sum = 0;
    for (let j = i * cols; j < (i + 1) * cols; j++) {
      if (w[j] > 0) {
        sum += w[j] * Math.log(w[j]);
      }
    }
    out[i] = Math.max(-sum, 0);
  }
  return out;
}

/** Arithmetic mean of an array of numbers. */
function mean(values) {
  let sum = 0;
  for (let i = 0; i < values.length; i++) {
    sum += values[i];
  }
  return sum / values.length;
}

/** Population standard deviation in float64, as np.std(values, dtype=np.float64). */
function std(values) {
  const average = mean(values);
  let sum = 0;
  for (let i = 0; i < values.length; i++) {
    const deviation = values[i] - average;
    sum += deviation * deviation;
  }
  return Math.sqrt(sum / values.length);
}

/** np.linspace(start, stop, num) in float64: i·step + start, the last point exactly stop. */
function linspace(start, stop, num) {
  const out = new Float64Array(num);
  const step = (stop - start) / (num - 1);
  for (let i = 0; i < num; i++) {
    out[i] = i * step + start;
  }
  if (num > 1) {
    out[num - 1] = stop;
  }
  return out;
}

/**
 * sdpa_core.histogram: `bins` equal bins over [low, high] as a density normalised by all
 * values. It follows np.histogram step by step; for a Float32Array that means float32
 * edges, bounds and differences, as NumPy 2 computes for float32 input.
 */
function histogram(values, bins, low, high) {
  const single = values instanceof Float32Array;
  const round = single ? Math.fround : (x) => x;
  const first = round(low);
  const last = round(high);
  const grid = linspace(low, high, bins + 1);
  const edges = single ? new Float32Array(grid) : grid;
  const span = high - low;
  const counts = new Float64Array(bins);
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (!(value >= first && value <= last)) {
      continue;
    }
    let index = Math.trunc((round(value - first) / span) * bins);
    if (index === bins) {
      index -= 1;
    }
    // The index formula can be off by one within an ULP of an edge; the edges decide.
    if (value < edges[index]) {
      index -= 1;
    }
    if (value >= edges[index + 1] && index !== bins - 1) {
      index += 1;
    }
    counts[index] += 1;
  }
  const width = (values.length * span) / bins;
  const density = counts.map((count) => count / width);
  return { density, edges, counts };
}

/** Density of Normal(0, variance) at each x: sdpa_core.normal_pdf. */
function normalPdf(x, variance) {
  const norm = Math.sqrt(2.0 * Math.PI * variance);
  return x.map((value) => Math.exp((-0.5 * value * value) / variance) / norm);
}

/** Float32 dot products divided by float32(√d_k) in float32, as the server scales them. */
function scaleFloat32(values, d) {
  const divisor = Math.fround(Math.sqrt(d));
  const out = new Float32Array(values.length);
  for (let i = 0; i < values.length; i++) {
    out[i] = values[i] / divisor;
  }
  return out;
}

/**
 * app.simulation.parts's HistogramFrame: bars over ±halfWidth standard deviations of
 * Normal(0, variance), the density curve at `curvePoints` points, and the sample std.
 */
function histogramFrame(values, variance, bins, halfWidthInStd, curvePoints) {
  const halfWidth = halfWidthInStd * Math.sqrt(variance);
  const { density, edges } = histogram(values, bins, -halfWidth, halfWidth);
  const curveX = linspace(-halfWidth, halfWidth, curvePoints);
  return {
    left: edges.slice(0, bins),
    right: edges.slice(1),
    density,
    curveX,
    curveY: normalPdf(curveX, variance),
    std: std(values),
    expectedStd: Math.sqrt(variance),
    count: values.length,
  };
}

/** Float32 copy of the top-left n×n block of `values`, NaN where the causal mask hides. */
function maskedImage(values, stride, n, causal, divisor) {
  const image = new Float32Array(n * n);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      image[i * n + j] = causal && j > i ? NaN : values[i * stride + j] / divisor;
    }
  }
  return image;
}

/** app.simulation.parts.score_images: raw and scaled score images and their colour-bar limits. */
function scoreImages(raw, stride, controls) {
  const { n, d_k: d, causal } = controls;
  let limit = 0;
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      limit = Math.max(limit, Math.abs(raw[i * stride + j]));
    }
  }
  const root = Math.sqrt(d);
  return {
    rawImage: maskedImage(raw, stride, n, causal, 1),
    scaledImage: maskedImage(raw, stride, n, causal, root),
    rawLimit: limit,
    scaledLimit: limit / root,
  };
}

/**
 * app.simulation.parts.weights_frame: attention weights of the top-left n×n raw scores for the
 * scale, temperature and mask the controls' values `controls` set (the spec's names), and
 * the collapse readouts computed from them.
 */
function weightsFrame(raw, stride, controls) {
  const { n, d_k: d, scaled, temperature, causal } = controls;
  const scale = scaled ? 1.0 / Math.sqrt(d) : 1.0;
  const weights = softmaxRows(logits(raw, stride, n, scale / temperature, causal), n, n);
  const visible = Float64Array.from({ length: n }, (_, i) => (causal ? i + 1 : n));
  return {
    weights,
    weightsImage: maskedImage(weights, n, n, causal, 1),
    meanMaxWeight: mean(maxWeight(weights, n, n)),
    meanEntropy: mean(rowEntropy(weights, n, n)),
    uniformEntropy: mean(visible.map(Math.log)),
    uniformMaxWeight: mean(visible.map((keys) => 1.0 / keys)),
  };
}

/** Index of the grid entry closest to `value` on a log scale (the first on a tie). */
function nearestIndex(grid, value) {
  const target = Math.log(value);
  let best = 0;
  for (let i = 1; i < grid.length; i++) {
    if (Math.abs(Math.log(grid[i]) - target) < Math.abs(Math.log(grid[best]) - target)) {
      best = i;
    }
  }
  return best;
}

export {
  addDotProducts,
  float32FromBase64,
  float64FromBase64,
  histogram,
  histogramFrame,
  linspace,
  logits,
  maxWeight,
  mean,
  nearestIndex,
  normalPdf,
  RawScoreSteps,
  rawScores,
  rawScoresAtPositions,
  rowEntropy,
  scaleFloat32,
  scoreImages,
  softmaxRows,
  std,
  weightsFrame,
};
