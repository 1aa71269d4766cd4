/*
 * sdpa-sim export lesson: what the lesson's views below the first screen show, computed
 * in the page from the data app/export/lesson.py embeds (the served page's own numbers
 * and words). Pure functions of that data and the page's state; controller.js puts their
 * results into the Bokeh models and the page. In the page it is window.SdpaLesson; under
 * Node, module.exports.
 */
(function (root, factory) {
  const node = typeof module === "object" && module.exports;
  const lesson = node
    ? factory(require("./text.js"), require("./kernel.js"))
    : factory(root.SdpaText, root.SdpaKernel);
  if (node) {
    module.exports = lesson;
  } else {
    root.SdpaLesson = lesson;
  }
})(typeof globalThis !== "undefined" ? globalThis : this, function (text, kernel) {
  "use strict";

  /** The little-endian float64 values of base64 `encoded` (app.export.lesson.encode_float64). */
  function float64FromBase64(encoded) {
    const binary = atob(encoded);
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) {
      bytes[i] = binary.charCodeAt(i);
    }
    return new Float64Array(bytes.buffer);
  }

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

  /** One band of `table` (app.export.lesson.collapse_table) as a plain array. */
  function band(spec, table, t, s, m, b) {
    const points = spec.d_values.length;
    const start = (((t * 2 + s) * spec.metrics.length + m) * 3 + b) * points;
    return Array.from(table.subarray(start, start + points));
  }

  /**
   * The two curves at temperature index `t` as the served view's sources hold them
   * (app.views.collapse.curve_data): scaled first, then unscaled.
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

  /** app.views.collapse.marker_data: the ring at `d` on the curve of the scale switch. */
  function collapseMarker(spec, table, t, d, scaled) {
    const s = scaled ? 0 : 1;
    const logD = spec.d_values.map((value) => Math.log2(value));
    const data = { d: [d], colour: [spec.colours[s]] };
    spec.metrics.forEach((name, m) => {
      data[name] = [interp(Math.log2(d), logD, band(spec, table, t, s, m, 0))];
    });
    return data;
  }

  /** app.views.collapse.marker_caption's sentence, from numbers and the served words. */
  function collapseCaption(spec, d, scaled, temperature) {
    const values = [String(d), spec.which[scaled ? 0 : 1], text.formatGeneral(temperature, 6)];
    return spec.caption.replace(/\{(\d)\}/g, (match, index) => values[Number(index)]);
  }

  return {
    float64FromBase64,
    interp,
    curveTemperature,
    collapseCurves,
    collapseMarker,
    collapseCaption,
  };
});
