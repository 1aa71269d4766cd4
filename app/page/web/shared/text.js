/*
 * The words and numbers both pages write, as the server writes them. Python's number formats (".1f", ".3g", "g") and its str.format (`fill`);
 * the readout tiles of app.page.views.readouts and the histogram titles of app.page.views.histogram,
 * whose words and formats it receives as data (`texts`: the templates those modules own,
 * handed over in the page's config) and fills from numbers: the logic of which text applies
 * is here, the texts are not. Nothing is built from the URL.
 */

/**
 * The exact decimal digits of |x| (finite) as {digits, point}: the value is
 * 0.digits × 10^point. A double is m × 2^e exactly, that is m × 5^-e × 10^e, which BigInt
 * writes out in full; exact digits let the rounding below break exact ties to even, as
 * Python does (JavaScript's toFixed and toPrecision round them up).
 */
function decimalDigits(x) {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, Math.abs(x));
  const bits = view.getBigUint64(0);
  const biased = Number(bits >> 52n);
  let mantissa = bits & ((1n << 52n) - 1n);
  if (mantissa === 0n && biased === 0) {
    return { digits: "0", point: 1 };
  }
  let exponent = -1074;
  if (biased > 0) {
    mantissa |= 1n << 52n;
    exponent = biased - 1075;
  }
  if (exponent >= 0) {
    const digits = (mantissa << BigInt(exponent)).toString();
    return { digits: digits.replace(/0+$/, ""), point: digits.length };
  }
  const digits = (mantissa * 5n ** BigInt(-exponent)).toString();
  return { digits: digits.replace(/0+$/, ""), point: digits.length + exponent };
}

/**
 * Round a digit string to `keep` digits, half to even. Returns `keep` digits and a carry
 * of 1 when the rounding overflowed them (999 → 000, carry 1).
 */
function roundDigits(digits, keep) {
  if (keep < 0) {
    return { digits: "", carry: 0 };
  }
  const padded = digits.padEnd(keep + 1, "0");
  const kept = padded.slice(0, keep);
  const next = Number(padded[keep]);
  const rest = /[1-9]/.test(padded.slice(keep + 1));
  const lastOdd = kept.length > 0 && Number(kept[kept.length - 1]) % 2 === 1;
  if (next < 5 || (next === 5 && !rest && !lastOdd)) {
    return { digits: kept, carry: 0 };
  }
  const incremented = (BigInt(`1${kept}`) + 1n).toString();
  // A leading "2" means the carry ran through every kept digit (…999 + 1 = 1000…).
  return { digits: incremented.slice(1), carry: incremented[0] === "2" ? 1 : 0 };
}

function sign(x) {
  return x < 0 || Object.is(x, -0) ? "-" : "";
}

/** Python's format(x, f".{places}f"). */
function formatFixed(x, places) {
  if (!Number.isFinite(x)) {
    return Number.isNaN(x) ? "nan" : `${sign(x)}inf`;
  }
  const { digits, point } = decimalDigits(x);
  const aligned = point >= 0 ? digits : "0".repeat(-point) + digits;
  const wholeLength = Math.max(point, 0);
  const rounded = roundDigits(aligned, wholeLength + places);
  let body = rounded.digits.padStart(wholeLength + places, "0");
  if (rounded.carry) {
    body = `1${body}`;
  }
  const whole = body.slice(0, body.length - places) || "0";
  const fraction = body.slice(body.length - places);
  return sign(x) + whole.replace(/^0+(?=\d)/, "") + (places > 0 ? `.${fraction}` : "");
}

/** Python's format(x, f".{precision}g") (without the "#" flag). */
function formatGeneral(x, precision = 6) {
  if (!Number.isFinite(x)) {
    return Number.isNaN(x) ? "nan" : `${sign(x)}inf`;
  }
  const p = Math.max(precision, 1);
  let { digits, point } = decimalDigits(x);
  if (digits === "0") {
    return `${sign(x)}0`;
  }
  const rounded = roundDigits(digits, p);
  digits = rounded.carry ? `1${rounded.digits.slice(0, -1)}` : rounded.digits;
  point += rounded.carry;
  const exponent = point - 1;
  let mantissa;
  let suffix = "";
  if (exponent >= -4 && exponent < p) {
    mantissa =
      exponent >= 0
        ? `${digits.slice(0, exponent + 1).padEnd(exponent + 1, "0")}.${digits.slice(exponent + 1)}`
        : `0.${"0".repeat(-exponent - 1)}${digits}`;
  } else {
    mantissa = `${digits[0]}.${digits.slice(1)}`;
    const size = String(Math.abs(exponent)).padStart(2, "0");
    suffix = `e${exponent < 0 ? "-" : "+"}${size}`;
  }
  // Like Python without "#": no trailing zeros after the point, and no bare point.
  if (mantissa.includes(".")) {
    mantissa = mantissa.replace(/0+$/, "").replace(/\.$/, "");
  }
  return sign(x) + mantissa + suffix;
}

/** Python's format(n, ","): a whole number with thousands separated by commas. */
function formatThousands(n) {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** The format specs `fill` knows, as Python's format() reads them. */
const SPEC = /^(?:\.(\d+)([fg])|,|)$/;

/**
 * Python's `template.format(**values)` for the page's texts: the server writes them with
 * str.format from the same templates, which the page receives as data from the module
 * that owns them. `{name}` takes a string or a whole number as it is; `{name:.Nf}`,
 * `{name:.Ng}` and `{name:,}` format a number as Python does; `{{` and `}}` are braces.
 * Anything else is an error, not a guess.
 */
function fill(template, values) {
  return template.replace(/\{\{|\}\}|\{([^{}]*)\}|[{}]/g, (match, field) => {
    if (match === "{{" || match === "}}") {
      return match[0];
    }
    const parsed = /^([A-Za-z_][A-Za-z0-9_]*)(?::(.*))?$/.exec(field ?? "");
    if (parsed === null) {
      throw new Error(`fill: "${match}" in ${JSON.stringify(template)} is not a field fill knows`);
    }
    const [, name, spec = ""] = parsed;
    if (!(name in values)) {
      throw new Error(`fill: no value for {${name}} in ${JSON.stringify(template)}`);
    }
    const value = values[name];
    const parts = SPEC.exec(spec);
    if (parts === null) {
      throw new Error(`fill: format spec "${spec}" of {${name}} is not one fill knows`);
    }
    if (spec === "") {
      if (typeof value === "number" && !Number.isInteger(value)) {
        throw new Error(`fill: {${name}} is a fraction and needs a format spec`);
      }
      return String(value);
    }
    if (spec === ",") {
      return formatThousands(value);
    }
    const digits = Number(parts[1]);
    return parts[2] === "f" ? formatFixed(value, digits) : formatGeneral(value, digits);
  });
}

/**
 * app.page.views.readouts.readout_number: `value` written by `template` (its `{value}` field), or
 * `texts.missing` for NaN (no finite row).
 */
function numberOrMissing(texts, template, value) {
  return Number.isNaN(value) ? texts.missing : fill(template, { value });
}

/**
 * app.page.views.readouts.verdict: one sentence naming the regime the weights are in, from
 * `texts` (app.page.views.readouts.READOUT_TEXTS). `thresholds` holds app.simulation.spec's
 * `one_hot_threshold` and `uniform_entropy_fraction` (the page's config, from page_spec).
 */
function verdict(texts, meanMaxWeight, meanEntropy, uniformEntropy, thresholds) {
  if (Number.isNaN(meanMaxWeight)) {
    return texts.verdict_overflowed;
  }
  if (meanMaxWeight >= thresholds.one_hot_threshold) {
    return texts.verdict_one_hot;
  }
  if (uniformEntropy > 0 && meanEntropy >= thresholds.uniform_entropy_fraction * uniformEntropy) {
    return texts.verdict_uniform;
  }
  return texts.verdict_useful;
}

/**
 * app.page.views.readouts.readout_tile: one readout's markup (label, value, what it compares with),
 * from the `tile` template of `texts`.
 */
function tile(texts, testId, label, value, reference) {
  return fill(texts.tile, { test_id: testId, label, value, reference });
}

/** The law of q and k under the lesson's assumptions: what the words say by default. */
const LESSON_LAW = Object.freeze({ lesson: true, qkNorm: false });

/**
 * app.simulation.parts.law_of, as the words need it: `lesson` when q and k of `state` follow the
 * lesson's law (σ_q = σ_k = 1, ρ = 0, no QK-norm; a control a page lacks is at its
 * lesson value), `qkNorm` when QK-norm is on.
 */
function lawOf(state) {
  const sigmaQ = state.sigma_q ?? 1;
  const sigmaK = state.sigma_k ?? 1;
  const rho = state.rho ?? 0;
  const qkNorm = Boolean(state.qk_norm);
  return { lesson: sigmaQ === 1 && sigmaK === 1 && rho === 0 && !qkNorm, qkNorm };
}

/**
 * app.page.views.readouts.spread_references: √d_k and 1 under the lesson's law, else the
 * expected stds of the histograms' laws (and, with QK-norm, that it restores the spread).
 */
function spreadReferences(texts, d, raw, scaled, law) {
  if (law.lesson) {
    return [
      fill(texts.lesson_raw_reference, { sqrt_d_k: Math.sqrt(d) }),
      texts.lesson_scaled_reference,
    ];
  }
  let scaledReference = fill(texts.scaled_reference, { std: scaled.expectedStd });
  if (law.qkNorm) {
    scaledReference += texts.qk_norm_reference;
  }
  return [fill(texts.raw_reference, { std: raw.expectedStd }), scaledReference];
}

/**
 * app.page.views.readouts.precision_tiles: non-finite weights and the largest difference from
 * float64, when the softmax is not the lesson's.
 */
function precisionTiles(texts, weights) {
  const report = weights.report;
  if (!report || (weights.precision === "float64" && weights.stable)) {
    return [];
  }
  const reference = fill(texts.non_finite_reference, {
    size: report.size,
    precision: weights.precision,
    unstable: weights.stable ? "" : texts.unstable,
  });
  return [
    tile(
      texts,
      "non-finite",
      texts.non_finite_label,
      fill(texts.non_finite, { value: report.nonFinite }),
      reference,
    ),
    tile(
      texts,
      "max-error",
      texts.error_label,
      numberOrMissing(texts, texts.error, report.maxAbsError),
      texts.error_reference,
    ),
  ];
}

/**
 * app.page.views.readouts.readouts_html for one state, from `texts` (READOUT_TEXTS): `raw` and
 * `scaled` are histogram frames, `weights` a weights frame (numbers only go into the
 * markup), `thresholds` as for verdict; `law` that of q and k (lawOf).
 */
function readoutsHtml(texts, d, raw, scaled, weights, thresholds, law = LESSON_LAW) {
  const [rawReference, scaledReference] = spreadReferences(texts, d, raw, scaled, law);
  const tiles = [
    tile(texts, "std-raw", texts.std_raw_label, fill(texts.std, { value: raw.std }), rawReference),
    tile(
      texts,
      "std-scaled",
      texts.std_scaled_label,
      fill(texts.std, { value: scaled.std }),
      scaledReference,
    ),
    tile(
      texts,
      "max-weight",
      texts.max_weight_label,
      numberOrMissing(texts, texts.max_weight, weights.meanMaxWeight),
      fill(texts.max_weight_reference, { uniform: weights.uniformMaxWeight }),
    ),
    tile(
      texts,
      "entropy",
      texts.entropy_label,
      numberOrMissing(texts, texts.entropy, weights.meanEntropy),
      fill(texts.entropy_reference, { uniform: weights.uniformEntropy }),
    ),
    ...precisionTiles(texts, weights),
  ];
  let sentence = verdict(
    texts,
    weights.meanMaxWeight,
    weights.meanEntropy,
    weights.uniformEntropy,
    thresholds,
  );
  if (weights.report?.nonFinite && !Number.isNaN(weights.meanMaxWeight)) {
    sentence += texts.left_out;
  }
  return fill(texts.readouts, { tiles: tiles.join(""), sentence });
}

/**
 * app.page.views.histogram.normal_label: a frame's normal law (mean and variance in three
 * digits), from the `normal_label` template of `texts` (HISTOGRAM_TEXTS).
 */
function normalLabel(texts, frame) {
  // Adding 0.0 turns -0 into 0, as the server does ("no -0").
  const mean = (frame.expectedMean || 0) + 0.0;
  return fill(texts.normal_label, { mean, variance: frame.expectedStd ** 2 });
}

/**
 * Title and curve label of each of the two histograms (app.page.views.histogram), from `texts`
 * (HISTOGRAM_TEXTS), under the lesson's law or the law (lawOf) of the frames `raw` and
 * `scaled`.
 */
function histogramTitles(texts, d, raw, scaled, law = LESSON_LAW) {
  if (law.lesson) {
    return {
      raw: {
        title: fill(texts.lesson_raw_title, { d_k: d, sqrt_d_k: d ** 0.5 }),
        curve: fill(texts.lesson_raw_curve, { d_k: d }),
      },
      scaled: {
        title: fill(texts.lesson_scaled_title, { d_k: d }),
        curve: texts.lesson_scaled_curve,
      },
    };
  }
  const normed = law.qkNorm ? texts.qk_norm : "";
  return {
    raw: {
      title: fill(texts.raw_title, { normed, d_k: d, std: raw.expectedStd }),
      curve: normalLabel(texts, raw),
    },
    scaled: {
      title: fill(texts.scaled_title, { normed, d_k: d, std: scaled.expectedStd }),
      curve: normalLabel(texts, scaled),
    },
  };
}

export {
  fill,
  formatFixed,
  formatGeneral,
  formatThousands,
  histogramTitles,
  lawOf,
  numberOrMissing,
  readoutsHtml,
  tile,
  verdict,
};
