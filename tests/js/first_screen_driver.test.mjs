// The page driver both pages share (app/page/web/shared/first_screen_driver.js): the heatmap
// at once, the histograms a frame later, one completion however many frames came meanwhile.
import assert from "node:assert/strict";
import { test } from "node:test";
import { FirstScreenDriver } from "../../app/page/web/shared/first_screen_driver.js";

// Node has no frames: an animation frame runs on the next turn of the event loop, and a
// message posted from it on the turn after (Node's own MessageChannel would keep the test
// process alive).
globalThis.requestAnimationFrame = (callback) => setTimeout(() => callback(0), 0);
globalThis.MessageChannel = class {
  constructor() {
    this.port1 = { onmessage: null };
    this.port2 = { postMessage: (data) => setTimeout(() => this.port1.onmessage?.({ data }), 0) };
  }
};

const PARTS = ["scores", "weights", "histograms", "view"];

function fakeFigures() {
  return {
    drawn: [],
    histograms: 0,
    draw(parts) {
      this.drawn.push([...parts].sort());
    },
    drawHistograms() {
      this.histograms += 1;
    },
  };
}

const frame = (sequence, parts) => ({ sequence, parts, numbers: {}, state: { sequence } });
const nextPaint = () => new Promise((resolve) => setTimeout(() => setTimeout(resolve, 0), 5));

test("a frame without histograms completes at once", () => {
  const figures = fakeFigures();
  let completed = 0;
  const driver = new FirstScreenDriver(figures, PARTS, "histograms", () => completed++);
  const { fresh, first } = driver.take(frame(1, ["weights", "row"]));
  assert.deepEqual(fresh, ["weights", "row"]);
  assert.deepEqual([...first], ["weights"]);
  assert.deepEqual(figures.drawn, [["weights"]]);
  assert.equal(completed, 1);
  assert.deepEqual(driver.shownState, { sequence: 1 });
});

test("histograms are drawn a frame later, once for every frame that came meanwhile", async () => {
  const figures = fakeFigures();
  let completed = 0;
  const driver = new FirstScreenDriver(figures, PARTS, "histograms", () => completed++);
  driver.take(frame(1, ["scores", "weights", "histograms"]));
  driver.take(frame(2, ["weights"]));
  driver.finish(false);
  assert.equal(figures.histograms, 0);
  assert.equal(completed, 0);
  assert.equal(driver.histogramsScheduled, true);
  await nextPaint();
  assert.equal(figures.histograms, 1);
  assert.equal(completed, 1);
  assert.equal(driver.histogramsScheduled, false);
});

test("a page's first picture draws everything in one go, completing nothing by itself", () => {
  const figures = fakeFigures();
  let completed = 0;
  const driver = new FirstScreenDriver(figures, PARTS, "histograms", () => completed++);
  driver.take(frame(1, PARTS), true);
  assert.equal(figures.histograms, 1);
  assert.equal(completed, 0);
  assert.equal(driver.histogramsScheduled, false);
});

test("an older frame draws nothing", () => {
  const figures = fakeFigures();
  const driver = new FirstScreenDriver(figures, PARTS, "histograms", () => {});
  driver.take(frame(3, ["weights"]));
  const { fresh } = driver.take(frame(2, ["weights"]));
  assert.deepEqual(fresh, []);
  assert.equal(figures.drawn.length, 1);
});
