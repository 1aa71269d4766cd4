/*
 * The offline page's number source: its numbers, computed in the browser with kernel.js.
 *
 * The page's drawing code (offline/page.js's ExportPage) draws frames of numbers and never
 * computes them; a *number source* delivers them. This is the offline file's source; a
 * served session is the other (app/page/frames.py writes the same frames in Python, and
 * tests/export/test_source.py checks the two agree). A source has this interface:
 *
 *   source.connect(deliver)   deliver(frame) receives every frame the source makes.
 *   source.request(request)   request = { sequence, state, parts }: the numbers of `parts`
 *                             (model part names, app.simulation.spec) for `state` (the
 *                             controls' values; the source may keep the object). Sequences
 *                             increase with each request.
 *   source.start()            Work the source does once the page has painted (optional).
 *
 *   frame = { sequence, state, parts, numbers }
 *     sequence  the last request the frame answers; state  the state its numbers are of;
 *     parts     every part it answers (those of all the requests it answers);
 *     numbers   part → exactly the fields config.frame_fields.parts names for it
 *               (app.page.frames.FRAME_FIELDS; a histogram's and the precision report's
 *               in .histogram and .report); a part drawn without numbers (view) is in
 *               `parts` only. Images are flat row-major Float32Arrays (n×n, n×d_v).
 *
 * A source answers every request, at once (this one: deliver runs inside request) or
 * later (a session: over the websocket), and may answer several requests with one frame
 * (a session folding the moves of a drag into one update). The page draws each part from
 * the newest frame that carries it and drops a frame older than the one it last drew for
 * a part, so a late answer never paints over a newer state.
 */
import * as K from "../shared/kernel.js";
import * as L from "../shared/lesson_numbers.js";
import * as A from "./assumption_numbers.js";

/** Most memory the raw scores of the d_k positions no one asked for may take (every
 * position's take 4 MiB at the default n_max = 128): a page within it builds them all
 * ahead. */
const AHEAD_BYTES = 32 * 2 ** 20;
/** Idle time left for the browser after a step of building ahead: a step takes up to
 * about 2 ms (the 81 dimensions between the last two default positions). */
const AHEAD_SLACK_MS = 3;

/**
 * Run `work(deadline)` in idle periods until it returns false. Without
 * requestIdleCallback (Safari), on timer ticks that each allow about one step.
 */
function inIdleTime(work) {
  if (typeof globalThis.requestIdleCallback === "function") {
    const run = (deadline) => {
      if (work(deadline)) {
        globalThis.requestIdleCallback(run);
      }
    };
    globalThis.requestIdleCallback(run);
    return;
  }
  const run = () => {
    const end = performance.now() + AHEAD_SLACK_MS + 1;
    if (work({ timeRemaining: () => Math.max(0, end - performance.now()) })) {
      globalThis.setTimeout(run, 20);
    }
  };
  globalThis.setTimeout(run, 20);
}

/** The fields of `object` that `fields` names, and only those (what a frame carries). */
function pick(object, fields) {
  return Object.fromEntries(fields.map((name) => [name, object[name]]));
}

/**
 * The offline source: the numbers of the page's samples (config.data, app/page/kernel_data.py)
 * for any state, computed as the server computes them (kernel.js, offline/assumption_numbers.js,
 * lesson_numbers.js mirror sdpa_core and app.simulation.parts).
 */
class KernelSource {
  /**
   * `config` holds `data` (the samples), `histogram` (bins, half_width, curve_points),
   * `output` (the values V), `parts`, `inputs` and `frame_fields`: what
   * app.export.page.source_config writes.
   */
  constructor(config) {
    this.config = config;
    const data = config.data;
    this.data = data;
    this.part = config.parts;
    this.fields = config.frame_fields;
    // Float64 copies: the inner product loop then reads doubles without converting.
    this.q = Float64Array.from(K.float32FromBase64(data.q));
    this.k = Float64Array.from(K.float32FromBase64(data.k));
    this.dot = K.float32FromBase64(data.dot);
    this.raw = new K.RawScoreSteps(
      this.q,
      this.k,
      data.d_max,
      data.n_max,
      data.d_values,
      AHEAD_BYTES,
    );
    /** The raw and scaled histogram frames, by d_k: they depend on nothing else. */
    this.histograms = new Map();
    this.values = K.float64FromBase64(config.output.values);
    /** The last float64 weights computed (the output multiplies them with V), by key. */
    this.lastWeights = null;
    this.deliver = () => {};
  }

  /** Send every frame to `deliver` from now on. */
  connect(deliver) {
    this.deliver = deliver;
  }

  /** Compute the requested parts of the state and deliver their frame at once. */
  request({ sequence, state, parts }) {
    const numbers = {};
    for (const part of parts) {
      const values = this.numbers(state, part);
      if (values !== null) {
        numbers[part] = values;
      }
    }
    this.deliver({ sequence, state, parts: [...parts], numbers });
  }

  /** Build ahead once the page has painted: every d_k position's raw scores and histograms. */
  start() {
    this.buildAhead();
  }

  /**
   * One part's numbers for `state`: the fields config.frame_fields names for it
   * (app.page.frames.frame_fields_spec), or null for a part without numbers (view). The
   * state is the controls' values by the spec's names, handed whole to each part's
   * function, as app.simulation.model's refresh hands its values mapping.
   */
  numbers(state, part) {
    const P = this.part;
    const fields = this.fields;
    const stride = this.data.n_max;
    if (part === P.scores) {
      const images = K.scoreImages(this.scoresFor(state), stride, state);
      return pick(images, fields.parts[part]);
    }
    if (part === P.weights) {
      const frame = this.weightsFrame(state);
      const overflowImage = frame.overflow ? A.overflowImage(frame.overflow, state.n).image : null;
      const report = pick(frame.report, fields.report);
      return pick({ ...frame, overflowImage, report }, fields.parts[part]);
    }
    if (part === P.histograms) {
      const frames = this.histogramFrames(state);
      return {
        raw: pick(frames.raw, fields.histogram),
        scaled: pick(frames.scaled, fields.histogram),
      };
    }
    if (part === P.row) {
      const comparison = L.rowComparison(this.scoresFor(state), stride, state);
      return pick(comparison, fields.parts[part]);
    }
    if (part === P.output) {
      const weights = this.weightsFor(state);
      const frame = L.outputFrame(weights, state.n, this.values, this.config.output.dim);
      return pick(frame, fields.parts[part]);
    }
    return null;
  }

  /** The weights frame of `state` (assumption_numbers.js: any precision, with or without the max). */
  weightsFrame(state) {
    const frame = A.weightsFrame(this.scoresFor(state), this.data.n_max, state);
    this.lastWeights = { key: this.partKey(this.part.weights, state), weights: frame.weights };
    return frame;
  }

  /** The float64 weights of `state`: those of the last weights frame when it was its. */
  weightsFor(state) {
    if (this.lastWeights?.key !== this.partKey(this.part.weights, state)) {
      this.weightsFrame(state);
    }
    return this.lastWeights.weights;
  }

  /**
   * The values of the controls `part` depends on (config.inputs: the spec's graph), as one
   * string: what the caches of a part's numbers are keyed by.
   */
  partKey(part, state) {
    return this.config.inputs[part].map((name) => state[name]).join(" ");
  }

  /** Raw scores of all n_max tokens over the first d dimensions (d a slider position). */
  rawScores(d) {
    return this.raw.at(this.data.d_values.indexOf(d));
  }

  /**
   * The raw scores of Q' = σ_q·Q and K' = σ_k·K over the state's first d_k dimensions: the
   * cached ones under the lesson's law, else those times σ_q·σ_k (kept for the last d and σ).
   */
  scoresFor(state) {
    const d = state.d_k;
    const raw = this.rawScores(d);
    const factor = A.lawFactor(state);
    if (factor === 1) {
      return raw;
    }
    const key = `${d} ${factor}`;
    if (this.lawScores?.key !== key) {
      this.lawScores = { key, scores: A.scaleScores(raw, factor) };
    }
    return this.lawScores.scores;
  }

  /** The pooled raw dot products at d_k = d (one row of the samples). */
  dotProducts(d) {
    const row = this.data.d_values.indexOf(d);
    return this.dot.subarray(row * this.data.pairs, (row + 1) * this.data.pairs);
  }

  /** The raw and the scaled histogram frames of `state` (its d_k, σ_q and σ_k). */
  histogramFrames(state) {
    return this.histogramsAt(state.d_k, state.sigma_q, state.sigma_k);
  }

  /** The raw and the scaled histogram frames at d_k = d for q and k of stds σ_q, σ_k. */
  histogramsAt(d, sigmaQ = 1, sigmaK = 1) {
    // The lesson's law is kept for every d_k; another law for the last d_k and σ only.
    const lesson = sigmaQ === 1 && sigmaK === 1;
    const key = `${d} ${sigmaQ} ${sigmaK}`;
    let frames = lesson ? this.histograms.get(d) : this.lawHistograms?.[key];
    if (!frames) {
      const { bins, half_width: halfWidth, curve_points: points } = this.config.histogram;
      const factor = sigmaQ * sigmaK;
      const pooled = this.dotProducts(d);
      const values = factor === 1 ? pooled : A.scaleDotProducts(pooled, factor);
      const [mean, variance] = A.dotProductMoments(d, sigmaQ, sigmaK);
      const root = Math.sqrt(d);
      frames = {
        raw: {
          ...K.histogramFrame(values, variance, bins, halfWidth, points),
          expectedMean: mean,
        },
        scaled: {
          ...K.histogramFrame(K.scaleFloat32(values, d), variance / d, bins, halfWidth, points),
          expectedMean: mean / root,
        },
      };
      if (lesson) {
        this.histograms.set(d, frames);
      } else {
        this.lawHistograms = { [key]: frames };
      }
    }
    return frames;
  }

  /**
   * Build every d_k position's raw scores and histograms while the page is idle, a step
   * of a few milliseconds at a time, so that a d_k move finds them ready, as a
   * temperature move does. The raw scores only within AHEAD_BYTES: a page exported with
   * a large n_max builds a position's when it is first shown, as before.
   */
  buildAhead() {
    const positions = this.data.d_values;
    const matrixBytes = this.data.n_max * this.data.n_max * Float64Array.BYTES_PER_ELEMENT;
    const rawAhead = positions.length * matrixBytes <= AHEAD_BYTES;
    let next = 0;
    const step = () => {
      if (rawAhead && this.raw.step()) {
        return true;
      }
      if (next < positions.length) {
        this.histogramsAt(positions[next]);
        next += 1;
        return true;
      }
      return false;
    };
    inIdleTime((idle) => {
      while (idle.timeRemaining() > AHEAD_SLACK_MS) {
        if (!step()) {
          return false;
        }
      }
      return true;
    });
  }
}

/**
 * The frames a KernelSource made of `config` delivers for `requests`, in order (for the
 * tests: the offline source's side of app.page.frames's frames).
 */
function framesFor(config, requests) {
  const source = new KernelSource(config);
  const frames = [];
  source.connect((frame) => frames.push(frame));
  for (const request of requests) {
    source.request(request);
  }
  return frames;
}

export { framesFor, KernelSource };
