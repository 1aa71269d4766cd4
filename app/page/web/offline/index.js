/*
 * The offline file's bundle (app/export/page.py inlines it): the page (page.js), which starts
 * itself from the file's config, and the modules the export tests call in the page.
 */
import * as kernel from "../shared/kernel.js";
import * as lesson from "../shared/lesson_numbers.js";
import * as query from "../shared/query.js";
import * as text from "../shared/text.js";
import * as assumptions from "./assumption_numbers.js";
import * as kernelSource from "./kernel_source.js";
import "./page.js";

// The file's number rules by name, for tests that compare them with the core in the page.
globalThis.SdpaModules = {
  kernel,
  text,
  query,
  lesson,
  assumptions,
  kernel_source: kernelSource,
};
