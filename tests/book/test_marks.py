"""Every claim is tied to its one sentence in its page, by a mark of its kind (rlbook.book.marks)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlbook import book
from rlbook.book import marks

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("topic", book.topics())
def test_every_claim_is_marked_once_in_its_page_with_the_mark_of_its_kind(topic):
    problems = marks.problems(topic, ROOT)
    assert not problems, "\n".join(problems)


def test_the_lint_names_a_missing_a_doubled_a_wrong_and_an_unknown_mark(tmp_path, monkeypatch):
    from types import SimpleNamespace

    from rlbook.book.claims import Claim, every

    module = SimpleNamespace(
        PAGE="chapters/toy.qmd",
        CLAIMS=(
            Claim("once", "x", lambda F: True, kind="law"),
            Claim("twice", "x", lambda F: True, kind="law"),
            Claim("never", "x", lambda F: True, kind="law"),
            Claim("found", "x", every(lambda s: True), kind="finding"),
        ),
    )
    monkeypatch.setattr(book, "chapter", lambda topic: module)
    (tmp_path / "chapters").mkdir()
    (tmp_path / "chapters" / "toy.qmd").write_text(
        'A. `{python} F.law("once")` B. `{python} F.law("twice")` C. `{python} F.law("twice")`\n'
        'D, `{python} F.law("found")`. E. `{python} F.seeds("ghost")`\n'
    )
    assert marks.problems("toy", tmp_path) == [
        "chapters/toy.qmd: 'found' is a finding: mark it with F.seeds or F.finding, not F.law",
        "chapters/toy.qmd: F.seeds('ghost') names no claim of 'toy'",
        "chapters/toy.qmd: the law 'twice' is marked 2 times; mark the one sentence it protects (rlbook.book.claims)",
        "chapters/toy.qmd: the law 'never' is marked 0 times; mark the one sentence it protects (rlbook.book.claims)",
    ]
