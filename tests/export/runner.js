// Reads {"scripts": {name: path}, "calls": [[name, function, args], …]} as JSON on stdin and
// writes the encoded results as JSON on stdout (see codec.js). The scripts are the browser
// code's ES modules (app/page/web/), imported as they are.

const fs = require("node:fs");
const { pathToFileURL } = require("node:url");
const codec = require("./codec.js");

async function main() {
  const input = JSON.parse(fs.readFileSync(0, "utf8"));
  const entries = await Promise.all(
    Object.entries(input.scripts).map(async ([name, path]) => [
      name,
      await import(pathToFileURL(path).href),
    ]),
  );
  process.stdout.write(JSON.stringify(codec.runAll(input.calls, Object.fromEntries(entries))));
}

main();
