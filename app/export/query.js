/*
 * sdpa-sim export query: untrusted URL query values → valid control values, as
 * app/query.py parses them for the served app (same names, bounds, rounding and notice
 * wording), plus the limits of an exported page (its largest n and d_k, its d_k steps and
 * its fixed seed). A value is never echoed except as a short excerpt of letters, digits
 * and ".+-_". In the page it is window.SdpaQuery; under Node, module.exports.
 */
(function (root, factory) {
  const node = typeof module === "object" && module.exports;
  const query = node
    ? factory(require("./text.js"), require("./kernel.js"))
    : factory(root.SdpaText, root.SdpaKernel);
  if (node) {
    module.exports = query;
  } else {
    root.SdpaQuery = query;
  }
})(typeof globalThis !== "undefined" ? globalThis : this, function (text, kernel) {
  "use strict";

  const TRUE = new Set(["1", "true", "yes", "on"]);
  const FALSE = new Set(["0", "false", "no", "off"]);
  // Python's str.isspace() characters, so strip() removes what the server's strip() does.
  const SPACE =
    "[\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680" +
    "\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]";
  const STRIP = new RegExp(`^${SPACE}+|${SPACE}+$`, "g");
  // Python's float() syntax for ASCII text: digits may be grouped by single underscores.
  const DIGITS = "\\d(?:_?\\d)*";
  const DECIMAL = new RegExp(
    `^[+-]?(?:${DIGITS}\\.?(?:${DIGITS})?|\\.${DIGITS})(?:[eE][+-]?${DIGITS})?$`,
  );
  const SPECIAL = /^[+-]?(?:inf|infinity|nan)$/i;
  const g = (x) => text.formatGeneral(x, 6);

  function strip(value) {
    return value.replace(STRIP, "");
  }

  /** A short, safe excerpt of untrusted text: letters, digits and ".+-_" only. */
  function excerpt(value, limit = 20) {
    const safe = value.replace(/[^A-Za-z0-9.+\-_]/g, "");
    return safe.slice(0, limit) + (safe.length > limit ? "…" : "");
  }

  /** Python's float(value) for ASCII text, or null where Python raises ValueError. */
  function pythonFloat(value) {
    if (DECIMAL.test(value)) {
      return Number(value.replace(/_/g, ""));
    }
    if (SPECIAL.test(value)) {
      return /nan/i.test(value) ? NaN : value.startsWith("-") ? -Infinity : Infinity;
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

  function number(name, value, notices) {
    const parsed = pythonFloat(value);
    if (parsed === null) {
      notices.push(`${name}: “${excerpt(value)}” is not a number, so it was ignored.`);
      return null;
    }
    if (!Number.isFinite(parsed)) {
      notices.push(`${name}: “${excerpt(value)}” is not a finite number, so it was ignored.`);
      return null;
    }
    return parsed;
  }

  function clamped(name, value, [low, high], notices) {
    if (value < low) {
      notices.push(
        `${name} = ${g(value)} is below the smallest value ${g(low)}; using ${g(low)}.`,
      );
      return low;
    }
    if (value > high) {
      notices.push(
        `${name} = ${g(value)} is above the largest value ${g(high)}; using ${g(high)}.`,
      );
      return high;
    }
    return value;
  }

  function integer(bounds) {
    return (name, value, notices) => {
      let parsed = number(name, value, notices);
      if (parsed === null) {
        return null;
      }
      if (!Number.isInteger(parsed)) {
        const rounded = roundHalfEven(parsed);
        notices.push(
          `${name} must be a whole number; ${g(parsed)} was rounded to ${String(rounded)}.`,
        );
        parsed = rounded;
      }
      return clamped(name, parsed, bounds, notices);
    };
  }

  function real(bounds) {
    return (name, value, notices) => {
      const parsed = number(name, value, notices);
      return parsed === null ? null : clamped(name, parsed, bounds, notices);
    };
  }

  function boolean(name, value, notices) {
    const word = strip(value).toLowerCase();
    if (TRUE.has(word)) {
      return true;
    }
    if (FALSE.has(word)) {
      return false;
    }
    notices.push(`${name}: “${excerpt(value)}” is not true or false, so it was ignored.`);
    return null;
  }

  function choice(options) {
    return (name, value, notices) => {
      const word = strip(value).toLowerCase();
      if (options.includes(word)) {
        return word;
      }
      const listed = options.join(", ");
      notices.push(`${name}: “${excerpt(value)}” is not one of ${listed}, so it was ignored.`);
      return null;
    };
  }

  /**
   * The parsers of app/query.py's PARSERS, in its order, from the served app's bounds:
   * {d_k, temperature, n, seed: [low, high]} and the list of view names.
   */
  function parsers(bounds, views) {
    return [
      ["d_k", integer(bounds.d_k)],
      ["temperature", real(bounds.temperature)],
      ["n", integer(bounds.n)],
      ["scaled", boolean],
      ["view", choice(views)],
      ["causal", boolean],
      ["seed", integer(bounds.seed)],
    ];
  }

  /**
   * What an exported page can show of a valid value: its d_k steps up to its largest d_k,
   * n up to its largest n, and only the seed it was exported with. Adds a notice for each
   * change. `limits` is {d_values, n_max, seed}.
   */
  function fitToPage(name, value, limits, notices) {
    if (name === "d_k") {
      const largest = limits.d_values[limits.d_values.length - 1];
      if (value > largest) {
        notices.push(
          `d_k = ${value} is above ${largest}, the largest d_k this offline page carries; ` +
            `using ${largest}.`,
        );
        return largest;
      }
      if (!limits.d_values.includes(value)) {
        const nearest = limits.d_values[kernel.nearestIndex(limits.d_values, value)];
        notices.push(
          `d_k = ${value} is not one of this offline page's d_k steps; using ${nearest}.`,
        );
        return nearest;
      }
    }
    if (name === "n" && value > limits.n_max) {
      notices.push(
        `n = ${value} is above ${limits.n_max}, the largest n this offline page carries; ` +
          `using ${limits.n_max}.`,
      );
      return limits.n_max;
    }
    if (name === "seed" && value !== limits.seed) {
      notices.push(
        `seed = ${value}: this offline page was exported with seed ${limits.seed}, ` +
          "so it keeps that one.",
      );
      return limits.seed;
    }
    return value;
  }

  /**
   * Parse a URL query string as app/query.py's parse_query does: unknown names are ignored,
   * the last of repeated names wins, values longer than `maxLength` characters are refused
   * unread, and each fixed or ignored value is explained in `notices`. With `limits`, valid
   * values are then fitted to the exported page. Never throws for any input.
   */
  function parseQuery(search, { bounds, views, maxLength }, limits = null) {
    const params = new URLSearchParams(search);
    const values = {};
    const notices = [];
    for (const [name, parser] of parsers(bounds, views)) {
      if (!params.has(name)) {
        continue;
      }
      const all = params.getAll(name);
      const value = strip(all[all.length - 1]);
      const length = [...value].length;
      if (length > maxLength) {
        notices.push(`${name}: the value is ${length} characters long, so it was ignored.`);
        continue;
      }
      let parsed = parser(name, value, notices);
      if (parsed !== null && limits !== null) {
        parsed = fitToPage(name, parsed, limits, notices);
      }
      if (parsed !== null) {
        values[name] = parsed;
      }
    }
    return { values, notices };
  }

  return { parseQuery, excerpt, pythonFloat, roundHalfEven };
});
