/*
 * The offline page's URL rules: untrusted URL query values → valid control values, as
 * app/simulation/query.py reads them for the served app, from the rules app/simulation/query.py hands over as
 * data (query_spec: the parameters in order with their kinds, bounds and choices, the
 * true/false words, the length limit, and this Python's Unicode decimal digits and spaces),
 * writing each notice from the served page's template (`spec.notices`, app.simulation.query's
 * NOTICE_TEXTS) with text.js's fill. Then a preset is applied as SimulationState.apply_query
 * applies it, and the values are fitted to an exported page (its largest n and d_k, its
 * d_k steps and its fixed seed, and the notices' templates, handed over as data by
 * app/export/page.py from app.page.kernel_data.sample_limits). No control is named, and no
 * notice worded, here. The URL the page writes keeps every parameter it does not
 * write byte for byte (app.simulation.query.compose_search), Bokeh's names (ASCII "bokeh-" in any case,
 * app.simulation.query.is_reserved_name) aside. A value is never echoed except as a short excerpt
 * that shows letters, digits, space and ".+-_?" as they are and every other character as
 * its Python escape (app.simulation.query.excerpt), numbers with all their digits (shown_number). A
 * row past the scene's n is its last (app.simulation.query.limit_indexes, rules as data from
 * app.simulation.query.index_limits).
 */

import * as kernel from "./kernel.js";
import * as text from "./text.js";

// Python's float() syntax for ASCII text: digits may be grouped by single underscores.
const DIGITS = "\\d(?:_?\\d)*";
const DECIMAL = new RegExp(
  `^[+-]?(?:${DIGITS}\\.?(?:${DIGITS})?|\\.${DIGITS})(?:[eE][+-]?${DIGITS})?$`,
);
const SPECIAL = /^[+-]?(?:inf|infinity|nan)$/i;
// biome-ignore lint/suspicious/noControlCharactersInRegex: the ASCII range, as Python's str.isascii.
const NON_ASCII = /[^\x00-\x7f]/;
const g = (x) => text.formatGeneral(x, 6);

/** The spec's Unicode tables as a strip pattern and a sorted list of digit zeros. */
const tables = new WeakMap();
function unicode(spec) {
  let found = tables.get(spec);
  if (!found) {
    const escaped = spec.spaces.map((c) => `\\u{${c.toString(16)}}`).join("");
    found = {
      strip: new RegExp(`^[${escaped}]+|[${escaped}]+$`, "gu"),
      zeros: [...spec.digitZeros].sort((a, b) => a - b),
    };
    tables.set(spec, found);
  }
  return found;
}

/** Python's str.strip(): the spec's spaces off both ends. */
function strip(value, spec) {
  return value.replace(unicode(spec).strip, "");
}

/** Every Unicode decimal digit as its ASCII digit, as float() reads them (٣٢ → 32). */
function asciiDigits(value, spec) {
  const zeros = unicode(spec).zeros;
  let out = "";
  for (const character of value) {
    const code = character.codePointAt(0);
    if (code < 0x80) {
      out += character;
      continue;
    }
    // The zero at or below this code point: digits come in runs of ten from a zero.
    let low = 0;
    let high = zeros.length - 1;
    let zero = -1;
    while (low <= high) {
      const middle = (low + high) >> 1;
      if (zeros[middle] <= code) {
        zero = zeros[middle];
        low = middle + 1;
      } else {
        high = middle - 1;
      }
    }
    out += zero >= 0 && code - zero <= 9 ? String(code - zero) : character;
  }
  return out;
}

/** app.simulation.query.SHOWN_AS_SENT: the characters a notice shows as they are. */
const SHOWN_AS_SENT = /^[A-Za-z0-9.+\-_? ]$/;

/** app.simulation.query.escaped: a character as Python writes it in an escape (\x3c, \u200b, \U…). */
function escaped(character) {
  const code = character.codePointAt(0);
  const hex = code.toString(16);
  if (code < 0x100) {
    return `\\x${hex.padStart(2, "0")}`;
  }
  return code < 0x10000 ? `\\u${hex.padStart(4, "0")}` : `\\U${hex.padStart(8, "0")}`;
}

/**
 * app.simulation.query.excerpt: the first `limit` characters (code points) of untrusted text, the
 * safe ones as they are and every other one as its escape, then "…" if there were more.
 */
function excerpt(value, limit = 20) {
  const characters = [...value];
  const shown = characters
    .slice(0, limit)
    .map((c) => (SHOWN_AS_SENT.test(c) ? c : escaped(c)))
    .join("");
  return shown + (characters.length > limit ? "…" : "");
}

/**
 * app.simulation.query.shown_number: Python's repr of a float (the shortest digits that tell it from
 * every other), a whole number below 1e16 without its ".0".
 */
function shownNumber(x) {
  if (Number.isInteger(x) && Math.abs(x) < 1e16) {
    return String(x);
  }
  // toExponential() without digits gives the shortest round-trip digits, as repr does.
  const [mantissa, exponentText] = x.toExponential().split("e");
  const exponent = Number(exponentText);
  const sign = mantissa.startsWith("-") ? "-" : "";
  const digits = mantissa.replace("-", "").replace(".", "");
  if (exponent < -4 || exponent >= 16) {
    const fraction = digits.length > 1 ? `.${digits.slice(1)}` : "";
    const power = String(Math.abs(exponent)).padStart(2, "0");
    return `${sign}${digits[0]}${fraction}e${exponent < 0 ? "-" : "+"}${power}`;
  }
  if (exponent < 0) {
    return `${sign}0.${"0".repeat(-exponent - 1)}${digits}`;
  }
  const whole = digits.slice(0, exponent + 1).padEnd(exponent + 1, "0");
  return `${sign}${whole}.${digits.slice(exponent + 1) || "0"}`;
}

/** app.simulation.query.is_reserved_name: `prefix` in any ASCII case, and only ASCII folds. */
function isReservedName(name, prefix) {
  const start = name.slice(0, prefix.length);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the ASCII range, as Python's str.isascii.
  return /^[\x00-\x7f]*$/.test(start) && start.toLowerCase() === prefix;
}

/** Python's float(value), or null where Python raises ValueError. */
function pythonFloat(value, spec) {
  const ascii = asciiDigits(value, spec);
  if (NON_ASCII.test(ascii)) {
    return null;
  }
  if (DECIMAL.test(ascii)) {
    return Number(ascii.replace(/_/g, ""));
  }
  if (SPECIAL.test(ascii)) {
    return /nan/i.test(ascii) ? NaN : ascii.startsWith("-") ? -Infinity : Infinity;
  }
  return null;
}

/** Python's round() of a float to an int: halves go to the even neighbour. */
function roundHalfEven(x) {
  const floor = Math.floor(x);
  const difference = x - floor;
  if (difference !== 0.5) {
    return Math.round(x) + 0;
  }
  return (floor % 2 === 0 ? floor : floor + 1) + 0;
}

/** The notice `spec.notices[key]` (app.simulation.query.notice's template) with `values` in it. */
function notice(spec, key, values) {
  return text.fill(spec.notices[key], values);
}

function number(name, value, notices, spec) {
  const parsed = pythonFloat(value, spec);
  if (parsed === null) {
    notices.push(notice(spec, "not_a_number", { name, excerpt: excerpt(value) }));
    return null;
  }
  if (!Number.isFinite(parsed)) {
    notices.push(notice(spec, "not_finite", { name, excerpt: excerpt(value) }));
    return null;
  }
  return parsed;
}

function clamped(name, value, [low, high], notices, spec) {
  if (value < low) {
    notices.push(notice(spec, "below", { name, value: shownNumber(value), low: shownNumber(low) }));
    return low;
  }
  if (value > high) {
    notices.push(
      notice(spec, "above", { name, value: shownNumber(value), high: shownNumber(high) }),
    );
    return high;
  }
  return value;
}

/** The notice for `value`, which is not one of `choices` (app.simulation.query's "not_a_choice"). */
function notChoice(spec, name, value, choices) {
  return notice(spec, "not_a_choice", {
    name,
    excerpt: excerpt(value),
    listed: choices.join(", "),
  });
}

/**
 * The last value of `name` in `params`, stripped, and the notice refusing it unread when
 * it has more than `spec.maxLength` characters (app.simulation.query's "too_long"), else null.
 */
function lastValue(params, name, spec) {
  const all = params.getAll(name);
  const value = strip(all[all.length - 1], spec);
  const length = [...value].length;
  return {
    value,
    refused: length > spec.maxLength ? notice(spec, "too_long", { name, length }) : null,
  };
}

/** app/simulation/query.py's readers, by parameter kind: (parameter, stripped value, notices, spec). */
const READERS = {
  integer(parameter, value, notices, spec) {
    const name = parameter.name;
    let parsed = number(name, value, notices, spec);
    if (parsed === null) {
      return null;
    }
    if (!Number.isInteger(parsed)) {
      const rounded = roundHalfEven(parsed);
      notices.push(notice(spec, "rounded", { name, value: shownNumber(parsed), rounded }));
      parsed = rounded;
    }
    return clamped(name, parsed, parameter.bounds, notices, spec);
  },
  number(parameter, value, notices, spec) {
    const parsed = number(parameter.name, value, notices, spec);
    return parsed === null
      ? null
      : clamped(parameter.name, parsed, parameter.bounds, notices, spec);
  },
  boolean(parameter, value, notices, spec) {
    const word = value.toLowerCase();
    if (spec.true.includes(word)) {
      return true;
    }
    if (spec.false.includes(word)) {
      return false;
    }
    notices.push(notice(spec, "not_boolean", { name: parameter.name, excerpt: excerpt(value) }));
    return null;
  },
  choice(parameter, value, notices, spec) {
    const word = value.toLowerCase();
    if (parameter.choices.includes(word) || (parameter.blank && word === "")) {
      return word;
    }
    notices.push(notChoice(spec, parameter.name, value, parameter.choices));
    return null;
  },
};

/**
 * Parse a URL query string as app/simulation/query.py's parse_query does: unknown names are ignored,
 * the last of repeated names wins, values longer than `spec.maxLength` characters are
 * refused unread, and each fixed or ignored value is explained in `notices`. Never
 * throws for any input.
 */
function parseQuery(search, spec) {
  const params = new URLSearchParams(search);
  const values = {};
  const notices = [];
  for (const parameter of spec.parameters) {
    if (!params.has(parameter.name)) {
      continue;
    }
    const { value, refused } = lastValue(params, parameter.name, spec);
    if (refused !== null) {
      notices.push(refused);
      continue;
    }
    const parsed = READERS[parameter.kind](parameter, value, notices, spec);
    if (parsed !== null) {
      values[parameter.name] = parsed;
    }
  }
  return { values, notices };
}

/** A number as a notice writes it: a whole number in full, others as Python's "%g". */
function shown(value) {
  return Number.isInteger(value) ? String(value) : g(value);
}

/**
 * What an exported page can show of a valid value of control `name`, from `limits` (the
 * page's config, app.export.page.page_limits: by control name, the `largest` value the
 * page carries, the only `steps` it carries, the one value it keeps `fixed`). Adds a
 * notice for each change, from the template `limits.notices` holds for that limit
 * (app.page.kernel_data.FIT_NOTICES), its numbers written by `shown`.
 */
function fitToPage(name, value, limits, notices) {
  const fit = (limit, values) =>
    notices.push(text.fill(limits.notices[limit], { name, value: shown(value), ...values }));
  const largest = limits.largest?.[name];
  if (largest !== undefined && value > largest) {
    fit("largest", { largest: shown(largest) });
    return largest;
  }
  const steps = limits.steps?.[name];
  if (steps !== undefined && !steps.includes(value)) {
    const nearest = steps[kernel.nearestIndex(steps, value)];
    fit("steps", { nearest: shown(nearest) });
    return nearest;
  }
  const fixed = limits.fixed?.[name];
  if (fixed !== undefined && value !== fixed) {
    fit("fixed", { fixed: shown(fixed) });
    return fixed;
  }
  return value;
}

function fitAll(values, limits, notices) {
  if (limits == null) {
    return { ...values };
  }
  const fitted = {};
  for (const [name, value] of Object.entries(values)) {
    fitted[name] = fitToPage(name, value, limits, notices);
  }
  return fitted;
}

/**
 * The controls a parsed query sets, as SimulationState.apply_query sets them: a preset's
 * values first, the query's own values over them, and the preset kept only while every
 * control it sets still has its value. With `limits` (an exported page's: see fitToPage,
 * and `controls`, the names it offers or fixes), the values are fitted to the page and
 * compared as the page shows them, on its `limits.controls` only. `presets` maps a preset
 * key to {label, description, values}. `indexes` (app.simulation.query.index_limits, by default
 * `limits.indexes`) clamps a control that picks one of another's items (a row of n) to
 * that count − 1, the count from the merged values or else the page's first one, with
 * its notice, as SimulationState.apply_query does. Returns {values, preset, scene,
 * notices}: `scene` the preset's values as the page shows them, `notices` one for each
 * value the page changed.
 */
function applyQuery(values, presets, limits = null, indexes = limits?.indexes ?? null) {
  const { preset = "", ...own } = values;
  const notices = [];
  const sceneValues = preset && presets[preset] ? presets[preset].values : {};
  const merged = fitAll({ ...sceneValues, ...own }, limits, notices);
  limitIndexes(merged, indexes, notices);
  const scene = fitAll(sceneValues, limits, []);
  const compared = limits == null ? Object.keys(scene) : limits.controls;
  const kept =
    preset !== "" && compared.every((name) => !(name in scene) || merged[name] === scene[name]);
  return { values: merged, preset: kept ? preset : "", scene: kept ? scene : {}, notices };
}

/** app.simulation.query.limit_indexes: each index in `values` at most its count − 1, in place. */
function limitIndexes(values, indexes, notices) {
  for (const [name, rule] of Object.entries(indexes ?? {})) {
    const index = values[name];
    const total = Object.hasOwn(values, rule.count) ? values[rule.count] : rule.default;
    if (!Number.isInteger(index) || !Number.isInteger(total) || index < total) {
      continue;
    }
    const last = total - 1;
    notices.push(text.fill(rule.notice, { name, value: index, count: rule.count, total, last }));
    values[name] = last;
  }
}

/**
 * app.simulation.query.parse_shown_controls: the controls `?<shown.parameter>=a,b` asks the page to
 * show, in the link's order, from `shown.names` (what the page can show), with a notice
 * for each name ignored; `shown` null when the link names no known control. Never throws.
 */
function parseShownControls(search, spec, shown) {
  const params = new URLSearchParams(search);
  const name = shown.parameter;
  if (!params.has(name)) {
    return { shown: null, notices: [] };
  }
  const { value, refused } = lastValue(params, name, spec);
  if (refused !== null) {
    return { shown: null, notices: [refused] };
  }
  const found = [];
  const notices = [];
  for (const part of value.split(",")) {
    const word = strip(part, spec).toLowerCase();
    if (shown.names.includes(word)) {
      if (!found.includes(word)) {
        found.push(word);
      }
    } else if (word !== "") {
      notices.push(notChoice(spec, name, word, shown.names));
    }
  }
  return { shown: found.length ? found : null, notices };
}

/** app.simulation.query.parse_embed: whether `?<parameter>=` says true (never throws). */
function parseEmbed(search, spec, parameter) {
  const all = new URLSearchParams(search).getAll(parameter);
  return all.length > 0 && spec.true.includes(strip(all[all.length - 1], spec).toLowerCase());
}

/**
 * app.simulation.query.compose_search: `values` first, in their order, then every parameter of
 * `current` (the page's query) whose name `values` lacks, byte for byte and in its
 * order; names beginning with `reservedPrefix` (Bokeh's) are dropped.
 */
function composeSearch(current, values, reservedPrefix) {
  const kept = [];
  const raw = current.startsWith("?") ? current.slice(1) : current;
  for (const piece of raw.split("&")) {
    if (piece === "") {
      continue;
    }
    const nameEnd = piece.indexOf("=");
    const encoded = nameEnd < 0 ? piece : piece.slice(0, nameEnd);
    // URLSearchParams decodes a name as Python's unquote_plus does (UTF-8, "+" as space);
    // the leading "&" keeps it from dropping a "?" that starts the name.
    const name = [...new URLSearchParams(`&${encoded}=`).keys()][0] ?? "";
    if (Object.hasOwn(values, name) || isReservedName(name, reservedPrefix)) {
      continue;
    }
    kept.push(piece);
  }
  const own = new URLSearchParams(Object.entries(values)).toString();
  return `?${[own, ...kept].filter((part) => part !== "").join("&")}`;
}

export {
  applyQuery,
  asciiDigits,
  composeSearch,
  excerpt,
  fitToPage,
  isReservedName,
  parseEmbed,
  parseQuery,
  parseShownControls,
  pythonFloat,
  roundHalfEven,
  shownNumber,
  strip,
};
