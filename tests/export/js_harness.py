"""Call the export's JavaScript modules with NumPy arguments, under Node.js or in a page.

Both routes go through ``codec.js``: float arrays travel as base64 of their bytes and
non-finite numbers by name, so a comparison with :mod:`sdpa_core` sees every bit the
JavaScript produced.
"""

from __future__ import annotations

import base64
import json
import math
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from app.page.bundle import WEB

HERE = Path(__file__).resolve().parent

CODEC = HERE / "codec.js"
MODULES = {
    "kernel": "shared/kernel.js",
    "text": "shared/text.js",
    "query": "shared/query.js",
    "lesson": "shared/lesson_numbers.js",
    "assumptions": "offline/assumption_numbers.js",
    "kernel_source": "offline/kernel_source.js",
}
"""Module name in a call → the browser module (app/page/web/) that defines it; the exported
page has them by the same names in ``SdpaModules`` (app/page/web/offline/index.js)."""

Call = tuple[str, str, Sequence[Any]]


def encode(value: Any) -> Any:
    """A JSON-ready copy of ``value``: float arrays as base64 bytes, non-finite floats by name."""
    if isinstance(value, np.ndarray):
        if value.dtype == np.float32:
            return {"$f32": base64.b64encode(value.astype("<f4").tobytes()).decode()}
        return {"$f64": base64.b64encode(value.astype("<f8").tobytes()).decode()}
    if isinstance(value, float | np.floating) and not math.isfinite(value):
        return {"$num": "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")}
    if isinstance(value, np.integer | np.floating | np.bool_):
        return value.item()
    if isinstance(value, list | tuple):
        return [encode(item) for item in value]
    if isinstance(value, dict):
        return {key: encode(item) for key, item in value.items()}
    return value


def decode(value: Any) -> Any:
    """The inverse of :func:`encode` for what the JavaScript sends back."""
    if isinstance(value, list):
        return [decode(item) for item in value]
    if isinstance(value, dict):
        if "$f64" in value:
            return np.frombuffer(base64.b64decode(value["$f64"]), dtype="<f8")
        if "$f32" in value:
            return np.frombuffer(base64.b64decode(value["$f32"]), dtype="<f4")
        if "$num" in value:
            return float(value["$num"])
        if "$error" in value:
            raise AssertionError(f"the JavaScript threw: {value['$error']}")
        return {key: decode(item) for key, item in value.items()}
    return value


def node_available() -> bool:
    """Whether a ``node`` executable is on the PATH."""
    return shutil.which("node") is not None


class Runner(Protocol):
    """Runs a batch of calls and returns their decoded results, in order."""

    def __call__(self, calls: Sequence[Call]) -> list[Any]: ...


def run_node(calls: Sequence[Call]) -> list[Any]:
    """Run ``calls`` (module, function, arguments) in one Node.js process."""
    request = {
        "scripts": {name: str(WEB / script) for name, script in MODULES.items()},
        "calls": [[module, name, encode(list(args))] for module, name, args in calls],
    }
    result = subprocess.run(
        ["node", str(HERE / "runner.js")],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return decode(json.loads(result.stdout))


def page_runner(page: Any) -> Runner:
    """A runner that calls the modules the exported ``page`` (Playwright) has loaded."""
    page.add_script_tag(content=CODEC.read_text(encoding="utf-8"))

    def run(calls: Sequence[Call]) -> list[Any]:
        encoded = [[module, name, encode(list(args))] for module, name, args in calls]
        return decode(page.evaluate("(calls) => SdpaTestCodec.runAll(calls, SdpaModules)", encoded))

    return run
