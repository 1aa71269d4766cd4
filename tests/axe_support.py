"""axe-core in a Playwright page, and the moderate and minor findings docs/accessibility.md
keeps: shared by the served page's and the offline file's accessibility tests.

axe-core comes from npm (package.json; scripts/test.sh runs ``npm ci``), never from the
repository. It is injected into the page as script text, so the offline file, which blocks
every request but file://, takes it too.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]

AXE_PACKAGE = REPO / "node_modules" / "axe-core"
AXE_SCRIPT = AXE_PACKAGE / "axe.min.js"

AXE_MAJOR_MINOR = "4.14"
"""The axe-core line the rules and docs/accessibility.md's list were written against."""

BLOCKING_IMPACTS = frozenset({"critical", "serious"})
"""Impacts no page may have, whatever docs/accessibility.md says."""

ACCESSIBILITY_DOC = REPO / "docs" / "accessibility.md"

KEPT_ROW = re.compile(r"^\|\s*`([a-z0-9-]+)`\s*\|\s*(moderate|minor)\s*\|\s*([^|]+?)\s*\|")
"""A row of the doc's table of kept findings: | `rule` | impact | pages | why it stays |."""

RUN_AXE_JS = """async () => {
  // The whole document, open shadow roots included (axe-core walks them by default).
  const result = await axe.run(document, {resultTypes: ['violations']});
  return {
    version: axe.version,
    violations: result.violations.map((violation) => ({
      id: violation.id,
      impact: violation.impact,
      help: violation.help,
      nodes: violation.nodes.map((node) => ({
        target: node.target.map((part) => (Array.isArray(part) ? part.join(' >>> ') : part)),
        html: node.html.slice(0, 240),
        summary: node.failureSummary,
      })),
    })),
  };
}"""


@dataclass(frozen=True)
class Violation:
    """One axe-core rule a page breaks, with where (the first few nodes)."""

    rule: str
    impact: str
    help: str
    nodes: tuple[dict[str, Any], ...]

    def describe(self) -> str:
        """The rule, its impact and its nodes, for a failure message."""
        where = "\n".join(
            f"    {' '.join(node['target'])}: {node['html']}\n      {node['summary']}"
            for node in self.nodes[:6]
        )
        return f"{self.rule} ({self.impact}, {len(self.nodes)} nodes): {self.help}\n{where}"


def axe_installed() -> bool:
    """Whether ``npm ci`` has put axe-core's browser script into node_modules."""
    return AXE_SCRIPT.is_file()


def axe_version() -> str:
    """The version of the installed axe-core package."""
    return json.loads((AXE_PACKAGE / "package.json").read_text(encoding="utf-8"))["version"]


SETTLE_JS = """async () => {
  const finite = (animation) => animation.effect
    && animation.effect.getComputedTiming().endTime !== Infinity;
  const ended = (animation) => animation.finished.catch(() => null);
  await Promise.all(document.getAnimations().filter(finite).map(ended));
}"""
"""Wait for every finite animation and transition of the page (its shadow roots included) to
end: a Material UI button's ripple, still fading after the click that opened a section,
tints the button's background, and axe-core measured a contrast of 4.25:1 through it on a
busy machine, where the button itself has 4.6:1."""


def run_axe(page: Any) -> list[Violation]:
    """Inject axe-core into ``page`` (a Playwright page) once and run all its rules over
    the document once its animations have ended (:data:`SETTLE_JS`); the violations found."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.add_script_tag(content=AXE_SCRIPT.read_text(encoding="utf-8"))
    page.evaluate(SETTLE_JS)
    result = page.evaluate(RUN_AXE_JS)
    assert result["version"].startswith(AXE_MAJOR_MINOR + "."), result["version"]
    return [
        Violation(v["id"], v["impact"] or "", v["help"], tuple(v["nodes"]))
        for v in result["violations"]
    ]


def kept_findings(page_name: str) -> dict[str, str]:
    """The moderate and minor rules docs/accessibility.md lets ``page_name`` ("served" or
    "offline") break, each with the impact it is listed at."""
    kept: dict[str, str] = {}
    for line in ACCESSIBILITY_DOC.read_text(encoding="utf-8").splitlines():
        if match := KEPT_ROW.match(line):
            rule, impact, pages = match.groups()
            if page_name in {name.strip() for name in pages.split(",")}:
                kept[rule] = impact
    return kept


def unexpected(violations: list[Violation], page_name: str) -> list[Violation]:
    """The violations that fail a test: every critical or serious one, and any moderate or
    minor one docs/accessibility.md does not list for ``page_name`` at that impact."""
    kept = kept_findings(page_name)
    return [
        violation
        for violation in violations
        if violation.impact in BLOCKING_IMPACTS or kept.get(violation.rule) != violation.impact
    ]


def assert_axe_clean(page: Any, page_name: str, state: str) -> list[Violation]:
    """Run axe-core on ``page`` and fail, naming ``state``, on any :func:`unexpected`
    violation; the violations found (the kept ones among them)."""
    violations = run_axe(page)
    failing = unexpected(violations, page_name)
    assert not failing, f"axe-core on the {page_name} page, {state}:\n" + "\n".join(
        violation.describe() for violation in failing
    )
    return violations
