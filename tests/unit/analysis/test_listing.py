"""Source laid out for the page's code column (rlbook.analysis.listing)."""

from __future__ import annotations

import ast

import pytest

from rlbook.analysis import listing
from rlbook.core import rl

LONG = '''def pay(prompt, completion):
    """A long docstring line that runs on and on past the page's eighty columns, as the package's do."""
    total = some_function_with_a_long_name(prompt, completion, first_option=True, second_option=False)  # why
    # a comment line that also runs on and on past the page's eighty columns, as comments in the package do
    return total
'''


def test_every_line_fits_and_the_code_is_the_same():
    shown = listing.listing(LONG)
    assert max(len(line) for line in shown.splitlines()) <= listing.WIDTH
    code = [n for n in ast.walk(ast.parse(shown)) if not isinstance(n, ast.Constant)]
    assert [type(n) for n in code] == [type(n) for n in ast.walk(ast.parse(LONG)) if not isinstance(n, ast.Constant)]
    assert "# why" in shown and shown.count("# ") >= 3


def test_a_function_of_the_package_fits_its_column():
    assert max(len(line) for line in listing.listing(rl.update).splitlines()) <= listing.WIDTH


def test_without_ruff_the_prose_is_still_wrapped(monkeypatch):
    monkeypatch.setattr(listing, "_formatted", lambda source, width: source)
    shown = listing.listing(LONG)
    assert "some_function_with_a_long_name(prompt, completion, first_option=True, second_option=False)" in shown
    assert all(len(line) <= listing.WIDTH for line in shown.splitlines() if "some_function" not in line)


@pytest.mark.parametrize("text", ["x = 1\n", "    y = 2\n"])
def test_a_short_source_comes_back_dedented(text):
    assert listing.listing(text) == text.lstrip()


def test_a_linter_code_is_left_out_and_its_reason_kept():
    shown = listing.listing("try:\n    x = int(s)\nexcept Exception:  # noqa: BLE001 - any failure pays\n    x = 0\n")
    assert "noqa" not in shown and "# any failure pays" in shown
    assert listing.listing("import os  # noqa: F401\n") == "import os\n"
