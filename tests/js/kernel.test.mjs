// The offline kernel's softmax and row metrics (app/page/web/shared/kernel.js) on their own:
// the parity with sdpa_core is tests/export's; these pin the properties the page relies on.
import assert from "node:assert/strict";
import { test } from "node:test";
import { linspace, maxWeight, rowEntropy, softmaxRows } from "../../app/page/web/shared/kernel.js";

test("each softmax row sums to one, in place, whatever its scale", () => {
  const rows = 3;
  const cols = 4;
  const x = new Float64Array([0, 1, 2, 3, 1000, 999, 0, -1000, -5, -5, -5, -5]);
  softmaxRows(x, rows, cols);
  for (let i = 0; i < rows; i++) {
    const row = x.subarray(i * cols, (i + 1) * cols);
    assert.ok(row.every(Number.isFinite));
    assert.ok(Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 1e-12);
  }
  // A uniform row stays uniform; logits 1000 apart collapse to one-hot.
  assert.deepEqual([...x.subarray(8)], [0.25, 0.25, 0.25, 0.25]);
  assert.ok(x[4] > 0.7 && x[7] === 0);
});

test("a fully masked row gives zeros, not NaN", () => {
  const x = new Float64Array([-Infinity, -Infinity, 0, 0]);
  softmaxRows(x, 2, 2);
  assert.deepEqual([...x], [0, 0, 0.5, 0.5]);
});

test("a one-hot row has weight one and no entropy; a uniform row log(n)", () => {
  const w = new Float64Array([1, 0, 0, 0, 0.25, 0.25, 0.25, 0.25]);
  assert.deepEqual([...maxWeight(w, 2, 4)], [1, 0.25]);
  const entropy = rowEntropy(w, 2, 4);
  assert.equal(entropy[0], 0);
  assert.ok(Math.abs(entropy[1] - Math.log(4)) < 1e-12);
});

test("linspace ends exactly at its stop", () => {
  const grid = linspace(0, 0.3, 4);
  assert.equal(grid.length, 4);
  assert.equal(grid[3], 0.3);
  assert.equal(grid[0], 0);
});
