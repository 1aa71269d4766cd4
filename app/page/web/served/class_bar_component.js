/*
 * The class bar (app/served/components/class_bar.py): the presenter's class panel, or a
 * student's "Following the instructor" with its switch and its way back. Plain elements:
 * a region named by its words, a status line read politely, native buttons and switches.
 */

/** One of the bar's words, with `{count}` filled (or each `{name}` of an object's). */
function say(texts, key, count) {
  const values = typeof count === "object" ? count : { count };
  return texts[key].replace(/\{(\w+)\}/g, (whole, name) =>
    name in values ? String(values[name]) : whole,
  );
}

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

/**
 * The class's answers: per question a small bar chart, each choice's label, bar and count
 * (the bars are drawn, the counts are read), and how many answered.
 */
function answersBlock(model) {
  const texts = model.texts;
  const block = document.createElement("div");
  block.className = "sdpa-class-answers";
  const heading = document.createElement("h2");
  heading.textContent = texts.answers;
  // Only the presenter's page reads how many browsers the answers come from.
  const presenter = model.role === "presenter";
  const voters = document.createElement("p");
  voters.className = "sdpa-class-voters";
  const showVoters = () => {
    voters.textContent = say(texts, "voters", { browsers: model.browsers, pages: model.students });
  };
  if (presenter) {
    for (const name of ["browsers", "students"]) model.on(name, showVoters);
    showVoters();
  }
  const show = () => {
    const charts = Object.entries(model.questions).map(([key, question]) => {
      const counts = model.answers[key] ?? {};
      const values = Object.keys(question.choices).map((choice) => counts[choice] ?? 0);
      const most = Math.max(1, ...values);
      const total = values.reduce((sum, value) => sum + value, 0);
      const chart = document.createElement("figure");
      chart.className = "sdpa-class-question";
      chart.dataset.question = key;
      const caption = document.createElement("figcaption");
      caption.textContent = `${question.title} (${say(texts, "answered", total)})`;
      const list = document.createElement("ul");
      Object.entries(question.choices).forEach(([choice, label], index) => {
        const item = document.createElement("li");
        item.className = "sdpa-class-choice";
        item.dataset.choice = choice;
        const name = document.createElement("span");
        name.textContent = label;
        const track = document.createElement("span");
        track.className = "sdpa-class-track";
        track.setAttribute("aria-hidden", "true");
        const fill = document.createElement("span");
        fill.className = "sdpa-class-fill";
        fill.style.display = "block";
        fill.style.width = `${(100 * values[index]) / most}%`;
        track.append(fill);
        const count = document.createElement("span");
        count.className = "sdpa-class-count";
        count.textContent = String(values[index]);
        item.append(name, track, count);
        list.append(item);
      });
      chart.append(caption, list);
      return chart;
    });
    block.replaceChildren(heading, ...(presenter ? [voters] : []), ...charts);
  };
  model.on("answers", show);
  show();
  return block;
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
    detail.textContent = model.bus_down
      ? texts.bus_down
      : reached < 0
        ? ""
        : say(texts, reached === 1 ? "sent_one" : "sent_many", reached);
    input.checked = model.live;
  };
  for (const name of ["students", "reached", "live", "bus_down"]) model.on(name, show);
  show();
  const reveal = labelledSwitch(texts.reveal);
  reveal.input.className = "sdpa-class-reveal";
  reveal.input.checked = model.revealed;
  reveal.input.addEventListener("change", () => {
    model.revealed = reveal.input.checked;
  });
  model.on("revealed", () => {
    reveal.input.checked = model.revealed;
  });
  const reset = plainButton(texts.reset, "sdpa-class-reset");
  reset.addEventListener("click", () => {
    model.reset_presses = model.reset_presses + 1;
  });
  bar.append(send, label, answersBlock(model), reveal.label, reset);
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
    bar.hidden = !(model.presented || model.bus_down);
    const following = model.following;
    title.textContent = following ? texts.following : texts.exploring;
    detail.textContent = model.bus_down
      ? texts.bus_down
      : following
        ? texts.following_detail
        : texts.exploring_detail;
    input.checked = following;
    back.hidden = following;
  };
  const answers = answersBlock(model);
  const showAnswers = () => {
    answers.hidden = !model.revealed;
  };
  for (const name of ["presented", "following", "bus_down"]) model.on(name, show);
  model.on("revealed", showAnswers);
  show();
  showAnswers();
  bar.append(label, back, answers);
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
