"""The README's figures for the offline file are what the export writes today."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from procs_support import sdpa_sim_command

README = Path(__file__).resolve().parents[2] / "README.md"

DEFAULT_EXPORT_LINE = re.compile(r"sdpa-sim export sdpa-sim\.html\s+#.*: (\d+\.\d)–(\d+\.\d) MB")
"""The README's line for the default export and the sizes it gives, in MB (10⁶ bytes), from
the Bokeh release with the smallest BokehJS to the one with the largest."""


def test_readme_gives_the_default_files_size(tmp_path: Path) -> None:
    """The README's command as a user runs it, in a process of its own: the file carries the
    data model definitions its process knows, and a test session knows more than the
    command does."""
    match = DEFAULT_EXPORT_LINE.search(README.read_text(encoding="utf-8"))
    assert match, "the README should give the default export's size"
    exported = tmp_path / "sdpa-sim.html"
    subprocess.run(
        [*sdpa_sim_command(), "export", str(exported)], check=True, capture_output=True, timeout=300
    )
    size_mb = exported.stat().st_size / 1e6
    low, high = (float(figure) for figure in match.groups())
    # The same rounding `sdpa-sim export` prints.
    assert low <= round(size_mb, 1) <= high, f"the default file weighs {size_mb:.2f} MB"
