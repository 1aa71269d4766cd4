#!/usr/bin/env bash
# Installs everything the tests need and runs them: the README's test command.
#
#   bash scripts/test.sh                 # whole suite on python3
#   PYTHON=python3.12 bash scripts/test.sh tests/unit   # a chosen interpreter and test path
#
# It makes a virtual environment .venv-<python version> in the repository, installs the
# package with its "test" extra, installs Debian's chromium when /usr/bin/chromium is
# missing (the browser tests drive it through Playwright; `playwright install` is not used)
# and Debian's nodejs when `node` is missing (the offline page's JavaScript kernel is tested
# against the core under Node) and Debian's npm when `npm` is missing, and Debian's nginx
# when it is missing (tests/proxy runs two app processes behind it with deploy/nginx.conf;
# the tests start their own nginx on a loopback port, not the system service), and Debian's
# redis-server (tests/proxy's class mode runs its processes over a Redis of its own on a
# loopback port, not the system service), installs
# the npm packages package-lock.json pins (axe-core, which the accessibility tests inject
# into both pages; esbuild and Biome, which build and check the browser code) with `npm ci`
# when node_modules lacks them or holds other versions, checks the browser code (Biome's lint
# and format, its Node tests in tests/js/, the committed bundles against a fresh build),
# checks lint and format with ruff, and runs pytest with any arguments given.
set -euo pipefail
cd "$(dirname "$0")/.."

python=${PYTHON:-python3}
version=$("$python" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
venv=".venv-$version"

missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium fonts-dejavu-core)
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || missing+=(nginx)
command -v redis-server >/dev/null || missing+=(redis-server)
if [ ${#missing[@]} -gt 0 ]; then
  echo "Installing Debian's ${missing[*]} for the browser, JavaScript kernel and proxy tests"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# node_modules/.package-lock.json is npm's record of what it installed: the same packages
# at the same versions as package-lock.json, or `npm ci` installs them anew.
installed=$(node -e '
  const fs = require("fs");
  const read = (path) => { try { return JSON.parse(fs.readFileSync(path)).packages; } catch { return null; } };
  const wanted = read("package-lock.json"), have = read("node_modules/.package-lock.json") || {};
  // Optional packages are builds for other platforms (of esbuild): npm installs only this one.
  const same = Object.entries(wanted).every(([path, entry]) =>
    path === "" || (have[path] ? have[path].version === entry.version : Boolean(entry.optional)));
  process.stdout.write(same ? "yes" : "no");')
if [ "$installed" != yes ]; then
  echo "Installing the npm packages package-lock.json pins (axe-core, esbuild, Biome) into node_modules"
  npm ci --include=dev --no-audit --no-fund --loglevel=error
fi

# The browser code: linted and formatted (Biome), its own tests (Node's test runner), and the
# committed bundles exactly what its sources build (esbuild).
npx --no-install biome ci --colors=off
node --test --test-reporter=dot tests/js/

[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check -U pip
"$venv/bin/python" -m pip install -q --disable-pip-version-check -e ".[test]"

# The served bundle's stylesheet is the components' CSS, which Python writes.
SDPA_PYTHON="$venv/bin/python" node scripts/build_web.mjs --check

"$venv/bin/ruff" check .
"$venv/bin/ruff" format --check .

exec "$venv/bin/python" -m pytest "$@"
