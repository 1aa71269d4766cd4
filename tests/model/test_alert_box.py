"""The page's alert boxes: plain text, a close that hides, hostile messages ignored."""

from __future__ import annotations

import pytest
from hostile_messages import BAD_VALUES

from app.page.views.alert_box import DARK_COLOURS, SEVERITY_COLOURS, AlertBox


def test_each_severity_has_light_and_dark_colours_and_an_icon() -> None:
    alert = AlertBox(severity="warning", title="Some link values were adjusted")
    for severity in SEVERITY_COLOURS:
        light, dark = alert.colours[severity]["light"], alert.colours[severity]["dark"]
        assert len(light) == len(dark) == 4
        assert dark[:3] == list(DARK_COLOURS[severity])
        assert light[3] == dark[3] and light[3].startswith("M")


def test_a_close_press_hides_a_closeable_alert() -> None:
    # Outside a server, Panel runs scheduled callbacks at once.
    alert = AlertBox(title="t", object="words", closeable=True)
    alert.take_message({"closed": True})
    assert not alert.visible


@pytest.mark.parametrize(
    "message",
    [
        None,
        "closed",
        [],
        {},
        {"closed": "true"},
        *({"closed": value} for value in BAD_VALUES if value is not True),
    ],
)
def test_anything_else_leaves_the_alert_shown(message: object) -> None:
    alert = AlertBox(title="t", object="words", closeable=True)
    alert.take_message(message)
    assert alert.visible


def test_an_alert_without_a_close_button_cannot_be_closed() -> None:
    alert = AlertBox(title="t", object="words")
    alert.take_message({"closed": True})
    assert alert.visible
