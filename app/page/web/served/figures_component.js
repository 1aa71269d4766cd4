/*
 * The served page's first-screen figures (app/served/components/figures.py): embed the figures'
 * Bokeh items once, then draw every frame the session sets with first_screen_figures.js, as the
 * offline page does with its own source's frames, whether they come on the frame property
 * or on the session's own channel (channel.js). The items and the drawing config are page
 * data (page_data.js), the same for every student.
 */
import { FirstScreenDriver } from "../shared/first_screen_driver.js";
import * as F from "../shared/first_screen_figures.js";
import { keepSquare } from "../shared/heatmap_frame.js";
import * as SdpaChannel from "./channel.js";
import { figureModels, followTheme, unpack } from "./embedding.js";
import { pageData } from "./page_data.js";

/** Each page's heatmap figure → its component's pick (the tap callback's hook). */
const PICKS = new Map();

export function render({ model, el }) {
  const key = model.channel_key;
  // Opened at once: the frames that come before the figures are embedded wait for them.
  SdpaChannel.open(key, model.channel_address);
  const box = document.createElement("div");
  box.className = "sdpa-figures";
  const plots = document.createElement("div");
  plots.className = "sdpa-plots";
  const heatmapBox = document.createElement("div");
  heatmapBox.className = "sdpa-heatmap";
  const histogramsBox = document.createElement("div");
  histogramsBox.className = "sdpa-histograms";
  const readouts = document.createElement("div");
  readouts.className = "sdpa-readouts";
  plots.append(heatmapBox, histogramsBox);
  // The paragraph under the plots: the spec's text, escaped in Python (views.intro_html).
  const intro = document.createElement("p");
  intro.className = "sdpa-intro";
  box.append(plots, readouts, intro);
  el.append(box);

  /** The page data's drawing config (app.page.figures.figures_config), once it is here. */
  let config = null;
  /** The first screen's driver, the offline page's too (first_screen_driver.js). */
  let driver = null;
  /** The sequence of the newest frame received. */
  let newest = 0;
  /** What tests and the benchmark read: the models once embedded, the drawing config, the
   * frames drawn, the sequence of the last, the session's channel key, and the callbacks that
   * hear of each frame received by either websocket (SdpaDrawnFigures holds one record per
   * component). */
  const record = {
    models: null,
    config: null,
    frames: 0,
    sequence: 0,
    channel: key,
    listeners: [],
  };
  globalThis.SdpaDrawnFigures ??= [];
  globalThis.SdpaDrawnFigures.push(record);

  /** A frame is drawn once its histograms are (or at once, if it has none and none are
   * still to be drawn): then every frame up to the newest received is on the page. */
  function complete() {
    record.frames += 1;
    record.sequence = newest;
  }

  function draw(frame, atOnce) {
    if (!frame?.parts) {
      return;
    }
    for (const listener of record.listeners) listener(frame);
    newest = Math.max(newest, frame.sequence);
    const { fresh, first } = driver.take(frame, atOnce);
    if (fresh.includes(config.row_part)) {
      driver.figures.drawOutline(frame.state.n, frame.numbers[config.row_part].row);
    }
    // The driver completes a frame with first-screen parts drawn a frame apart; this page
    // counts every other frame once nothing waits.
    if (atOnce || first.size === 0) driver.finish(false);
  }

  const embed = (item, target) => globalThis.Bokeh.embed.embed_item(item, target);
  pageData(model).then(async (data) => {
    config = data.config;
    intro.innerHTML = config.intro_html;
    const { items, models: ids } = data;
    const managers = await Promise.all([
      embed(items.heatmap, heatmapBox),
      embed(items.histograms, histogramsBox),
    ]);
    const models = figureModels(managers, ids);
    followTheme(managers, config.dark_theme, model);
    // The heatmap's frame square and sized to its room (the offline page does the same).
    const view = (one) => globalThis.Bokeh.index.find_one(one);
    const stopSquare = keepSquare(
      models.heatmap,
      () => view(models.heatmap),
      {
        heatmap: heatmapBox,
        histograms: histogramsBox,
        rawHistogram: () => view(models.raw_histogram)?.el,
      },
      config.heatmap.frame,
    );
    const figures = new F.FirstScreenFigures(models, config, readouts);
    driver = new FirstScreenDriver(figures, figures.parts, config.parts.histograms, complete);
    globalThis[config.tap_hook] ??= (figure, y) => PICKS.get(figure)?.(y);
    PICKS.set(models.heatmap, (y) => {
      if (!SdpaChannel.send(key, config.channel_target, { row: y })) model.send_msg({ row: y });
    });
    record.config = config;
    record.models = models;
    draw(unpack(model.frame), true);
    model.on("frame", () => draw(unpack(model.frame), false));
    SdpaChannel.listen(key, config.channel_target, {
      frame: (frame) => draw(unpack(frame), false),
    });
    model.on("remove", () => {
      stopSquare();
      SdpaChannel.forget(key, config.channel_target);
      PICKS.delete(models.heatmap);
      const records = globalThis.SdpaDrawnFigures;
      records.splice(records.indexOf(record), 1);
    });
  });
}
