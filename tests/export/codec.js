/*
 * Test codec for the export's JavaScript: runs calls described in JSON and returns their
 * results as JSON, under Node (runner.js) or in the exported page (window.SdpaTestCodec).
 * Typed arrays travel as base64 ({"$f64": …} or {"$f32": …}); NaN and ±Infinity as
 * {"$num": "NaN"}, so nothing is lost on the way.
 */
((root, factory) => {
  const codec = factory();
  if (typeof module === "object" && module.exports) {
    module.exports = codec;
  } else {
    root.SdpaTestCodec = codec;
  }
})(typeof globalThis !== "undefined" ? globalThis : this, () => {
  function bytesToBase64(bytes) {
    let binary = "";
    for (let i = 0; i < bytes.length; i++) {
      binary += String.fromCharCode(bytes[i]);
    }
    return btoa(binary);
  }

  function base64ToBuffer(text) {
    const binary = atob(text);
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) {
      bytes[i] = binary.charCodeAt(i);
    }
    return bytes.buffer;
  }

  function decode(value) {
    if (Array.isArray(value)) {
      return value.map(decode);
    }
    if (value !== null && typeof value === "object") {
      if ("$f64" in value) {
        return new Float64Array(base64ToBuffer(value.$f64));
      }
      if ("$f32" in value) {
        return new Float32Array(base64ToBuffer(value.$f32));
      }
      if ("$num" in value) {
        return Number(value.$num);
      }
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, decode(v)]));
    }
    return value;
  }

  function bytesOf(array) {
    return bytesToBase64(new Uint8Array(array.buffer, array.byteOffset, array.byteLength));
  }

  function encode(value) {
    if (value instanceof Float64Array) {
      return { $f64: bytesOf(value) };
    }
    if (value instanceof Float32Array) {
      return { $f32: bytesOf(value) };
    }
    if (typeof value === "number" && !Number.isFinite(value)) {
      return { $num: String(value) };
    }
    if (Array.isArray(value)) {
      return value.map(encode);
    }
    if (value !== null && typeof value === "object") {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, encode(v)]));
    }
    return value;
  }

  /** Run [module, function, args] calls against `modules`; an exception becomes {$error}. */
  function runAll(calls, modules) {
    return calls.map(([module, name, args]) => {
      try {
        return encode(modules[module][name](...decode(args)));
      } catch (error) {
        return { $error: String(error) };
      }
    });
  }

  return { runAll };
});
