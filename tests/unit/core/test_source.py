"""What the keys hash of a source file (rlbook.core.source): its code, not its comments, docstrings or layout, read again when it changes."""

from __future__ import annotations

from rlbook.core.source import _code_only as code_only
from rlbook.core.source import imported_modules


def test_comments_docstrings_and_layout_leave_the_code_text_unchanged(tmp_path):
    plain, styled, changed = tmp_path / "a.py", tmp_path / "b.py", tmp_path / "c.py"
    plain.write_text('def f(x):\n    """Twice x."""\n    return [x, x]\n')
    styled.write_text("# a comment\ndef f(\n    x,\n):\n    return [\n        x,\n        x,\n    ]  # both\n")
    changed.write_text("def f(x):\n    return [x, x, x]\n")
    assert code_only(plain) == code_only(styled)
    assert code_only(plain) != code_only(changed)


def test_a_file_edited_in_place_is_read_again_not_served_from_the_parse_cache(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("def f(x):\n    return x\n")
    before = code_only(module)
    assert code_only(module) == before  # the second reading comes from the cache
    module.write_text("def f(x):\n    return -x\n")
    assert code_only(module) != before


def test_imports_are_read_again_after_an_edit(tmp_path):
    root = tmp_path / "rlbook"
    (root / "core").mkdir(parents=True)
    for name in ("__init__.py", "core/__init__.py", "core/a.py", "core/b.py"):
        (root / name).write_text("")
    user = root / "core" / "user.py"
    user.write_text("from rlbook.core import a\n")
    assert imported_modules("rlbook.core.user", root) == {"rlbook.core", "rlbook.core.a"}
    user.write_text("from rlbook.core import b\n")
    assert imported_modules("rlbook.core.user", root) == {"rlbook.core", "rlbook.core.b"}
