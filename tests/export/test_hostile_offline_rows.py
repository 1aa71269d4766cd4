"""Links whose row is past their n, in Chromium on the offline page (file://): the page
shows the last row, says so in its notice and writes that row in its URL, as the served
page does (tests/browser/test_hostile_browser.py)."""

from __future__ import annotations

from urllib.parse import parse_qsl

import pytest
from hostile_queries import ROW_LINKS

from .test_hostile_offline import NOTICE_TEXT_JS, written_search

pytestmark = pytest.mark.browser


@pytest.mark.parametrize(("query", "row"), list(ROW_LINKS.values()), ids=list(ROW_LINKS))
def test_a_row_past_n_is_the_last_row_offline(open_export, query: str, row: int) -> None:
    opened = open_export(f"?{query}")
    state = opened.snapshot()["state"]
    assert state["row"] == row
    assert opened.model("notice", "m.visible") is True
    notice = opened.page.evaluate(NOTICE_TEXT_JS, "notice")
    assert f"row = {query.split('row=')[1].split('&')[0]} is past the last of n = " in notice
    assert f"using {row}." in notice
    written = dict(parse_qsl(written_search(opened)[1:]))
    assert written["row"] == str(row)
