"""The README's figures for the offline file are what the export writes today."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"

DEFAULT_EXPORT_LINE = re.compile(r"sdpa-sim export sdpa-sim\.html\s+#.*: (\d+\.\d)–(\d+\.\d) MB")
"""The README's line for the default export and the sizes it gives, in MB (10⁶ bytes), from
the Bokeh release with the smallest BokehJS to the one with the largest."""


def test_readme_gives_the_default_files_size(exported_file: Path) -> None:
    match = DEFAULT_EXPORT_LINE.search(README.read_text(encoding="utf-8"))
    assert match, "the README should give the default export's size"
    size_mb = exported_file.stat().st_size / 1e6
    low, high = (float(figure) for figure in match.groups())
    # The same rounding `sdpa-sim export` prints.
    assert low <= round(size_mb, 1) <= high, f"the default file weighs {size_mb:.2f} MB"
