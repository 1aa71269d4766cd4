/*
 * The served page's lesson sections drawn in the browser (app/views/drawn_lesson.py): put
 * their markup in, embed their figures' Bokeh items once, and draw and grade them with
 * lesson_drawing.js, as the offline page does; the row comparison and the output draw the
 * numbers the session sends, on the frame and view properties or on the session's own
 * channel. embedding.js and channel.js come before this code (figureModels, followTheme,
 * unpack, SdpaChannel).
 */
const LessonDrawing = globalThis.SdpaLessonDrawing;
const Kernel = globalThis.SdpaKernel;

/** Each page's row box → its component's message (the box's callback's hook). */
const ROW_INPUTS = (globalThis.SdpaServedRowInputs ??= new Map());

/**
 * Runs the jobs given to it once the page's next frame has been painted (a message posted
 * from an animation frame runs after that frame): a move's numbers for the lesson arrive
 * right behind the first screen's, and drawn at once they would hold the heatmap under the
 * student's hand back by the lesson's repaint. Jobs given a key replace the one waiting
 * under it (only the newest view is drawn); the others run in order.
 */
function afterNextPaint() {
  const waiting = new Map();
  let ordered = 0;
  let scheduled = false;
  const runAll = () => {
    scheduled = false;
    const jobs = [...waiting.values()];
    waiting.clear();
    for (const job of jobs) job();
  };
  return (job, key = `#${ordered++}`) => {
    waiting.delete(key);
    waiting.set(key, job);
    if (scheduled) return;
    scheduled = true;
    requestAnimationFrame(() => {
      const channel = new MessageChannel();
      channel.port1.onmessage = runAll;
      channel.port2.postMessage(null);
    });
  };
}

export function render({ model, el }) {
  const config = model.config;
  const key = model.channel_key;
  const target = model.channel_target;
  // Opened at once (the first screen's components have opened it already, if any).
  SdpaChannel.open(key);
  /** What comes on the session's channel for this component, once it can draw it. */
  const handlers = {};
  const afterPaint = afterNextPaint();
  const box = document.createElement("div");
  box.className = "sdpa-drawn-lesson";
  // Trusted markup, built once per process by app/export/lesson.py.
  box.innerHTML = model.html;
  el.append(box);
  /** What tests read: the models once embedded, the views and frames drawn. */
  const record = { models: null, views: 0, frames: 0, sequence: 0 };
  (globalThis.SdpaDrawnLessons ??= []).push(record);

  if (box.querySelector("#sdpa-worked-switch")) LessonDrawing.listenToWorkedSwitch(box);
  if (box.querySelector("#sdpa-quiz")) LessonDrawing.listenToQuiz(box, config.quiz, config.query);
  for (const button of box.querySelectorAll("button[data-lazy]")) lazySection(model, box, button);
  if (!model.figures) {
    model.on("remove", () => forget(record));
    return;
  }

  const { items, models: ids } = JSON.parse(model.figures);
  const cells = [...box.querySelectorAll(".sdpa-figure-cell")];
  const embed = (item, i) => globalThis.Bokeh.embed.embed_item(item, cells[i]);
  Promise.all(items.map(embed)).then((managers) => {
    const models = figureModels(managers, ids);
    followTheme(managers, config.dark_theme, model);
    record.models = models;
    if (models.collapse_scaled) {
      const table = Kernel.float64FromBase64(config.collapse.table);
      const caption = box.querySelector("#sdpa-collapse-caption .collapse-caption");
      const collapse = new LessonDrawing.CollapseDrawing(models, config.collapse, table, caption);
      const drawView = () => {
        collapse.draw(model.view);
        record.views += 1;
      };
      drawView();
      model.on("view", drawView);
      handlers.values = (values) => {
        if (values.view) {
          afterPaint(() => {
            collapse.draw(values.view);
            record.views += 1;
          }, "view");
        }
      };
    }
    if (models.row_figure) {
      const rows = new LessonDrawing.RowDrawing(models, config.row);
      const outputs = new LessonDrawing.OutputDrawing(models, config.output.dim);
      const { row: rowPart, output: outputPart } = config.parts;
      const drawFrame = (sent = model.frame) => {
        const frame = unpack(sent);
        if (!frame || !frame.parts || frame.sequence <= record.sequence) return;
        const { n, row } = frame.state;
        if (frame.parts.includes(rowPart)) rows.draw(frame.numbers[rowPart], n, row);
        if (frame.parts.includes(outputPart)) outputs.draw(frame.numbers[outputPart], n);
        record.frames += 1;
        record.sequence = frame.sequence;
      };
      globalThis[config.row_input_hook] ??= (input) => ROW_INPUTS.get(input)?.(input.value);
      ROW_INPUTS.set(models.row_input, (value) => {
        if (typeof value !== "number" || !Number.isFinite(value)) return;
        if (!SdpaChannel.send(key, target, { row_input: value })) model.send_msg({ row_input: value });
      });
      drawFrame();
      model.on("frame", () => drawFrame());
      handlers.frame = (sent) => afterPaint(() => drawFrame(sent));
      model.on("remove", () => ROW_INPUTS.delete(models.row_input));
    }
    SdpaChannel.listen(key, target, handlers);
    model.on("remove", () => SdpaChannel.forget(key, target));
  });
  model.on("remove", () => forget(record));
}

/**
 * A lesson section built when first opened (app/views/lazy_section.py): its `button`
 * opens and closes its box on the page and tells the session which are open (`opened`);
 * the box holds the child of the section's name, a column the session puts the section's
 * view in when it is first opened.
 */
function lazySection(model, box, button) {
  const name = button.dataset.lazy;
  const slot = box.querySelector(`#${button.getAttribute("aria-controls")}`);
  const title = button.textContent;
  const show = () => {
    const open = model.opened.includes(name);
    button.textContent = `${title} ${open ? "▴" : "▾"}`;
    button.setAttribute("aria-expanded", String(open));
    slot.hidden = !open;
  };
  const fill = () => {
    const child = model.get_child(name);
    slot.replaceChildren(...(child ? [child] : []));
  };
  button.addEventListener("click", () => {
    const others = model.opened.filter((opened) => opened !== name);
    model.opened = model.opened.includes(name) ? others : [...others, name];
    show();
  });
  fill();
  show();
  model.on(name, fill);
  model.on("opened", show);
}

/** Drop a removed component's record. */
function forget(record) {
  const records = globalThis.SdpaDrawnLessons;
  records.splice(records.indexOf(record), 1);
}
