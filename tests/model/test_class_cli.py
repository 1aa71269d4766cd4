"""``sdpa-sim``'s class mode options: the presenter key and link, the class bus, and what
``--num-procs`` does without a bus."""

from __future__ import annotations

import os

import pytest

from app.served.class_bus import BUS_ENV
from app.served.classroom import PRESENT_PARAMETER, PRESENTER_KEY_ENV
from app.server.cli import build_parser, presenter_link, start_class_mode

KEY = "a-good-presenter-key"


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Start without either variable, and leave the process as it was afterwards:
    start_class_mode sets them in os.environ, which later tests' servers inherit."""
    for name in (PRESENTER_KEY_ENV, BUS_ENV):
        # Set first, so that monkeypatch records the original and restores it.
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)


def test_one_process_prints_a_presenter_link_with_a_new_key_each_start() -> None:
    options = build_parser().parse_args([])
    line = start_class_mode(options, workers=1)
    key = os.environ[PRESENTER_KEY_ENV]
    assert line.endswith(f"http://localhost:5006/main?{PRESENT_PARAMETER}={key}")
    start_class_mode(options, workers=1)
    assert os.environ[PRESENTER_KEY_ENV] != key


def test_a_given_key_is_kept_and_checked(capsys: pytest.CaptureFixture[str]) -> None:
    options = build_parser().parse_args(["--presenter-key", KEY, "--address", "0.0.0.0"])
    assert KEY in start_class_mode(options, workers=1)
    assert os.environ[PRESENTER_KEY_ENV] == KEY
    assert presenter_link(options, KEY).startswith("http://localhost:5006/")
    options = build_parser().parse_args(["--address", "::1"])
    assert presenter_link(options, KEY).startswith("http://[::1]:5006/")
    for bad in ("short", "with a space in it", "x" * 200):
        with pytest.raises(SystemExit):
            build_parser().parse_args(["--presenter-key", bad])
        assert "printable ASCII" in capsys.readouterr().err


def test_several_processes_need_a_bus(capsys: pytest.CaptureFixture[str]) -> None:
    options = build_parser().parse_args(["--num-procs", "2"])
    assert "class mode is off" in start_class_mode(options, workers=2)
    assert PRESENTER_KEY_ENV not in os.environ
    url = "redis://127.0.0.1:6379/0"
    options = build_parser().parse_args(["--num-procs", "2", "--class-bus", url])
    assert "presenter link" in start_class_mode(options, workers=2)
    assert os.environ[BUS_ENV] == url and os.environ[PRESENTER_KEY_ENV]
    for bad in ("http://x", "127.0.0.1:6379", "redis:" + "x" * 2001):
        with pytest.raises(SystemExit):
            build_parser().parse_args(["--class-bus", bad])
        assert "redis://" in capsys.readouterr().err
