// Reads {"scripts": {name: path}, "calls": [[name, function, args], …]} as JSON on stdin and
// writes the encoded results as JSON on stdout (see codec.js).
"use strict";
const fs = require("fs");
const codec = require("./codec.js");

const input = JSON.parse(fs.readFileSync(0, "utf8"));
const modules = Object.fromEntries(
  Object.entries(input.scripts).map(([name, path]) => [name, require(path)]),
);
process.stdout.write(JSON.stringify(codec.runAll(input.calls, modules)));
