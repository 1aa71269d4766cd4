// Builds the browser code (app/page/web/, ES modules) into the committed bundles in
// app/page/dist/ with esbuild, as `panel compile` builds a component bundle:
//   served-<hash>.js  the served page's components, an ES module whose default export maps
//                     each component class's name to its module (Panel's `_bundle` format)
//   served-<hash>.css the served components' CSS, which Panel links into each component
//                     beside the bundle (its `_bundle_css`); written in Python beside each
//                     component, printed by `python -m app.served.stylesheet` (SDPA_PYTHON,
//                     default python3, with the app importable)
//                     The hash of both files' content is in their names, so a page may cache
//                     them for good.
//   offline.js        the offline file's page, a classic script the export inlines
//
//   node scripts/build_web.mjs           write app/page/dist/ anew
//   node scripts/build_web.mjs --check   build into a temporary folder and fail when it
//                                        differs from app/page/dist/ (CI: the committed
//                                        bundles are what the sources build)
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { build } from "esbuild";

const ROOT = resolve(import.meta.dirname, "..");
const WEB = join(ROOT, "app/page/web");
const DIST = join(ROOT, "app/page/dist");

const COMMON = {
  bundle: true,
  // Whitespace and syntax only: the names stay, so a page error names the function.
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: "none",
  charset: "utf8",
  logLevel: "warning",
};

// Asked before app/page/dist/ is emptied: the components name the committed bundle.
function servedCss() {
  const python = process.env.SDPA_PYTHON || "python3";
  return execFileSync(python, ["-m", "app.served.stylesheet"], { cwd: ROOT, encoding: "utf8" });
}

async function buildInto(folder, css) {
  mkdirSync(folder, { recursive: true });
  const served = await build({
    ...COMMON,
    entryPoints: [join(WEB, "served/index.js")],
    format: "esm",
    write: false,
    outdir: folder,
  });
  const code = served.outputFiles[0].contents;
  const hash = createHash("sha256").update(code).update(css).digest("hex").slice(0, 10);
  writeFileSync(join(folder, `served-${hash}.js`), code);
  writeFileSync(join(folder, `served-${hash}.css`), css);
  await build({
    ...COMMON,
    entryPoints: { offline: join(WEB, "offline/index.js") },
    format: "iife",
    outdir: folder,
  });
}

const files = (folder) => readdirSync(folder).sort();

if (process.argv.includes("--check")) {
  const fresh = mkdtempSync(join(tmpdir(), "sdpa-web-"));
  await buildInto(fresh, servedCss());
  const built = files(fresh);
  const committed = files(DIST);
  const differ =
    built.join() !== committed.join() ||
    built.some((name) => !readFileSync(join(fresh, name)).equals(readFileSync(join(DIST, name))));
  rmSync(fresh, { recursive: true, force: true });
  if (differ) {
    console.error(
      `app/page/dist/ is not what app/page/web/ builds (built: ${built.join(", ")}; ` +
        `committed: ${committed.join(", ")}): run \`node scripts/build_web.mjs\` and commit it.`,
    );
    process.exit(1);
  }
  console.log(`app/page/dist/ is what app/page/web/ builds: ${built.join(", ")}`);
} else {
  const css = servedCss();
  rmSync(DIST, { recursive: true, force: true });
  await buildInto(DIST, css);
  console.log(`built ${files(DIST).join(", ")} into app/page/dist/`);
}
