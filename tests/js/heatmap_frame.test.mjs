// The heatmap frame's side (app/page/web/shared/heatmap_frame.js): as wide as the column
// allows, no taller than the screen below where the heatmap starts (the raw histogram under it
// included), never squeezed below the smallest side by the height, never wider than the column.
import assert from "node:assert/strict";
import { test } from "node:test";
import { frameSide } from "../../app/page/web/shared/heatmap_frame.js";

const FRAME = { min_side: 160, screen_fraction: 0.45 };
const room = (overrides) => ({
  width: 574,
  height: 800,
  top: 40,
  below: 0,
  aroundWidth: 138,
  aroundHeight: 55,
  ...overrides,
});

test("a wide window: the column's width sets the side", () => {
  assert.equal(frameSide(room({}), FRAME), 574 - 138 - 2);
});

test("a short window: the height below the heatmap sets it", () => {
  assert.equal(frameSide(room({ height: 500 }), FRAME), 500 - 40 - 55 - 2);
});

test("the raw histogram under the heatmap shares the screen", () => {
  const side = frameSide(room({ width: 400, height: 700, top: 260, below: 183 }), FRAME);
  assert.equal(side, 700 - 260 - 183 - 55 - 2);
  assert.equal(frameSide(room({ width: 400, height: 800, top: 260, below: 183 }), FRAME), 260);
});

test("a heatmap far down a long document counts as starting part-way down its screen", () => {
  assert.equal(frameSide(room({ top: 3000 }), FRAME), Math.floor(800 - 360 - 55 - 2));
});

test("a column narrower than the smallest side gives its own width", () => {
  assert.equal(frameSide(room({ width: 250, height: 300, top: 200 }), FRAME), 250 - 138 - 2);
  assert.equal(frameSide(room({ width: 100 }), FRAME), 1);
});
