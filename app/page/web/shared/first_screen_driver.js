/*
 * The first screen driven from frames of numbers, the same on both pages: the page's number
 * source (the offline kernel, or the session's frames on the served page) is the only
 * difference. Each frame's parts are kept in the frame store (the newest frame of each part
 * wins) and drawn: the heatmap and readouts at once, the histograms in the frame after,
 * since painting the three figures in one frame takes about twice as long as the heatmap
 * alone. A change that comes before the histograms are drawn is drawn with them.
 */
import { afterFrame, FrameStore } from "./first_screen_figures.js";

export class FirstScreenDriver {
  /**
   * `figures`: the page's FirstScreenFigures; `parts`: the model parts the first screen draws
   * (config.parts' names); `histograms`: the histograms' part; `onComplete()` runs each time
   * the first screen shows every part of the newest frame taken (finish).
   */
  constructor(figures, parts, histograms, onComplete) {
    this.figures = figures;
    this.parts = parts;
    this.histograms = histograms;
    this.onComplete = onComplete;
    /** By part: the numbers last taken and the state they are of. */
    this.store = new FrameStore();
    /** The state the first screen shows (that of the last frame it drew). */
    this.shownState = null;
    /** Whether the histograms wait for the next frame. */
    this.histogramsScheduled = false;
  }

  /**
   * Keep what `frame` brings that is newer than what is kept and draw the first screen's
   * parts among it: all of them now when `atOnce` (a page's first picture), else the
   * histograms a frame later (finish). Returns `{fresh, first}`: the parts taken, and the
   * first screen's among them (a Set).
   */
  take(frame, atOnce = false) {
    const fresh = this.store.take(frame);
    const first = new Set(fresh.filter((part) => this.parts.includes(part)));
    if (first.size > 0) {
      this.shownState = frame.state;
      this.figures.draw(first, frame.state, this.store);
      if (atOnce) {
        if (first.has(this.histograms)) this.figures.drawHistograms(this.store);
      } else {
        this.finish(first.has(this.histograms));
      }
    }
    return { fresh, first };
  }

  /**
   * Complete the first screen: at once, or once the histograms are drawn in the next frame
   * when `histogramsChanged` (or when they are waiting already).
   */
  finish(histogramsChanged) {
    if (this.histogramsScheduled) return;
    if (!histogramsChanged) {
      this.onComplete();
      return;
    }
    this.histogramsScheduled = true;
    afterFrame(() => {
      this.histogramsScheduled = false;
      this.figures.drawHistograms(this.store);
      this.onComplete();
    });
  }
}
