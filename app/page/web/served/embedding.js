/*
 * What the served page's drawn components share (app/served/components/figures.py and
 * drawn_lesson.py put this before their own code): finding the models of the Bokeh
 * documents they embedded, theming those documents, and reading a packed frame.
 */

/**
 * The models a drawing code draws, by its names: `ids` maps each name to a model's id (or
 * a list of ids) in the documents whose root views `managers` (embed_item's) hold.
 */
export function figureModels(managers, ids) {
  const documents = managers.flatMap((manager) => [...manager].map((view) => view.model.document));
  const find = (id) => {
    for (const doc of documents) {
      const model = doc.get_model_by_id(id);
      if (model) return model;
    }
    throw new Error(`sdpa-sim: no figure model ${id}`);
  };
  return Object.fromEntries(
    Object.entries(ids).map(([name, id]) => [name, Array.isArray(id) ? id.map(find) : find(id)]),
  );
}

/** Every model of the documents whose root views `managers` hold. */
function documentModels(managers) {
  return managers.flatMap((manager) =>
    [...manager].flatMap((view) => [...view.model.document.all_models]),
  );
}

/**
 * Give the figures' models `theme`'s values (by model type) when `dark`, else the values
 * they had before (kept in `originals` the first time).
 */
function applyTheme(models, theme, dark, originals) {
  for (const model of models) {
    const values = theme[model.type];
    if (!values) continue;
    if (!originals.has(model)) {
      originals.set(model, Object.fromEntries(Object.keys(values).map((key) => [key, model[key]])));
    }
    model.setv(dark ? values : originals.get(model));
  }
}

/**
 * Theme the documents whose root views `managers` hold with `theme` (by model type)
 * while the component's `model.dark` is set, now and whenever it changes.
 */
export function followTheme(managers, theme, model) {
  const themed = documentModels(managers);
  const originals = new Map();
  const show = () => applyTheme(themed, theme, model.dark, originals);
  if (model.dark) show();
  model.on("dark", show);
}

const TYPED_ARRAYS = { float32: Float32Array, float64: Float64Array };

/** By a code's spec (as JSON): the float32 value of each of its 65,536 codes. */
const CODE_TABLES = new Map();

/**
 * The float32 weights two-byte `codes` stand for under `code` (app/page/weight_codes.py,
 * code_spec): code c is e^(lnMax − c / steps), except the three reserved for +inf, 0 and
 * NaN. One table lookup per cell.
 */
function decodedWeights(codes, code) {
  const key = JSON.stringify(code);
  let table = CODE_TABLES.get(key);
  if (!table) {
    table = new Float32Array(65536);
    for (let c = 0; c < table.length; c++) table[c] = Math.exp(code.lnMax - c / code.steps);
    table[code.inf] = Infinity;
    table[code.zero] = 0;
    table[code.nan] = NaN;
    CODE_TABLES.set(key, table);
  }
  const weights = new Float32Array(codes.length);
  for (let i = 0; i < codes.length; i++) weights[i] = table[codes[i]];
  return weights;
}

/**
 * `frame` as the session built it (app/page/frames.py, packed_frame): `{sequence, parts,
 * text, packed}` → `{sequence, parts, state, numbers}`, the state and numbers read from
 * `text`, each `{packed: dtype, start, length}` in it a view of that many elements of
 * `packed[dtype]`, each `{alone: key}` the array `packed[key]`, each `{alone: key, code}`
 * the weights its two-byte codes stand for (decodedWeights), each reference with `times`
 * a new float32 array of the referred one times that factor, each `{float: name}` the
 * number `name` spells (NaN, Infinity, -Infinity). A frame without `text` is returned as
 * it is.
 */
export function unpack(frame) {
  if (!frame || typeof frame.text !== "string") return frame;
  const packed = frame.packed ?? {};
  const view = ({ packed: dtype, start, length }) => {
    const array = packed[dtype];
    const Typed = TYPED_ARRAYS[dtype];
    return new Typed(array.buffer, array.byteOffset + start * Typed.BYTES_PER_ELEMENT, length);
  };
  const arrayAt = (value, keys) => {
    if (keys === 3 && "packed" in value && "start" in value && "length" in value) {
      return view(value);
    }
    if (keys === 1 && "alone" in value) return packed[value.alone];
    return null;
  };
  // The same exact key sets as unpacked_frame's in Python: any other object is data.
  const restore = (_key, value) => {
    if (value === null || typeof value !== "object" || Array.isArray(value)) return value;
    const keys = Object.keys(value).length;
    const array = arrayAt(value, keys);
    if (array !== null) return array;
    if (typeof value.times === "number") {
      const source = arrayAt(value, keys - 1);
      // A float32 product: exact in float64, then rounded once, as NumPy's float32 one.
      if (source !== null) {
        const product = new Float32Array(source.length);
        for (let i = 0; i < product.length; i++) product[i] = source[i] * value.times;
        return product;
      }
    }
    if (keys === 2 && "alone" in value && typeof value.code === "object") {
      return decodedWeights(packed[value.alone], value.code);
    }
    if (keys === 1 && "float" in value) return Number(value.float);
    return value;
  };
  const { state, numbers } = JSON.parse(frame.text, restore);
  return { sequence: frame.sequence, parts: frame.parts, state, numbers };
}
