"""The exploration audit's categories, duplicates and novelty (rlbook.analysis.audit.composition)."""

from __future__ import annotations

import pytest
from audit_batches import EIGHT, P1, P2, batch, stored

from rlbook.analysis import audit


def test_categorise_applies_the_rules_in_order():
    labels = audit.categorise(batch([P1, P2], EIGHT))
    assert labels == [
        "accepted",
        "duplicate",
        "incorrect",
        "malformed",
        "incorrect",
        "budget-stopped",
        "duplicate",
        "accepted",
    ]


def test_duplicates_are_counted_within_a_group_only():
    # The same text under two prompts is not a duplicate.
    labels = audit.categorise(batch([P1, P2], ["7#"] * 4 + ["7#"] * 4))
    assert labels.count("duplicate") == 6
    assert labels[0] == "accepted" and labels[4] == "incorrect"


def test_repeated_malformed_answers_stay_malformed():
    labels = audit.categorise(batch([P1], ["#", "#", "#", "7#"]))
    assert labels == ["malformed", "malformed", "malformed", "accepted"]


def test_composition_shares_sum_to_one():
    shares = audit.composition(batch([P1, P2], EIGHT))
    assert shares == {
        "accepted": 2 / 8,
        "incorrect": 2 / 8,
        "duplicate": 2 / 8,
        "malformed": 1 / 8,
        "budget-stopped": 1 / 8,
        "unverifiable": 0.0,
    }
    assert sum(shares.values()) == pytest.approx(1.0)


def test_duplicate_shares_split_by_what_is_repeated():
    assert audit.duplicate_shares(batch([P1, P2], EIGHT)) == {"accepted": 1 / 8, "incorrect": 1 / 8}


def test_novelty_counts_pairs_unseen_in_earlier_batches():
    first = batch([P1], ["7#", "7#", "8#", "9#"])
    second = batch([P1], ["7#", "6#", "6#", "8#"])
    third = batch([P2], ["7#", "7#", "7#", "7#"])  # same text, new prompt: novel
    out = audit.novelty([first, second, third])
    assert [o["novel_share"] for o in out] == [1.0, 0.5, 1.0]
    assert [o["novel_answers"] for o in out] == [3, 1, 1]
    assert [o["seen_answers"] for o in out] == [3, 4, 5]


def test_run_composition_over_steps():
    steps = [stored(1, [P1], ["7#", "8#", "8#", "9#"]), stored(2, [P1], ["7#", "7#", "7#", "6#"])]
    rows = audit.run_composition(steps)
    assert [r["step"] for r in rows] == [1, 2]
    assert rows[1]["accepted"] == 0.25 and rows[1]["duplicate"] == 0.5 and rows[1]["duplicate_accepted"] == 0.5
    assert rows[1]["novel_share"] == 0.25 and rows[1]["novel_answers"] == 1
    assert rows[0]["reward_mean"] == 0.25 and rows[1]["reward_mean"] == 0.75
    assert rows[0]["tokens"] == 8


def test_sharpening_compares_first_and_late_steps():
    row = {"step": 0, "reward_mean": 0.5, "duplicate_accepted": 0.4, "accepted": 0.06, "novel_share": 0.1}
    flow = [
        dict(row, step=1, novel_share=1.0),
        dict(row, step=2, reward_mean=0.3, novel_share=0.2),
        dict(row, step=3),
        dict(row, step=4, reward_mean=0.8, duplicate_accepted=0.6, novel_share=0.0),
        dict(row, step=5, reward_mean=0.8, duplicate_accepted=0.6, novel_share=0.0),
    ]
    out = audit.sharpening(flow, window=2)
    assert out["reward_gain"] == pytest.approx(0.3) and out["repeat_gain"] == pytest.approx(0.2)
    assert out["novel_early"] == pytest.approx(0.15) and out["novel_late"] == 0.0 and out["accepted_late"] == 0.06
    assert (out["dip_step"], out["dip_reward"]) == (2, 0.3)
    assert (out["novel_peak_step"], out["novel_peak"]) == (2, 0.2)
