"""``sdpa-sim export --site DIR``: the single file as ``index.html`` and the example course
page beside it, embedding it in an iframe, ready for any static host."""

from __future__ import annotations

import re
from pathlib import Path

from app.export import export_html

COURSE_PAGE = Path(__file__).resolve().parents[2] / "static" / "course-page.html"
"""The example course page the server offers at ``/assets/course-page.html``."""

SERVER_SOURCE = re.compile(r'src="/main\?([^"]*)"')
"""The served page the example course page frames, and its query."""

SERVER_SENTENCE = "The simulation runs on the course's sdpa-sim server."
FILE_SENTENCE = (
    "The simulation runs in your browser from <code>index.html</code>, next to this page: "
    "no server, and any number of students."
)


def course_page(d_max: int, template: Path = COURSE_PAGE) -> str:
    """The example course page, framing ``index.html`` (with the same scene and controls)
    instead of the server's page; its d_k is the file's largest.

    Raises:
        FileNotFoundError: if the example course page is missing (an installed copy of the
            package without the project's ``static/`` folder).
    """
    text = template.read_text(encoding="utf-8")

    def to_file(match: re.Match[str]) -> str:
        query = re.sub(r"d_k=\d+", f"d_k={d_max}", match.group(1))
        return f'src="index.html?{query}"'

    text, framed = SERVER_SOURCE.subn(to_file, text)
    if framed != 1 or SERVER_SENTENCE not in text:
        raise ValueError(f"{template} no longer frames the served page as expected")
    return text.replace(SERVER_SENTENCE, FILE_SENTENCE)


def export_site(folder: Path, *, n_max: int, d_max: int, seed: int) -> dict[Path, int]:
    """Write ``index.html`` and ``course-page.html`` into ``folder`` (made if missing, its
    parent must exist); return each file's size in bytes.

    Raises:
        ValueError: if a limit or the seed is out of range (the file's own checks).
        FileNotFoundError: if the example course page is missing.
    """
    page = course_page(d_max)
    folder.mkdir(exist_ok=True)
    index = folder / "index.html"
    sizes = {index: export_html(index, n_max=n_max, d_max=d_max, seed=seed)}
    course = folder / "course-page.html"
    course.write_text(page, encoding="utf-8")
    sizes[course] = course.stat().st_size
    return sizes
