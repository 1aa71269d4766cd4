/*
 * The session's own websocket on the served page (app/served/channel.py): moves go out on it as
 * short JSON messages, frames of numbers come back as binary messages and a component's
 * small values as JSON ones, all outside Bokeh's document protocol. One per session key,
 * shared by the page's drawn components (one module in the page's bundle).
 *
 * It is an accelerator: until it is open, and once it closes or is refused, `send` says
 * false and the component sends over Bokeh's websocket instead, and the session sends its
 * frames there too. Frames carry their sequence, so the drawing code keeps the newest.
 */
const TYPED = { float32: Float32Array, float64: Float64Array, uint16: Uint16Array };
/** By key: { socket, state, listeners: Map(to → callback), waiting: Map(to → frames) }. */
const channels = new Map();

/**
 * The channel's address: its name beside the page's own (/main → /channel), the key in
 * its query argument: `where` is `{name, key}` (app/served/channel_address.py, which the
 * components hand over as data).
 */
function address(key, where) {
  const url = new URL(where.name, window.location.href);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  url.search = new URLSearchParams({ [where.key]: key }).toString();
  url.hash = "";
  return url.href;
}

/** A binary frame message (app/served/channel.py, frame_message) as a packed frame. */
function frame(buffer) {
  const view = new DataView(buffer);
  const length = view.getUint32(0, true);
  const header = JSON.parse(new TextDecoder().decode(new Uint8Array(buffer, 4, length)));
  const packed = {};
  for (const [name, dtype, offset, size] of header.arrays) {
    packed[name] = new TYPED[dtype](buffer, offset, size);
  }
  return {
    to: header.to,
    sequence: header.sequence,
    parts: header.parts,
    text: header.text,
    packed,
  };
}

/** A message as `{to, kind, body}`: a binary frame, or a text `{to, values}`. */
function read(message) {
  if (message instanceof ArrayBuffer) {
    const received = frame(message);
    return { to: received.to, kind: "frame", body: received };
  }
  const { to, values } = JSON.parse(message);
  return { to, kind: "values", body: values };
}

function deliver(channel, message) {
  const received = read(message);
  if (received.kind === "frame") channel.frames += 1;
  const handlers = channel.listeners.get(received.to);
  if (handlers) {
    handlers[received.kind]?.(received.body);
    return;
  }
  // What arrives before its component can draw waits for it.
  const waiting = channel.waiting.get(received.to) ?? [];
  waiting.push(received);
  channel.waiting.set(received.to, waiting);
}

/** Open the channel of session `key` at `where` (its address: see `address`), once per key;
 * an empty key opens nothing. */
function open(key, where) {
  if (!key || channels.has(key)) return;
  const channel = {
    socket: null,
    state: "connecting",
    frames: 0,
    listeners: new Map(),
    waiting: new Map(),
  };
  channels.set(key, channel);
  let socket;
  try {
    socket = new WebSocket(address(key, where));
  } catch {
    channel.state = "closed";
    return;
  }
  socket.binaryType = "arraybuffer";
  channel.socket = socket;
  socket.addEventListener("open", () => {
    channel.state = "open";
  });
  socket.addEventListener("message", (event) => deliver(channel, event.data));
  socket.addEventListener("close", () => {
    channel.state = "closed";
  });
}

/** Send `message` to the session's receiver `to`; false when the channel is not open. */
function send(key, to, message) {
  const channel = channels.get(key);
  if (channel?.state !== "open") return false;
  channel.socket.send(JSON.stringify({ to, msg: message }));
  return true;
}

/**
 * Hand what comes for `to` to `handlers` (`frame(frame)` for a frame of numbers,
 * `values(values)` for the values of properties), what arrived before them first.
 */
function listen(key, to, handlers) {
  const channel = channels.get(key);
  if (!channel) return;
  channel.listeners.set(to, handlers);
  const waiting = channel.waiting.get(to) ?? [];
  channel.waiting.delete(to);
  for (const received of waiting) handlers[received.kind]?.(received.body);
}

/** Stop handing frames for `to` to anyone (its component was removed). */
function forget(key, to) {
  channels.get(key)?.listeners.delete(to);
}

/** What tests read: the channel's state ("connecting", "open", "closed") and frames. */
function status(key) {
  const channel = channels.get(key);
  return channel ? { state: channel.state, frames: channel.frames } : null;
}

export { forget, listen, open, send, status };
