"""Chapter 2's tables (rlbook.analysis.disagreement.tables)."""
from __future__ import annotations

from rlbook.analysis import disagreement as d
from rlbook.analysis import reward_spec
from rlbook.core import rewards as rw


def test_code_spans_show_text_exactly():
    assert d.code("7\n#") == "`'7\\n#'`"
    assert d.quoted_as_code("answer ' 7' has a space") == "answer `' 7'` has a space"
    assert d.quoted_as_code("text after it: '7\n'") == "text after it: `'7\\n'`"


def test_spec_and_shortcut_tables_come_from_the_reward_spec():
    spec = d.spec_markdown(rw.ExactVerifier())
    assert spec.count("\n") == 1 + len(reward_spec.SPEC)
    assert "exact 1.0" in spec and "**end condition**" in spec
    assert d.shortcut_mismatches() == []
    rows = d.shortcut_rows()
    assert len(rows) == len(reward_spec.SHORTCUT_CASES)
    blind = next(r for r in rows if r["completion"] == "6,12#")
    assert (blind["status"], blind["reward"], blind["process"]) == ("accepted", 1.0, 0.0)
    assert next(r for r in rows if r["intended"] == "unverifiable")["process"] is None
    table = d.shortcut_markdown()
    assert table.count("\n") == 1 + len(reward_spec.SHORTCUT_CASES)
    assert "| empty prompt | (empty) | `'7#'` |" in table


def test_a_broken_verifier_shows_up_as_mismatches():
    mismatches = d.shortcut_mismatches(rw.FailOpenVerifier())
    assert any(r["completion"] == "#" and r["status"] == "accepted" for r in mismatches)
