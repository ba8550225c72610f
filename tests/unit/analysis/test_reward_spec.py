"""Chapter 2's reward interface table and the cases that test a verifier (rlbook.analysis.reward_spec)."""
from __future__ import annotations

import pytest

from rlbook.analysis.reward_spec import SHORTCUT_CASES, SPEC, spec_table
from rlbook.core.rewards import STATUSES, ExactVerifier
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
