/*
 * The class bar (app/served/components/class_bar.py): the presenter's class panel, or a
 * student's "Following the instructor" with its switch and its way back. Plain elements:
 * a region named by its words, a status line read politely, native buttons and switches.
 */

/** One of the bar's words, with `{count}` filled. */
function say(texts, key, count) {
  return texts[key].replace("{count}", String(count));
}

/** A native checkbox announced as a switch, in its label. */
function labelledSwitch(text) {
  const label = document.createElement("label");
  const input = document.createElement("input");
  input.type = "checkbox";
  input.setAttribute("role", "switch");
  label.append(input, document.createTextNode(text));
  return { label, input };
}

function plainButton(text, className) {
  const button = document.createElement("button");
  button.type = "button";
  button.className = className;
  button.textContent = text;
  return button;
}

function presenterBar(model, bar, title, detail) {
  const texts = model.texts;
  const send = plainButton(texts.send, "sdpa-class-send");
  const { label, input } = labelledSwitch(texts.live);
  input.className = "sdpa-class-live";
  send.addEventListener("click", () => {
    model.send_presses = model.send_presses + 1;
  });
  input.addEventListener("change", () => {
    model.live = input.checked;
  });
  const show = () => {
    const count = model.students;
    title.textContent = say(texts, count === 1 ? "students_one" : "students_many", count);
    const reached = model.reached;
    detail.textContent =
      reached < 0 ? "" : say(texts, reached === 1 ? "sent_one" : "sent_many", reached);
    input.checked = model.live;
  };
  for (const name of ["students", "reached", "live"]) model.on(name, show);
  show();
  bar.append(send, label);
}

function studentBar(model, bar, title, detail) {
  const texts = model.texts;
  const { label, input } = labelledSwitch(texts.follow);
  input.className = "sdpa-class-follow";
  const back = plainButton(texts.back, "sdpa-class-back");
  input.addEventListener("change", () => {
    model.following = input.checked;
  });
  back.addEventListener("click", () => {
    model.back_presses = model.back_presses + 1;
  });
  const show = () => {
    bar.hidden = !model.presented;
    const following = model.following;
    title.textContent = following ? texts.following : texts.exploring;
    detail.textContent = following ? texts.following_detail : texts.exploring_detail;
    input.checked = following;
    back.hidden = following;
  };
  for (const name of ["presented", "following"]) model.on(name, show);
  show();
  bar.append(label, back);
}

export function render({ model, el }) {
  const bar = document.createElement("section");
  bar.className = "sdpa-class";
  bar.setAttribute("aria-label", model.texts.region);
  const status = document.createElement("div");
  status.className = "sdpa-class-status";
  status.setAttribute("role", "status");
  const title = document.createElement("span");
  title.className = "sdpa-class-title";
  const detail = document.createElement("span");
  detail.className = "sdpa-class-detail";
  status.append(title, detail);
  bar.append(status);
  if (model.role === "presenter") presenterBar(model, bar, title, detail);
  else studentBar(model, bar, title, detail);
  el.append(bar);
}
