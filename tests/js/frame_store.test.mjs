// The page driver's frame store (app/page/web/shared/first_screen_figures.js): frames may
// arrive out of order (two websockets), and the page keeps each part's newest numbers.
import assert from "node:assert/strict";
import { test } from "node:test";
import { FrameStore } from "../../app/page/web/shared/first_screen_figures.js";

const frame = (sequence, parts, numbers = {}) => ({
  sequence,
  parts,
  numbers,
  state: { sequence },
});

test("a part keeps its newest frame's numbers; an older frame changes nothing", () => {
  const store = new FrameStore();
  assert.deepEqual(store.take(frame(2, ["weights"], { weights: "new" })), ["weights"]);
  assert.deepEqual(store.take(frame(1, ["weights", "scores"], { weights: "old", scores: "s" })), [
    "scores",
  ]);
  assert.equal(store.numbers.weights, "new");
  assert.equal(store.numbers.scores, "s");
  assert.deepEqual(store.numberStates.weights, { sequence: 2 });
});

test("a frame of the same sequence is not taken twice", () => {
  const store = new FrameStore();
  store.take(frame(3, ["view"], { view: 1 }));
  assert.deepEqual(store.take(frame(3, ["view"], { view: 2 })), []);
  assert.equal(store.numbers.view, 1);
});
