/*
 * The served page's first-screen sliders and switches (app/views/drawn_controls.py): native
 * inputs built from the controls' spec, named by their labels; a move is sent to the
 * session on its own channel (channel.js, before this code) while it is open, else as a
 * component message; `values` holds the state's values the page starts from, and later
 * ones come as messages.
 */

/**
 * The width, in `ch`, a value's box keeps whatever it shows: that of the longest position
 * (its digits are tabular, each 1ch wide). The label then breaks where it breaks at every
 * position, so the slider under it never moves while it is dragged (issue 26, point 3).
 */
function widestValue(control) {
  return Math.max(...control.positions.map((text) => text.length));
}

/** A slider: its label shows the state's value, its position the nearest grid point. */
function slider(control, send) {
  const box = document.createElement("div");
  box.className = "sdpa-control";
  const id = `sdpa-control-${control.name}-${Math.random().toString(36).slice(2, 8)}`;
  const label = document.createElement("label");
  label.htmlFor = id;
  const value = document.createElement("span");
  value.className = "value";
  value.style.minWidth = `${widestValue(control)}ch`;
  label.append(`${control.label}: `, value);
  const input = document.createElement("input");
  input.type = "range";
  input.id = id;
  input.min = "0";
  input.max = String(control.positions.length - 1);
  input.step = "1";
  input.dataset.control = control.name;
  // The name is the label alone; the value is read from aria-valuetext.
  input.setAttribute("aria-label", control.label);
  const showText = (text) => {
    value.textContent = text;
    input.setAttribute("aria-valuetext", text);
  };
  input.addEventListener("input", () => {
    const index = Number(input.value);
    // The position's value at once, before the server answers.
    showText(control.positions[index]);
    send({ name: control.name, index });
  });
  box.append(label, input);
  return {
    element: box,
    show({ index, text }) {
      input.value = String(index);
      showText(text);
    },
  };
}

/** A switch: a checkbox with the switch role, its label beside it. */
function toggle(control, send) {
  const box = document.createElement("div");
  box.className = "sdpa-control";
  const label = document.createElement("label");
  label.className = "sdpa-switch";
  const input = document.createElement("input");
  input.type = "checkbox";
  input.setAttribute("role", "switch");
  input.dataset.control = control.name;
  // The track holds the (transparent) input over it and the thumb after it, which the
  // input's checked state moves (CSS).
  const track = document.createElement("span");
  track.className = "track";
  const thumb = document.createElement("span");
  thumb.className = "thumb";
  track.append(input, thumb);
  label.append(track, control.label);
  input.addEventListener("change", () => send({ name: control.name, value: input.checked }));
  box.append(label);
  return {
    element: box,
    show({ value }) {
      input.checked = Boolean(value);
    },
  };
}

const BUILDERS = { slider, switch: toggle };

export function render({ model, el }) {
  const grid = document.createElement("div");
  grid.className = "sdpa-controls";
  const key = model.channel_key;
  SdpaChannel.open(key);
  const send = (message) => {
    if (!SdpaChannel.send(key, model.channel_target, message)) model.send_msg(message);
  };
  const shown = {};
  for (const control of model.controls) {
    const drawn = BUILDERS[control.widget](control, send);
    shown[control.name] = drawn;
    grid.append(drawn.element);
  }
  const showValues = (values) => {
    for (const [name, value] of Object.entries(values)) {
      shown[name]?.show(value);
    }
  };
  showValues(model.values);
  // Set again only when a page's own change of the property was refused.
  model.on("values", () => showValues(model.values));
  // The session answers a move only with what the page does not show yet (an exact value
  // kept, a refused move put back, a change from elsewhere: a preset, the exact box, a
  // link), as a message: a plain move gets no answer that could pull the slider back from
  // under the student's hand.
  model.on("msg:custom", (message) => {
    if (message && message.values) showValues(message.values);
  });
  el.append(grid);
}
