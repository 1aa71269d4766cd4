/*
 * Both pages' controls drawn in the browser: a slider, a switch, a choice of buttons (the
 * preset scenes too), a whole-number box or an action's button built from a widget's spec
 * (app/served/components/controls.py's widget_spec), named by its label. Shared by the served
 * first screen's component (served/controls_component.js), the served lesson's
 * (served/lesson_component.js) and the offline page (offline/page.js).
 */
/**
 * A unique id for an element a label, a description or a button points at: the part it
 * is (`control`, `help`, `shared`, `more`) and the name it belongs to, made unique
 * because a page may draw the same widget twice (a course page with two frames).
 */
function uniqueId(part, name) {
  return `sdpa-${part}-${name}-${Math.random().toString(36).slice(2, 8)}`;
}

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
  const id = uniqueId("control", control.name);
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

/**
 * A choice of buttons (the precision's formats): a named group of toggle buttons, the
 * state's choice pressed (`aria-pressed`); each is reached with Tab and pressed with Enter
 * or Space, as Material's toggle buttons are.
 */
function buttons(control, send) {
  const box = document.createElement("div");
  box.className = "sdpa-control sdpa-control-buttons";
  const caption = document.createElement("div");
  caption.className = "sdpa-buttons-caption";
  caption.textContent = control.label;
  caption.id = uniqueId("control", control.name);
  const group = document.createElement("div");
  group.className = "sdpa-buttons";
  group.setAttribute("role", "group");
  group.setAttribute("aria-labelledby", caption.id);
  group.dataset.control = control.name;
  const pressed = {};
  for (const [value, text] of control.choices) {
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = text;
    button.setAttribute("aria-pressed", "false");
    button.addEventListener("click", () => {
      // Pressed at once, before the server answers.
      for (const [other, one] of Object.entries(pressed)) {
        one.setAttribute("aria-pressed", String(other === value));
      }
      send({ name: control.name, value });
    });
    pressed[value] = button;
    group.append(button);
  }
  box.append(caption, group);
  return {
    element: box,
    show({ value }) {
      for (const [choice, button] of Object.entries(pressed)) {
        button.setAttribute("aria-pressed", String(choice === value));
      }
    },
  };
}

/** A caption above a form field, naming it (`for`), and the field's help under it. */
function labelled(control, field) {
  const box = document.createElement("div");
  box.className = "sdpa-control sdpa-field";
  field.id = uniqueId("control", control.name);
  field.dataset.control = control.name;
  const label = document.createElement("label");
  label.htmlFor = field.id;
  label.textContent = control.label;
  box.append(label, field);
  if (control.help) {
    const help = document.createElement("div");
    help.className = "sdpa-help";
    help.id = uniqueId("help", control.name);
    help.textContent = control.help;
    field.setAttribute("aria-describedby", help.id);
    box.append(help);
  }
  return box;
}

/**
 * A whole-number box (the exact d_k, the seed): a number input within the control's
 * bounds, sent when the student commits it (Enter, leaving the box, the arrow keys); a
 * box left empty or holding what is not a whole number is put back by the session.
 */
function number(control, send) {
  const field = document.createElement("input");
  field.type = "number";
  field.min = String(control.min);
  field.max = String(control.max);
  field.step = "1";
  field.inputMode = "numeric";
  // What the session last showed or was last sent: Enter then leaving the box sends once.
  let sent = null;
  let stepping = false;
  const commit = () => {
    const value = field.value.trim() === "" ? null : Number(field.value);
    if (value === sent) return;
    sent = value;
    send({ name: control.name, value });
  };
  field.addEventListener("change", commit);
  field.addEventListener("keydown", (event) => {
    if (event.key === "Enter") commit();
    // An arrow key steps the value (an input event follows): sent at once, as a slider's.
    stepping = event.key === "ArrowUp" || event.key === "ArrowDown";
  });
  field.addEventListener("input", () => {
    if (stepping) commit();
    stepping = false;
  });
  return {
    element: labelled(control, field),
    show({ value }) {
      sent = value;
      field.value = String(value);
    },
  };
}

/** A button that asks the session for an action (Resample: the next seed). */
function action(control, send) {
  const box = document.createElement("div");
  box.className = "sdpa-control sdpa-action";
  const button = document.createElement("button");
  button.type = "button";
  button.textContent = control.label;
  button.dataset.control = control.name;
  button.addEventListener("click", () => send({ name: control.name, value: true }));
  box.append(button);
  return { element: box, show() {} };
}

// The preset scenes are a choice of buttons too: all five in view, each label whole (a
// select cut the longest, 41 characters, in the controls' 280 px column).
const BUILDERS = { slider, switch: toggle, buttons, preset: buttons, number, action };

/**
 * The control `control` (its spec) drawn: `{element, show(value)}`, `send` called with
 * each move (`{name, index}` for a slider, `{name, value}` otherwise: a boolean, a
 * choice, a number or null for an emptied box, true for an action).
 */
function build(control, send) {
  return BUILDERS[control.widget](control, send);
}

export { build, uniqueId };
