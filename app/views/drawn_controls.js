/*
 * The served page's first-screen sliders and switches (app/views/drawn_controls.py), drawn
 * by control_drawing.js from the controls' spec; a move is sent to the session on its own
 * channel (channel.js and control_drawing.js come before this code) while it is open, else
 * as a component message; `values` holds the state's values the page starts from, and later
 * ones come as messages.
 */

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
    const drawn = SdpaControlDrawing.build(control, send);
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
