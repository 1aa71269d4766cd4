"""What every student's page draws the same, published once per process at an address
named by its content (app/served/page_data.py)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from bokeh.document import Document
from hypothesis import given
from hypothesis import strategies as st

from app.served import page_data
from app.served.page_data import (
    DATA_FOLDER,
    DIGEST_CHARS,
    PageDataStore,
    canonical_ids,
    published,
)
from app.served.session import Session

PAGE = "page"


def test_ids_are_renamed_in_order_of_appearance_references_and_tuples_too() -> None:
    item = {
        "root_id": "p1005",
        "doc": {
            "roots": [{"type": "object", "id": "p1005", "attributes": {"x": {"id": "p1002"}}}],
            "callbacks": [("tap", [{"type": "object", "id": "p1002", "attributes": {}}])],
        },
        "models": {"heatmap": "p1005", "bars": ["p1002", "p1005"]},
        "title": "p1 is not an id here",
    }
    renamed = canonical_ids(item, "s-")
    assert renamed["root_id"] == "s-0" and renamed["models"] == {
        "heatmap": "s-0",
        "bars": ["s-1", "s-0"],
    }
    assert renamed["doc"]["roots"][0]["attributes"]["x"] == {"id": "s-1"}
    assert renamed["doc"]["callbacks"] == [
        ["tap", [{"type": "object", "id": "s-1", "attributes": {}}]]
    ]
    assert renamed["title"] == "p1 is not an id here"


@given(st.lists(st.integers(1000, 9999), min_size=1, max_size=20, unique=True))
def test_the_same_figures_under_other_ids_give_the_same_data(numbers: list[int]) -> None:
    shifted = [number + 5000 for number in numbers]
    make = lambda ids: {"doc": [{"id": f"p{n}", "ref": {"id": f"p{n}"}} for n in ids]}  # noqa: E731
    assert canonical_ids(make(numbers), "a") == canonical_ids(make(shifted), "a")


def test_a_payload_is_kept_once_at_the_digest_of_its_bytes() -> None:
    store = PageDataStore()
    address = store.publish({"b": 1, "a": "ü"})
    folder, name = address.split("/")
    digest = name.removesuffix(".json")
    assert folder == DATA_FOLDER and len(digest) == DIGEST_CHARS
    assert json.loads(store.body(digest)) == {"b": 1, "a": "ü"}
    assert store.publish({"b": 1, "a": "ü"}) == address
    assert store.publish({"a": "ü", "b": 1}) != address, "another encoding, another address"
    assert store.body("0" * DIGEST_CHARS) is None


def test_a_payload_is_built_once_per_process_whatever_the_students() -> None:
    builds = []

    def build() -> dict:
        builds.append(1)
        return {"n": len(builds)}

    first = published(("test-once", 1), build)
    assert published(("test-once", 1), build) is first and builds == [1]


def test_without_the_route_the_data_is_inline_and_with_it_an_address(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(page_data.ENABLED_ENV, raising=False)
    figures = Session().figures
    assert figures.shared == "" and figures.inline is figures.page_data()
    monkeypatch.setenv(page_data.ENABLED_ENV, "1")
    session = Session()
    for component in (session.figures, session.lesson.drawn):
        assert component.inline == {}
        assert component.shared.startswith(f"{DATA_FOLDER}/")
        digest = component.shared.split("/")[1].removesuffix(".json")
        assert json.loads(page_data.STORE.body(digest)) == json.loads(
            json.dumps(component.page_data())
        )


def test_a_page_that_cannot_fetch_the_address_gets_the_data_inline(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(page_data.ENABLED_ENV, "1")
    figures = Session().figures
    figures.take_message({"page_data": "inline"})
    assert figures.inline is figures.page_data() and figures.shared


def test_a_page_cannot_write_the_address_or_the_data(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(page_data.ENABLED_ENV, "1")
    figures = Session().figures
    document = Document()
    model = figures.get_root(document)
    shared = figures.shared
    model.data.set_from_json("shared", "https://elsewhere.example/x.json", setter=PAGE)
    model.data.set_from_json("inline", {"html": "<img src=x onerror=alert(1)>"}, setter=PAGE)
    assert figures.shared == shared and figures.inline == {}


BUILD_ELSEWHERE = """
import json, sys
import panel as pn
# Other models first: Bokeh's ids in this process are not the test's.
pn.Column(*(pn.widgets.IntSlider() for _ in range(7))).get_root()
import app.served.session
from app.served.page_data import _REGISTERED, published
print(json.dumps({repr(key): published(key, build)[0] for key, build in _REGISTERED.items()}))
"""


def test_every_process_publishes_the_same_data_at_the_same_address() -> None:
    """What ``--num-procs`` relies on: a page built by one worker fetches its data from
    any worker."""
    here = {repr(key): published(key, build)[0] for key, build in page_data._REGISTERED.items()}
    assert len(here) >= 2, "the figures and the served lesson"
    result = subprocess.run(
        [sys.executable, "-c", BUILD_ELSEWHERE], capture_output=True, text=True, check=True
    )
    assert json.loads(result.stdout.strip().splitlines()[-1]) == here
