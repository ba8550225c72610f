"""Chapter 2's reward interface table and the cases that test a verifier (rlbook.analysis.reward_spec)."""

from __future__ import annotations

import pytest

from rlbook.analysis.reward_spec import SHORTCUT_CASES, SPEC, shortcut_mismatches, shortcut_rows, spec_table
from rlbook.core.rewards import STATUSES, ExactVerifier, FailOpenVerifier
from rlbook.core.world import EOT, VOCAB

exact = ExactVerifier()


exact2 = ExactVerifier("2.0")


def test_spec_has_every_field_and_a_rule_per_status():
    for key in ("task_input", "permitted_actions", "end_condition", "reward_source", *STATUSES):
        assert SPEC[key]
    assert f"{len(VOCAB)}-character" in SPEC["permitted_actions"] and "space newline" in SPEC["permitted_actions"]
    assert repr(EOT) in SPEC["end_condition"]


def test_spec_table_names_the_verifier():
    rows = spec_table(exact2)
    assert [k for k, _ in rows] == list(SPEC)
    source = dict(rows)["reward_source"]
    assert "exact 2.0" in source and "lenient" in source


@pytest.mark.parametrize("case", SHORTCUT_CASES, ids=lambda c: c.description)
def test_exact_gives_each_shortcut_case_its_intended_status(case):
    assert exact(case.prompt, case.completion).status == case.intended_status


def test_shortcut_cases_cover_every_status():
    assert {c.intended_status for c in SHORTCUT_CASES} == set(STATUSES)


def test_spec_has_an_unsafe_rule_saying_why_it_cannot_arise():
    assert "cannot arise" in SPEC["unsafe"] and f"{len(VOCAB)} characters" in SPEC["unsafe"]
    keys = list(SPEC)
    assert keys.index("incomplete") < keys.index("unsafe") < keys.index("unverifiable")


def test_shortcut_rows_judge_every_case_live():
    assert shortcut_mismatches() == []
    rows = shortcut_rows()
    assert len(rows) == len(SHORTCUT_CASES)
    blind = next(r for r in rows if r["completion"] == "6,12#")
    assert (blind["status"], blind["reward"], blind["process"]) == ("accepted", 1.0, 0.0)
    assert next(r for r in rows if r["intended"] == "unverifiable")["process"] is None


def test_a_broken_verifier_shows_up_as_mismatches():
    mismatches = shortcut_mismatches(FailOpenVerifier())
    assert any(r["completion"] == "#" and r["status"] == "accepted" for r in mismatches)
