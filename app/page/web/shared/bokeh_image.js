/*
 * A flat row-major array as the rows × columns image a Bokeh image glyph draws: BokehJS's own
 * typed array with its shape (what the server's binary arrays become), uncopied. Both pages
 * turn every frame's image into what a glyph draws here and nowhere else.
 *
 * The one Bokeh internal the browser code uses (app/compat.py, BOKEH_IMAGE_MODULE, names it,
 * the versions checked and why; tests/model/test_compat.py fails loudly when BokehJS no
 * longer has it): `core/util/ndarray`'s `ndarray(init, {shape})`, reached with
 * `Bokeh.require`. The public form, a list of row arrays, is copied back into one typed
 * array: at n = 1024 a million numbers copied twice per heatmap drawn.
 */

/** `values` (a typed array) as a `rows` × `columns` BokehJS n-dimensional array. */
export function bokehImage(values, rows, columns) {
  const { ndarray } = globalThis.Bokeh.require("core/util/ndarray");
  return ndarray(values, { shape: [rows, columns] });
}
