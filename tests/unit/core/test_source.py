"""What the keys hash of a source file (rlbook.core.source._code_only): its code, not its comments, docstrings or layout."""

from __future__ import annotations

from rlbook.core.source import _code_only as code_only


def test_comments_docstrings_and_layout_leave_the_code_text_unchanged(tmp_path):
    plain, styled, changed = tmp_path / "a.py", tmp_path / "b.py", tmp_path / "c.py"
    plain.write_text('def f(x):\n    """Twice x."""\n    return [x, x]\n')
    styled.write_text("# a comment\ndef f(\n    x,\n):\n    return [\n        x,\n        x,\n    ]  # both\n")
    changed.write_text("def f(x):\n    return [x, x, x]\n")
    assert code_only(plain) == code_only(styled)
    assert code_only(plain) != code_only(changed)
