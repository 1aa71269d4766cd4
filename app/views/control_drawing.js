/*
 * The served page's controls drawn in the browser (app/views/drawn_controls.py): a slider,
 * a switch or a choice of buttons built from a control's spec, named by its label. Shared
 * by the first screen's component (drawn_controls.js) and the lesson's (drawn_lesson.js):
 * each component's module carries this file, and the first to run defines it.
 */
globalThis.SdpaControlDrawing ??= (() => {
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
    caption.id = `sdpa-control-${control.name}-${Math.random().toString(36).slice(2, 8)}`;
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

  const BUILDERS = { slider, switch: toggle, buttons };

  /**
   * The control `control` (its spec) drawn: `{element, show(value)}`, `send` called with
   * each move (`{name, index}` for a slider, `{name, value}` otherwise).
   */
  function build(control, send) {
    return BUILDERS[control.widget](control, send);
  }

  return { build };
})();
