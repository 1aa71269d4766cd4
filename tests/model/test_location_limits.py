"""The page's address as the page sends it back (app/served/location.py): no part longer than any
request could carry is kept."""

from __future__ import annotations

import pytest

from app.served.location import MAX_ADDRESS_LENGTH, SafeLocation


@pytest.mark.parametrize("name", ["href", "search", "hash", "pathname"])
def test_an_address_part_no_request_could_carry_is_refused(name: str) -> None:
    location = SafeLocation()
    prefix = {"search": "?", "hash": "#", "pathname": "/"}.get(name, "")
    assert location.accepts_from_page(name, prefix + "a" * (MAX_ADDRESS_LENGTH - 1))
    assert not location.accepts_from_page(name, prefix + "a" * (MAX_ADDRESS_LENGTH + 1))
    assert not location.accepts_from_page(name, prefix + "a" * 19_000_000)
