/*
 * The served page's first screen around its drawn parts (app/served/components/first_screen.py): the
 * landmark and hidden headings, the controls' card (its controls and "More controls" are
 * served/controls_component.js's), the column of the plots with the lesson's gate and the lesson
 * under them, and the theme the document shows.
 * The parts Python fills (controls, figures, alerts, the lesson) are its children; the
 * layout around them is plain elements and CSS.
 */

/** A plain button of class `buttonClass` in a box of class `boxClass`. */
function boxedButton(boxClass, buttonClass) {
  const box = document.createElement("div");
  box.className = boxClass;
  const button = document.createElement("button");
  button.type = "button";
  button.className = buttonClass;
  box.append(button);
  return { box, button };
}

/** A heading assistive technology reads and the page does not show. */
function hiddenHeading(level, text) {
  const heading = document.createElement(`h${level}`);
  heading.className = "sdpa-hidden";
  heading.textContent = text;
  return heading;
}

/** How soon, and how often, a box looks again for a child whose view is not built yet. */
const CHILD_RETRY_MS = 20;
const CHILD_RETRIES = 100;

/**
 * A box holding child `name`, once the session gives one (the component draws its own
 * children: a child that arrives later does not redraw the rest of the screen).
 */
function childBox(model, name, className) {
  const box = document.createElement("div");
  box.className = className;
  const fill = (tries = 0) => {
    const child = model.get_child(name);
    // A component whose children Panel renders by hand calls this before it builds the new
    // child's view, and not again: look once more, for a while.
    if (!child && model[name] != null && tries < CHILD_RETRIES) {
      setTimeout(() => fill(tries + 1), CHILD_RETRY_MS);
      return;
    }
    box.replaceChildren(...(child ? [child] : []));
  };
  fill();
  model.on(name, () => fill());
  return box;
}

/**
 * Report the system's colour scheme as `dark` when the page opens and when it changes;
 * show the theme the session says (`dark`, the header's toggle included) on the document.
 */
function followSystemTheme(model) {
  const query = window.matchMedia("(prefers-color-scheme: dark)");
  const show = () => {
    const theme = model.dark ? "dark" : "light";
    if (document.documentElement.dataset.theme !== theme) {
      document.documentElement.dataset.theme = theme;
    }
  };
  const follow = () => {
    model.dark = query.matches;
    show();
  };
  follow();
  query.addEventListener("change", follow);
  model.on("dark", show);
  model.on("remove", () => query.removeEventListener("change", follow));
}

/**
 * The lesson's gate: a button that asks for the lesson when pressed, or once the student
 * scrolls and the gate is near the viewport (a gate that happens to sit in a tall first
 * screen does not cost every arriving student the lesson).
 */
function lessonGate(model) {
  const { box, button } = boxedButton("sdpa-gate", "lesson-gate");
  button.textContent = `${model.texts.gate} ▾`;
  let observer = null;
  let near = false;
  let scrolled = false;
  const SCROLL_EVENTS = ["scroll", "wheel", "touchmove"];
  const onScroll = () => {
    scrolled = true;
    if (near) open();
  };
  const onKey = (event) => {
    if (["PageDown", "End"].includes(event.key)) onScroll();
  };
  const stopListening = () => {
    if (observer) observer.disconnect();
    for (const type of SCROLL_EVENTS) window.removeEventListener(type, onScroll);
    window.removeEventListener("keydown", onKey);
  };
  function open() {
    if (model.lesson_opened) return;
    button.disabled = true;
    button.textContent = model.texts.gate_opening;
    model.lesson_opened = true;
    stopListening();
  }
  button.addEventListener("click", open);
  // What a student does to scroll: the template scrolls an inner container in a shadow
  // root, whose scroll events do not reach the window, so listen for their causes.
  for (const type of SCROLL_EVENTS) window.addEventListener(type, onScroll, { passive: true });
  window.addEventListener("keydown", onKey);
  if ("IntersectionObserver" in window) {
    observer = new IntersectionObserver(
      (entries) => {
        // Near, or already scrolled past (a fast scroll can jump over it).
        near = entries.some((e) => e.isIntersecting || e.boundingClientRect.bottom < 0);
        if (near && scrolled) open();
      },
      { rootMargin: `0px 0px ${model.sizes.gate_margin}px 0px` },
    );
    observer.observe(button);
  }
  const showGate = () => {
    box.hidden = !model.gate_shown;
  };
  model.on("gate_shown", showGate);
  model.on("remove", stopListening);
  showGate();
  return box;
}

/** The nearest element above `element` (across shadow roots) that scrolls vertically, or
 * null when the document does. */
function scrollerOf(element) {
  let node = element;
  while (node) {
    node =
      node.parentElement ??
      (node.getRootNode() instanceof ShadowRoot ? node.getRootNode().host : null);
    if (!node || node === document.scrollingElement || node === document.body) return null;
    const { overflowY } = getComputedStyle(node);
    if (overflowY === "auto" || overflowY === "scroll") return node;
  }
  return null;
}

/**
 * While the controls' card sits beside the plots' column (not above it), it stays in view
 * as the page scrolls on through the lesson, which follows the plots in their column, and
 * it is no taller than the page's visible height (its own part scrolls when it is longer):
 * the lesson then starts under its button, not below the whole card, and the column beside
 * it is never an empty band.
 */
function keepCardInView(body, card, main, model) {
  const update = () => {
    const beside = card.getBoundingClientRect().right <= main.getBoundingClientRect().left + 1;
    if (body.classList.contains("sdpa-beside") !== beside) {
      body.classList.toggle("sdpa-beside", beside);
    }
    const scroller = scrollerOf(body);
    const visible = scroller ? scroller.clientHeight : window.innerHeight;
    const height = `${Math.max(visible - 2 * model.sizes.card_gap, 0)}px`;
    if (body.style.getPropertyValue("--sdpa-card-max") !== height) {
      body.style.setProperty("--sdpa-card-max", height);
    }
  };
  const observer = new ResizeObserver(update);
  observer.observe(body);
  window.addEventListener("resize", update);
  model.on("remove", () => {
    observer.disconnect();
    window.removeEventListener("resize", update);
  });
}

export function render({ model, el }) {
  followSystemTheme(model);
  // The embedded page has no Material UI Page and so no main element of its own.
  const page = document.createElement(model.embed ? "main" : "div");
  page.className = "sdpa-first-screen";
  if (model.embed) page.append(hiddenHeading(1, model.texts.title));
  page.append(
    childBox(model, "classroom", "sdpa-class-box"),
    childBox(model, "notice", "sdpa-notice"),
  );

  const card = document.createElement("div");
  card.className = "sdpa-sidebar controls";
  card.append(childBox(model, "controls", "sdpa-drawn-controls"));

  const main = document.createElement("div");
  main.className = "sdpa-main";
  main.append(
    childBox(model, "scene", "sdpa-scene"),
    childBox(model, "figures", "sdpa-figures-box"),
  );
  // Above the gate: the lesson's sections replace the gate, under this heading, in the
  // plots' column.
  main.append(
    hiddenHeading(2, model.texts.lesson),
    lessonGate(model),
    childBox(model, "lesson", "sdpa-lesson"),
  );

  const body = document.createElement("div");
  body.className = "sdpa-body";
  body.append(card, main);
  page.append(body);
  el.append(page);
  keepCardInView(body, card, main, model);
}
