"""Each served document defines the data models its pages draw, and not the ~120 Material
UI components no page draws (app.compat.leave_out_unshown_definitions)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import panel as pn
import pytest
from bokeh.core.has_props import is_DataModel
from bokeh.document import Document
from bokeh.model import Model

from app import compat
from app.served.classroom import PRESENT_PARAMETER, Classroom
from app.served.session import Session
from app.server.panel_tuning import shown_library_components

KEY = "presenter-key-for-tests"


@pytest.fixture
def pruned() -> Iterator[None]:
    """The served process's setting, for this test only."""
    assert compat.leave_out_unshown_definitions(shown_library_components), (
        "Bokeh's Document.to_json no longer encodes the data model classes as one list "
        "(or this Bokeh is not in compat.CHECKED_BOKEH): check compat.cache_model_definitions"
    )
    yield
    compat.send_every_definition()


def names_in(fragment: Any) -> set[str]:
    """The type names of every model object in a document's JSON ``fragment``."""
    found: set[str] = set()
    stack = [fragment]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if item.get("type") == "object" and "name" in item:
                found.add(item["name"])
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def data_model_names() -> set[str]:
    """Every data model class this process knows, by the name a document gives it."""
    return {
        cls.__qualified_model__
        for cls in Model.model_class_reverse_map.values()
        if is_DataModel(cls)
    }


def pages() -> Iterator[tuple[str, pn.viewable.Viewable]]:
    """Every page the app serves, each with what it adds later already on it (outside a
    server the lesson is built at once): full, embedded, a presenter's, a student's."""
    yield "full", Session().page
    yield "embedded", Session(embed=True).page
    room = Classroom(KEY)
    yield "presenter", Session({PRESENT_PARAMETER: KEY}, classroom=room).page
    yield "student", Session({}, classroom=room, embed=True).page


def test_every_data_model_a_page_draws_is_defined_and_the_unused_are_left_out(
    pruned: None,
) -> None:
    data_models = data_model_names()
    for name, page in pages():
        document = Document()
        document.add_root(page.get_root(document))
        content = document.to_json(deferred=False)
        defined = {definition["name"] for definition in content["defs"]}
        drawn = names_in(content["roots"]) & data_models
        assert drawn, name
        assert drawn <= defined, f"{name}: {sorted(drawn - defined)} used but not defined"
        # The Material UI components no page draws are not in it.
        assert "ChatAreaInput1" not in defined and "MultiChoice1" not in defined
        assert len(content["defs"]) < 40, sorted(defined)


def test_without_the_setting_every_definition_is_sent() -> None:
    compat.send_every_definition()
    defined = {d["name"] for d in Document().to_json(deferred=False).get("defs", [])}
    assert data_model_names() <= defined


def test_a_library_component_a_page_shows_keeps_its_definition(pruned: None) -> None:
    import panel_material_ui as pmui

    defined = {d["name"] for d in Document().to_json(deferred=False)["defs"]}
    assert pmui.Page._data_model.__qualified_model__ in defined
    assert pmui.Button._data_model.__qualified_model__ not in defined
    # The app's own components always keep theirs.
    from app.served.components.class_bar import ClassBar

    assert ClassBar._data_model.__qualified_model__ in defined
