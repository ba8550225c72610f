"""rlbook.analysis.passk on cases computed by hand."""

from __future__ import annotations

import numpy as np
import pytest

from rlbook.analysis import passk
from rlbook.core.world import split
from tests.policies import constant_policy


def test_curves_and_gap_by_hand():
    # n = 4 samples per prompt; accepted counts before (0, 2, 4) and after (1, 4, 4).
    # pass@2 of c = 2 is 1 - C(2,2)/C(4,2) = 5/6 and of c = 1 is 1 - C(3,2)/C(4,2) = 1/2.
    cmp = passk.compare_counts([0, 2, 4], [1, 4, 4], n=4, ks=[1, 2, 4])
    assert cmp.before.tolist() == pytest.approx([0.5, 11 / 18, 2 / 3])
    assert cmp.after.tolist() == pytest.approx([0.75, 5 / 6, 1.0])
    assert cmp.gap.tolist() == pytest.approx([0.25, 2 / 9, 1 / 3])


def test_prompt_counts_and_share_of_the_gain_by_hand():
    cmp = passk.compare_counts([0, 2, 4], [1, 4, 4], n=4, ks=[1])
    assert (cmp.never_before, cmp.never_after, cmp.widened, cmp.narrowed) == (1, 0, 1, 0)
    # Per-prompt rise in pass@1: 1/4 (never solved before), 2/4 (solved before), 0: the solved share is 2/3.
    assert cmp.gain_on_solved == pytest.approx(2 / 3)


def test_a_prompt_lost_counts_against_the_solved_share():
    cmp = passk.compare_counts([1, 0], [0, 3], n=4, ks=[1, 4])
    assert (cmp.widened, cmp.narrowed, cmp.never_before, cmp.never_after) == (1, 1, 1, 1)
    assert cmp.gain_on_solved == pytest.approx(-0.25 / 0.5)


def test_no_rise_has_no_share():
    with pytest.raises(ValueError, match="did not rise"):
        _ = passk.compare_counts([2, 2], [2, 1], n=4, ks=[1]).gain_on_solved


def test_counts_must_cover_the_same_prompts():
    with pytest.raises(ValueError, match="same prompts"):
        passk.compare_counts([1, 2], [1], n=4, ks=[1])


def test_both_policies_are_sampled_alike():
    """The same policy under the same seed gives the same counts; one that only ends its turn is never right."""
    guesser, silent = constant_policy({"1": 0.3, "2": 0.3, "#": 0.4}), constant_policy({"#": 1.0})
    tasks = split("heldout")[:6]
    same = passk.pass_at_k_before_after(guesser, guesser, tasks, n=8, ks=[1, 8], seed=3)
    assert np.array_equal(same.counts_before, same.counts_after) and same.gap.tolist() == [0.0, 0.0]
    assert passk.pass_at_k_before_after(silent, guesser, tasks, n=8, ks=[1], seed=3).never_before == len(tasks)
