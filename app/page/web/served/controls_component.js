/*
 * The served page's controls (app/served/components/controls.py), drawn by control_widgets.js
 * from the widgets' spec: the first screen's, then, under a "More controls" button that
 * the page opens and closes by itself, the others and the share part. A move is sent to
 * the session on its own channel (channel.js) while it is open, else as a component message; `values` holds the state's values the page
 * starts from, and later ones come as messages.
 */
import * as SdpaControlDrawing from "../shared/control_widgets.js";
import * as SdpaChannel from "./channel.js";

/** A grid of the widgets `specs`, each drawn and kept in `shown` by name. */
function controlsGrid(specs, send, shown) {
  const grid = document.createElement("div");
  grid.className = "sdpa-controls";
  for (const control of specs) {
    const drawn = SdpaControlDrawing.build(control, send);
    shown[control.name] = drawn;
    grid.append(drawn.element);
  }
  return grid;
}

/**
 * Copy link and Copy embed code: the session writes the text (from the page's address as
 * the server saw it and the scene's values), the page shows it in a read-only box (to copy
 * by hand where the browser refuses the clipboard: plain http) and copies it where allowed.
 */
function sharePart(texts, send) {
  const box = document.createElement("div");
  box.className = "sdpa-share";
  const buttons = document.createElement("div");
  buttons.className = "sdpa-share-buttons";
  for (const kind of ["link", "embed"]) {
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = texts[kind];
    button.addEventListener("click", () => send({ share: kind }));
    buttons.append(button);
  }
  const id = SdpaControlDrawing.uniqueId("shared", "text");
  const label = document.createElement("label");
  label.htmlFor = id;
  label.textContent = texts.shared;
  const shown = document.createElement("textarea");
  shown.id = id;
  shown.readOnly = true;
  shown.rows = 3;
  shown.placeholder = texts.placeholder;
  shown.className = "share-text";
  // Says whether the text reached the clipboard: a plain-http page, or a browser that
  // refuses, leaves it to the student to copy from the box.
  const status = document.createElement("div");
  status.className = "sdpa-share-status";
  status.setAttribute("role", "status");
  box.append(buttons, status, label, shown);
  const say = (words) => {
    status.textContent = words;
  };
  return {
    element: box,
    show(text) {
      shown.value = text;
      say("");
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(text).then(
          () => say(texts.copied),
          () => say(texts.by_hand),
        );
      } else {
        say(texts.by_hand);
      }
    },
  };
}

/**
 * The "More controls" button over `section`: `aria-expanded` says whether it is open; a
 * window at least `openFrom` px wide (0: never) opens it as it renders.
 */
function moreButton(label, section, openFrom) {
  const box = document.createElement("div");
  box.className = "sdpa-disclosure";
  const button = document.createElement("button");
  button.type = "button";
  button.className = "disclosure";
  section.id = SdpaControlDrawing.uniqueId("more", "section");
  button.setAttribute("aria-controls", section.id);
  const show = (opened) => {
    section.hidden = !opened;
    button.textContent = `${label} ${opened ? "▴" : "▾"}`;
    button.setAttribute("aria-expanded", String(opened));
  };
  button.addEventListener("click", () => show(section.hidden));
  show(openFrom > 0 && window.innerWidth >= openFrom);
  box.append(button);
  return box;
}

export function render({ model, el }) {
  const key = model.channel_key;
  SdpaChannel.open(key, model.channel_address);
  const shown = {};
  const positions = Object.fromEntries(
    [...model.controls, ...model.more].map((spec) => [spec.name, spec.positions]),
  );
  const send = (message) => {
    if (!SdpaChannel.send(key, model.channel_target, message)) model.send_msg(message);
    // A slider's exact box shows the position's value at once, as the session expects
    // (ControlBinding.take): a plain move gets no answer.
    const exact = "index" in message ? shown[`${message.name}_exact`] : undefined;
    exact?.show({ value: Number(positions[message.name][message.index]) });
  };
  el.append(controlsGrid(model.controls, send, shown));
  let share = null;
  if (model.more.length > 0) {
    const section = document.createElement("div");
    section.className = "sdpa-more";
    section.append(controlsGrid(model.more, send, shown));
    if (model.shares) {
      share = sharePart(model.texts, send);
      section.append(share.element);
    }
    el.append(moreButton(model.texts.more, section, model.open_more_from), section);
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
  // under the student's hand. A share request is answered with the text to copy.
  model.on("msg:custom", (message) => {
    if (message?.values) showValues(message.values);
    if (message && typeof message.shared === "string") share?.show(message.shared);
  });
  // The same answers, on the session's channel while the page holds it.
  SdpaChannel.listen(key, model.channel_target, {
    values: (message) => {
      if (message?.values) showValues(message.values);
    },
  });
  model.on("remove", () => SdpaChannel.forget(key, model.channel_target));
}
