"""``sdpa-sim export`` writes the page; ``sdpa-sim`` alone still serves."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.server.cli import build_parser, main, serve_arguments


def test_serving_stays_the_default() -> None:
    options = build_parser().parse_args(["--port", "5007"])
    assert options.command is None
    arguments = serve_arguments(options)
    assert arguments[:2] == ["serve", str(Path(arguments[1]))]
    assert arguments[arguments.index("--port") + 1] == "5007"


def test_export_options_parse() -> None:
    options = build_parser().parse_args(["export", "out.html", "--n-max", "64", "--d-max", "256"])
    assert (options.command, options.out, options.n_max, options.d_max, options.seed) == (
        "export",
        Path("out.html"),
        64,
        256,
        0,
    )


def test_export_writes_the_page(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "lesson.html"
    main(["export", str(target), "--n-max", "16", "--d-max", "32", "--seed", "2"])
    text = target.read_text(encoding="utf-8")
    assert "n ≤ 16 and d_k ≤ 32" in text and "seed 2" in text
    assert f"Wrote {target}" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--n-max", "1"], "n_max must be a whole number from 3"),
        (["--d-max", "4096"], "d_max must be a whole number from 2 to 1024"),
        (["--n-max", "1024", "--d-max", "1024"], "more than the 5 MB limit"),
    ],
)
def test_export_refuses_bad_limits(tmp_path: Path, arguments: list[str], message: str) -> None:
    target = tmp_path / "page.html"
    with pytest.raises(SystemExit, match=message):
        main(["export", str(target), *arguments])
    assert not target.exists()


def test_export_refuses_a_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="does not exist"):
        main(["export", str(tmp_path / "missing" / "page.html")])
