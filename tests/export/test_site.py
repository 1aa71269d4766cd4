"""``sdpa-sim export --site DIR``: the file as index.html and a course page that frames it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from app.export.site import FILE_SENTENCE, course_page
from app.server.cli import main

READY = "() => window.SdpaExport !== undefined && SdpaExport.snapshot() !== null"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("site") / "course"
    main(["export", "--site", str(folder), "--n-max", "32", "--d-max", "128"])
    return folder


def test_the_site_holds_the_file_and_a_course_page_framing_it(site: Path) -> None:
    assert sorted(path.name for path in site.iterdir()) == ["course-page.html", "index.html"]
    page = (site / "course-page.html").read_text(encoding="utf-8")
    source = re.search(r'<iframe class="simulation"\s+src="([^"]+)"', page)
    assert source is not None
    assert source.group(1).startswith("index.html?embed=true&amp;d_k=128&amp;")
    assert "controls=d_k,scaled" in source.group(1) and "/main?" not in page
    assert FILE_SENTENCE in page
    assert "SdpaExport" in (site / "index.html").read_text(encoding="utf-8")


def test_export_asks_for_one_target(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match=r"either OUT\.html or --site DIR"):
        main(["export"])
    with pytest.raises(SystemExit, match=r"either OUT\.html or --site DIR"):
        main(["export", str(tmp_path / "a.html"), "--site", str(tmp_path / "site")])
    with pytest.raises(SystemExit, match="does not exist"):
        main(["export", "--site", str(tmp_path / "missing" / "site")])


def test_a_changed_course_page_is_refused_rather_than_half_rewritten(tmp_path: Path) -> None:
    template = tmp_path / "course-page.html"
    template.write_text('<iframe src="https://elsewhere.example/x"></iframe>', encoding="utf-8")
    with pytest.raises(ValueError, match="no longer frames the served page"):
        course_page(512, template)


@pytest.mark.browser
def test_the_course_page_shows_the_file_from_disk(chromium: Any, site: Path) -> None:
    context = chromium.new_context(viewport={"width": 1000, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    blocked: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))

    def route(request_route: Any) -> None:
        url = request_route.request.url
        if url.startswith("file://"):
            request_route.continue_()
        else:
            blocked.append(url)
            request_route.abort()

    context.route("**/*", route)
    try:
        page.goto((site / "course-page.html").as_uri())
        # A file:// frame is another origin to its page: read it through Playwright.
        frame = page.locator("iframe.simulation").element_handle().content_frame()
        assert frame is not None
        frame.wait_for_function(READY)
        inner = page.frame_locator("iframe.simulation")
        state = frame.evaluate("SdpaExport.snapshot().state")
        assert (state["d_k"], state["scaled"]) == (128, False)
        # controls=d_k,scaled; the lesson's sections keep their own controls.
        assert inner.locator("#sdpa-first").get_by_role("slider").count() == 1
        assert "one-hot" in inner.locator("#sdpa-readouts").inner_text()
    finally:
        context.close()
    assert errors == [] and blocked == []
