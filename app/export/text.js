/*
 * sdpa-sim export text: the words and numbers an exported page writes, as the server
 * writes them. Python's number formats (".1f", ".3g", "g"), the readout tiles of
 * app.views.readouts, the histogram titles of app.views.histogram. Every string is built
 * from numbers and fixed words only, never from the URL. In the page it is
 * window.SdpaText; under Node, module.exports.
 */
(function (root, factory) {
  const text = factory();
  if (typeof module === "object" && module.exports) {
    module.exports = text;
  } else {
    root.SdpaText = text;
  }
})(typeof globalThis !== "undefined" ? globalThis : this, function () {
  "use strict";

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
    const incremented = (BigInt("1" + kept) + 1n).toString();
    // A leading "2" means the carry ran through every kept digit (…999 + 1 = 1000…).
    return { digits: incremented.slice(1), carry: incremented[0] === "2" ? 1 : 0 };
  }

  function sign(x) {
    return x < 0 || Object.is(x, -0) ? "-" : "";
  }

  /** Python's format(x, f".{places}f"). */
  function formatFixed(x, places) {
    if (!Number.isFinite(x)) {
      return Number.isNaN(x) ? "nan" : sign(x) + "inf";
    }
    const { digits, point } = decimalDigits(x);
    const aligned = point >= 0 ? digits : "0".repeat(-point) + digits;
    const wholeLength = Math.max(point, 0);
    const rounded = roundDigits(aligned, wholeLength + places);
    let body = rounded.digits.padStart(wholeLength + places, "0");
    if (rounded.carry) {
      body = "1" + body;
    }
    const whole = body.slice(0, body.length - places) || "0";
    const fraction = body.slice(body.length - places);
    return sign(x) + whole.replace(/^0+(?=\d)/, "") + (places > 0 ? "." + fraction : "");
  }

  /** Python's format(x, f".{precision}g") (without the "#" flag). */
  function formatGeneral(x, precision = 6) {
    if (!Number.isFinite(x)) {
      return Number.isNaN(x) ? "nan" : sign(x) + "inf";
    }
    const p = Math.max(precision, 1);
    let { digits, point } = decimalDigits(x);
    if (digits === "0") {
      return sign(x) + "0";
    }
    const rounded = roundDigits(digits, p);
    digits = rounded.carry ? "1" + rounded.digits.slice(0, -1) : rounded.digits;
    point += rounded.carry;
    const exponent = point - 1;
    let mantissa;
    let suffix = "";
    if (exponent >= -4 && exponent < p) {
      mantissa =
        exponent >= 0
          ? digits.slice(0, exponent + 1).padEnd(exponent + 1, "0") +
            "." +
            digits.slice(exponent + 1)
          : "0." + "0".repeat(-exponent - 1) + digits;
    } else {
      mantissa = digits[0] + "." + digits.slice(1);
      const size = String(Math.abs(exponent)).padStart(2, "0");
      suffix = "e" + (exponent < 0 ? "-" : "+") + size;
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
   * that owns them. `{name}` takes a string or a whole number as it is; `{name:.Nf}`, `{name:.Ng}` and `{name:,}` format a number as
   * Python does; `{{` and `}}` are braces. Anything else is an error, not a guess.
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

  /** app.views.readouts._number: `places` decimals, or a dash for NaN (no finite row). */
  function formatOrDash(x, places) {
    return Number.isNaN(x) ? "—" : formatFixed(x, places);
  }

  /**
   * app.views.readouts.verdict: one sentence naming the regime the weights are in.
   * `thresholds` holds app.controls_spec's `one_hot_threshold` and
   * `uniform_entropy_fraction` (the page's config, from page_spec).
   */
  function verdict(meanMaxWeight, meanEntropy, uniformEntropy, thresholds) {
    if (Number.isNaN(meanMaxWeight)) {
      return "Every row overflowed: the softmax gave inf or NaN weights.";
    }
    if (meanMaxWeight >= thresholds.one_hot_threshold) {
      return "Rows are nearly one-hot: the softmax has collapsed and its gradient vanishes.";
    }
    if (uniformEntropy > 0 && meanEntropy >= thresholds.uniform_entropy_fraction * uniformEntropy) {
      return "Rows are nearly uniform: every key gets about the same weight.";
    }
    return "Rows spread their weight over several keys: the softmax is in its useful range.";
  }

  /** app.views.readouts._tile: one readout's markup (label, value, what it compares with). */
  function tile(testId, label, value, reference) {
    return (
      `<div class="readout" data-testid="${testId}"><div class="label">${label}</div>` +
      `<div class="value">${value}</div><div class="ref">${reference}</div></div>`
    );
  }

  /**
   * app.views.readouts.spread_references: √d_k and 1 under the lesson's law (`lessonLaw`),
   * else the expected stds of the histograms' laws.
   */
  function spreadReferences(d, raw, scaled, lessonLaw) {
    if (lessonLaw) {
      return [`√d_k = ${formatFixed(Math.sqrt(d), 1)}`, "target 1.0"];
    }
    return [`expected ${formatFixed(raw.expectedStd, 1)}`, `expected ${formatFixed(scaled.expectedStd, 2)}`];
  }

  /**
   * app.views.readouts.precision_tiles: non-finite weights and the largest difference from
   * float64, when the softmax is not the lesson's.
   */
  function precisionTiles(weights) {
    const report = weights.report;
    if (!report || (weights.precision === "float64" && weights.stable)) {
      return [];
    }
    const how = weights.precision + (weights.stable ? "" : ", no max subtraction");
    const error = report.maxAbsError;
    return [
      tile(
        "non-finite",
        "non-finite weights (inf/NaN)",
        formatThousands(report.nonFinite),
        `of ${formatThousands(report.size)} · ${how}`,
      ),
      tile(
        "max-error",
        "largest |weight − float64|",
        Number.isNaN(error) ? "—" : formatGeneral(error, 2),
        "over the finite weights",
      ),
    ];
  }

  /**
   * app.views.readouts.readouts_html for one state: `raw` and `scaled` are histogram frames,
   * `weights` a weights frame (numbers only go into the markup), `thresholds` as for
   * verdict; `lessonLaw` whether q and k follow the lesson's law (σ = 1).
   */
  function readoutsHtml(d, raw, scaled, weights, thresholds, lessonLaw = true) {
    const [rawReference, scaledReference] = spreadReferences(d, raw, scaled, lessonLaw);
    const tiles = [
      tile("std-raw", "std of raw q·k", formatFixed(raw.std, 1), rawReference),
      tile("std-scaled", "std of q·k / √d_k", formatFixed(scaled.std, 1), scaledReference),
      tile(
        "max-weight",
        "mean max weight per row",
        formatOrDash(weights.meanMaxWeight, 3),
        `uniform ${formatFixed(weights.uniformMaxWeight, 3)} · one-hot 1`,
      ),
      tile(
        "entropy",
        "mean row entropy (nats)",
        formatOrDash(weights.meanEntropy, 2),
        `uniform ${formatFixed(weights.uniformEntropy, 2)} · one-hot 0`,
      ),
      ...precisionTiles(weights),
    ];
    let sentence = verdict(
      weights.meanMaxWeight,
      weights.meanEntropy,
      weights.uniformEntropy,
      thresholds,
    );
    if (weights.report?.nonFinite && !Number.isNaN(weights.meanMaxWeight)) {
      sentence += " Rows with an inf or NaN weight are left out of these means.";
    }
    return (
      `<div class="readouts">${tiles.join("")}</div>` +
      `<p class="verdict" data-testid="verdict">${sentence}</p>`
    );
  }

  /** app.views.histogram.normal_label: "Normal(mean, variance)" in three digits. */
  function normalLabel(frame) {
    return `Normal(${formatGeneral((frame.expectedMean || 0) + 0.0, 3)}, ${formatGeneral(frame.expectedStd ** 2, 3)})`;
  }

  /**
   * Title and curve label of each of the two histograms (app.views.histogram), under the
   * lesson's law (`lessonLaw`) or the law of the frames `raw` and `scaled`.
   */
  function histogramTitles(d, raw, scaled, lessonLaw = true) {
    if (lessonLaw) {
      return {
        raw: {
          title: `Raw q·k at d_k = ${d}: std ≈ √d_k = ${formatGeneral(d ** 0.5, 3)}`,
          curve: `Normal(0, ${d})`,
        },
        scaled: { title: `Scaled q·k / √d_k at d_k = ${d}: std ≈ 1`, curve: "Normal(0, 1)" },
      };
    }
    return {
      raw: {
        title: `Raw q·k at d_k = ${d}: std ≈ ${formatGeneral(raw.expectedStd, 3)}`,
        curve: normalLabel(raw),
      },
      scaled: {
        title: `Scaled q·k / √d_k at d_k = ${d}: std ≈ ${formatGeneral(scaled.expectedStd, 3)}`,
        curve: normalLabel(scaled),
      },
    };
  }

  return {
    fill,
    formatFixed,
    formatGeneral,
    formatThousands,
    tile,
    verdict,
    readoutsHtml,
    histogramTitles,
  };
});
