// The page's number formats (app/page/web/shared/text.js) write what Python's do: exact ties
// go to even, as Python's format does, where JavaScript's toFixed rounds them up.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  fill,
  formatFixed,
  formatGeneral,
  formatThousands,
} from "../../app/page/web/shared/text.js";

test("fixed places round exact ties to even, as Python's format", () => {
  // format(0.125, ".2f") == "0.12", format(0.375, ".2f") == "0.38", format(2.5, ".0f") == "2"
  assert.equal(formatFixed(0.125, 2), "0.12");
  assert.equal(formatFixed(0.375, 2), "0.38");
  assert.equal(formatFixed(2.5, 0), "2");
  assert.equal(formatFixed(-0.0, 1), "-0.0");
  // Not a tie: 1.005 is just below in binary, so Python writes 1.00.
  assert.equal(formatFixed(1.005, 2), "1.00");
});

test("general precision writes what Python's 'g' does", () => {
  assert.equal(formatGeneral(8, 3), "8");
  assert.equal(formatGeneral(0.000123456, 3), "0.000123");
  assert.equal(formatGeneral(1234567, 3), "1.23e+06");
  assert.equal(formatGeneral(Number.POSITIVE_INFINITY, 3), "inf");
});

test("thousands are grouped with commas", () => {
  assert.equal(formatThousands(1024), "1,024");
  assert.equal(formatThousands(999), "999");
});

test("fill writes a template's fields with their formats", () => {
  assert.equal(
    fill("std ≈ {std:.2f} at d_k = {d_k}", { std: 8, d_k: 64 }),
    "std ≈ 8.00 at d_k = 64",
  );
});
