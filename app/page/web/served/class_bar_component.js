/*
 * The class bar (app/served/components/class_bar.py): the presenter's class panel, or a
 * student's "Following the instructor" with its one way back. Plain elements: a region
 * named by its words, a status line read politely, native buttons, switches and a
 * disclosure for the answers.
 */

import { answerChart, say } from "./class_answers.js";

/**
 * The ballot this browser votes with: the page claims the one its storage keeps (any other
 * word when there is none, or storage is blocked), and keeps the one the server answers,
 * so that the browser's tabs and reloads count as one voter.
 */
function keepBallot(model) {
  const read = () => {
    try {
      return window.localStorage.getItem(model.storage);
    } catch {
      return null;
    }
  };
  model.on("ballot", () => {
    try {
      if (model.ballot) window.localStorage.setItem(model.storage, model.ballot);
    } catch {
      // Storage blocked (a private window's iframe): this page votes on its own.
    }
  });
  model.claim = read() || "none";
}

/**
 * The presenter's page keeps its token in a cookie of this page's path (sent back on a
 * reload, to this site only) and takes the presenter key out of its address bar, byte for
 * byte leaving the rest of the query: a photo of the projected screen presents nothing.
 */
function keepPresenting(model) {
  if (!model.presenter_token) return;
  const secure = window.location.protocol === "https:" ? "; Secure" : "";
  // biome-ignore lint/suspicious/noDocumentCookie: the Cookie Store API needs a secure context, and a class's server is often plain http on its network.
  document.cookie =
    `${model.presenter_cookie}=${model.presenter_token}; Path=${window.location.pathname}` +
    `; Max-Age=${model.presenter_cookie_age}; SameSite=Strict${secure}`;
  const search = window.location.search.replace(/^\?/, "");
  const named = (piece) => {
    try {
      return decodeURIComponent(piece.split("=")[0].replace(/\+/g, " "));
    } catch {
      return piece;
    }
  };
  const kept = search
    .split("&")
    .filter((piece) => piece && named(piece) !== model.present_parameter);
  if (kept.length === search.split("&").filter(Boolean).length) return;
  const query = kept.length ? `?${kept.join("&")}` : "";
  const { pathname, hash } = window.location;
  window.history.replaceState(window.history.state, "", `${pathname}${query}${hash}`);
}

/** A native checkbox announced as a switch, in its label. */
function labelledSwitch(text, className) {
  const label = document.createElement("label");
  const input = document.createElement("input");
  input.type = "checkbox";
  input.className = className;
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

/** A closed disclosure named `text`, and the box it opens. */
function disclosure(text) {
  const details = document.createElement("details");
  details.className = "sdpa-class-disclosure";
  const summary = document.createElement("summary");
  summary.textContent = text;
  const box = document.createElement("div");
  box.className = "sdpa-class-answers";
  details.append(summary, box);
  return { details, box };
}

/** The charts of `model.answers`, per question; `counted` false hides counts and right choices. */
function charts(model, counted) {
  return Object.entries(model.questions).map(([key, question]) =>
    answerChart(model.texts, key, question, model.answers[key] ?? {}, counted),
  );
}

function presenterBar(model, bar, title, detail) {
  const texts = model.texts;
  keepPresenting(model);
  const send = plainButton(texts.send, "sdpa-class-send");
  const live = labelledSwitch(texts.live, "sdpa-class-live");
  const reveal = labelledSwitch(texts.reveal, "sdpa-class-reveal");
  send.addEventListener("click", () => {
    model.send_presses = model.send_presses + 1;
  });
  live.input.addEventListener("change", () => {
    model.live = live.input.checked;
  });
  reveal.input.addEventListener("change", () => {
    model.revealed = reveal.input.checked;
  });
  const showStatus = () => {
    const count = model.students;
    title.textContent = say(texts, count === 1 ? "students_one" : "students_many", count);
    const reached = model.reached;
    const sent =
      reached < 0
        ? ""
        : model.held
          ? say(texts, "held", reached)
          : say(texts, reached === 1 ? "sent_one" : "sent_many", reached);
    const down = model.bus_down
      ? `${texts.bus_down} ${say(texts, "bus_down_presenter", model.unreachable)}`
      : "";
    detail.textContent = [down, sent].filter(Boolean).join(" ");
    live.input.checked = model.live;
    reveal.input.checked = model.revealed;
  };
  for (const name of ["students", "reached", "held", "live", "revealed", "bus_down", "unreachable"])
    model.on(name, showStatus);
  showStatus();

  // The answers, in a disclosure: hidden on the projected screen until shown to the class,
  // or until the presenter peeks (this page only).
  const { details, box } = disclosure(texts.answers);
  const voters = document.createElement("p");
  voters.className = "sdpa-class-voters";
  const hidden = document.createElement("p");
  hidden.className = "sdpa-class-hidden";
  hidden.textContent = texts.hidden;
  const peek = plainButton(texts.peek, "sdpa-class-peek");
  peek.setAttribute("aria-pressed", "false");
  const reset = plainButton(texts.reset, "sdpa-class-reset");
  // Only the charts are drawn anew: the buttons keep their focus.
  const drawn = document.createElement("div");
  drawn.className = "sdpa-class-answers";
  box.append(voters, hidden, drawn, peek, reset);
  const showAnswers = () => {
    const counted = model.revealed || peek.getAttribute("aria-pressed") === "true";
    voters.textContent = say(texts, "voters", { browsers: model.browsers, pages: model.students });
    hidden.hidden = counted;
    peek.hidden = model.revealed;
    drawn.replaceChildren(...charts(model, counted));
  };
  peek.addEventListener("click", () => {
    peek.setAttribute("aria-pressed", String(peek.getAttribute("aria-pressed") !== "true"));
    showAnswers();
  });
  reset.addEventListener("click", () => {
    model.reset_presses = model.reset_presses + 1;
  });
  for (const name of ["answers", "revealed", "browsers", "students"]) model.on(name, showAnswers);
  showAnswers();
  bar.append(send, live.label, reveal.label, details);
}

function studentBar(model, bar, title, detail) {
  const texts = model.texts;
  const back = plainButton(texts.back, "sdpa-class-back");
  back.addEventListener("click", () => {
    model.back_presses = model.back_presses + 1;
  });
  const show = () => {
    bar.hidden = !(model.presented || model.bus_down);
    const following = model.following;
    // While the class is not connected, every page says that first.
    title.textContent = model.bus_down
      ? texts.bus_down
      : following
        ? texts.following
        : texts.exploring;
    detail.textContent = !following
      ? texts.exploring_detail
      : !model.bus_down
        ? texts.following_detail
        : model.presented
          ? texts.bus_down_with_presenter
          : texts.bus_down_following;
    back.hidden = following;
  };
  const { details, box } = disclosure(texts.answers);
  const showAnswers = () => {
    details.hidden = !model.revealed;
    box.replaceChildren(...charts(model, true));
  };
  for (const name of ["presented", "following", "bus_down"]) model.on(name, show);
  for (const name of ["revealed", "answers"]) model.on(name, showAnswers);
  show();
  showAnswers();
  bar.append(back, details);
  keepBallot(model);
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
