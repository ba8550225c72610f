"""Calling the ``rlbook`` command in-process, for the command-line tests (tests/unit/test_cli.py, tests/runs)."""

from __future__ import annotations

from rlbook import cli


def call(argv: list[str], capsys) -> tuple[int, str, str]:
    """Exit status, stdout and stderr of ``rlbook <argv>`` run in-process."""
    try:
        code = cli.main(argv)
    except SystemExit as stop:  # argparse stops the process itself
        code = stop.code
    out, err = capsys.readouterr()
    return code, out, err


def assert_usage_error(code: int, out: str, err: str, fragment: str) -> None:
    """Status 2, nothing on stdout, one line on stderr naming the problem, no traceback."""
    assert code == 2
    assert out == ""
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert err.startswith("rlbook")
    assert "Traceback" not in err
    assert fragment in err
