// Builds the browser code (app/page/web/, ES modules) into the committed bundles in
// app/page/dist/ with esbuild, as `panel compile` builds a component bundle:
//   served-<hash>.js  the served page's components, an ES module whose default export maps
//                     each component class's name to its module (Panel's `_bundle` format);
//                     the hash of its content in its name, so a page may cache it for good
//   offline.js        the offline file's page, a classic script the export inlines
//
//   node scripts/build_web.mjs           write app/page/dist/ anew
//   node scripts/build_web.mjs --check   build into a temporary folder and fail when it
//                                        differs from app/page/dist/ (CI: the committed
//                                        bundles are what the sources build)
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
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

async function buildInto(folder) {
  mkdirSync(folder, { recursive: true });
  await build({
    ...COMMON,
    entryPoints: { served: join(WEB, "served/index.js") },
    format: "esm",
    outdir: folder,
    entryNames: "[name]-[hash]",
  });
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
  await buildInto(fresh);
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
  rmSync(DIST, { recursive: true, force: true });
  await buildInto(DIST);
  console.log(`built ${files(DIST).join(", ")} into app/page/dist/`);
}
