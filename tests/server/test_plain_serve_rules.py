"""What app/server/plain_serve.py's authorize callback answers, without a server: the generated
reserved-parameter and long-address cases, as plain ``panel serve`` hands them over."""

from __future__ import annotations

from dataclasses import dataclass, field

from guard_cases import long_query_cases, reserved_cases

from app.server.plain_serve import (
    REFUSED_PAGE,
    REFUSED_TEXT,
    guarded_process,
    refusal_for,
    reserved_in_request,
)
from app.simulation.address import OMITTED


@dataclass
class Request:
    """The parts of Bokeh's session request the callback reads."""

    uri: str
    headers: dict[str, str] = field(default_factory=dict)


def test_every_reserved_parameter_is_refused_on_a_page() -> None:
    wrong = []
    for target, _ in reserved_cases():
        path = target.partition("?")[0]
        if path in ("/main", "/main/", "/") and refusal_for(Request(target)) is not False:
            wrong.append(target)
    assert not wrong, wrong[:20]


def test_a_session_header_is_refused_and_a_clean_page_served() -> None:
    assert reserved_in_request(Request("/main", {"bokeh-session-id": "x"}))
    assert refusal_for(Request("/main?d_k=8&bo%E2%84%AAeh-session-id=3")) is True
    assert refusal_for(Request("/main")) is True and refusal_for(None) is True


def test_an_address_too_long_to_keep_is_redirected_without_it() -> None:
    for case in long_query_cases():
        answer = refusal_for(Request(f"/main?{case.query}"))
        assert isinstance(answer, str) and answer.startswith("/main?") and OMITTED in answer
        assert not reserved_in_request(Request(f"/main?{case.query}"))


def test_this_test_process_is_not_guarded() -> None:
    # Only sdpa-sim configures Tornado's HTTPServer as the guarded one.
    assert guarded_process() is False


def test_the_refused_page_says_the_refusal_and_loads_nothing() -> None:
    page = REFUSED_PAGE.read_text(encoding="utf-8")
    assert REFUSED_TEXT in page
    assert "<script" not in page and "http" not in page and "<link" not in page
