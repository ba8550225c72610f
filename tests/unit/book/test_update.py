"""rlbook.book.update's wording: each outcome-dependent sentence of chapter 4, in every case, says what
happened and passes the prose lint."""

from __future__ import annotations

import numpy as np
import pytest

from rlbook.analysis.credit import Curves
from rlbook.book import update
from rlbook.publish import prose


def said(sentence: str) -> str:
    assert not prose.degenerate(sentence), prose.degenerate(sentence)
    return sentence


@pytest.mark.parametrize(
    ("lost", "stops", "expected"),
    [
        ([], [], "no run lost a seed"),
        (["ppo-kl"], [], "`ppo-kl` lost a seed, and it reuses each batch."),
        (["seq-mean"], [], "it takes one update per batch"),
        (["ppo-kl", "cispo"], ["`cispo` seed 1 jumped ..."], "all of them reuse each batch"),
        (["seq-mean", "group-std"], [], "none of them reuses a batch"),
        (["ppo-kl", "group-std"], [], "one of the two reuse each batch"),
    ],
)
def test_lost_sentence(lost, stops, expected):
    sentence = said(update._lost_sentence(lost, stops, 60))
    assert expected in sentence
    assert all(stop in sentence for stop in stops)


def test_agreed_sentence_before_and_after_the_first_checkpoint():
    assert "up to step 30" in said(update._agreed_sentence(30, 10, 0.005))
    assert "before its first checkpoint after the start, step 10" in said(update._agreed_sentence(0, 10, 0.005))


@pytest.mark.parametrize(
    ("outside", "how"),
    [
        ([0.08, 0.1, 0.11, 0.12, 0.12, 0.12, 0.1, 0.09], "shrinks again, to 9.0%"),
        ([0.08, 0.1, 0.11, 0.12, 0.12, 0.12, 0.13, 0.15], "grows further, to 15.0%"),
    ],
)
def test_drift_sentence_follows_the_ratios(outside, how):
    assert how in said(update._drift_sentence(outside, 4))


@pytest.mark.parametrize(
    ("capped", "expected"),
    [
        ([0.0] * 8, "never binds on this batch"),
        ([0.0, 0.0, 0.0, 0.0004, 0.0004, 0.0, 0.0, 0.0], "on one of its 2,474 tokens after 4 steps and none after 8"),
        ([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0008], "on none of its 2,474 tokens after 4 steps, and on two after 8"),
        ([0.0, 0.0008, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], "on at most two of its 2,474 tokens"),
    ],
)
def test_cap_sentence_counts_tokens_rather_than_printing_zero_percent(capped, expected):
    sentence = said(update._cap_sentence(capped, 2474, 4.0, 4))
    assert expected in sentence and "0.0%" not in sentence


def _curves(start, final) -> Curves:
    heldout = np.array([[s, f] for s, f in zip(start, final)], dtype=float)
    return Curves("x", "", np.array([0, 60]), heldout, np.zeros((3, 60)), np.zeros((3, 60)))


def test_penalty_sentence_names_the_seeds_that_collapsed_with_their_steps():
    start = [0.33, 0.30, 0.35]
    below = {"main": _curves(start, [0.5] * 3), "ppo-kl": _curves(start, [0.41, 0.02, 0.48])}
    sentence = said(update._penalty_sentence(below, (0, 1, 2)))
    assert "collapsed" in sentence and "on seed 1, from 0.300 at step 0 to 0.020 at step 60." in sentence
    assert "seed 0" not in sentence and "seed 2" not in sentence


def test_a_seed_that_ends_a_little_below_its_start_is_not_a_collapse():
    start = [0.33, 0.30, 0.35]
    slightly = {"main": _curves(start, [0.5] * 3), "ppo-kl": _curves(start, [0.41, 0.294, 0.48])}
    sentence = said(update._penalty_sentence(slightly, (0, 1, 2)))
    assert sentence.startswith("`ppo-kl` collapsed on no seed: its lowest held-out value after the start was 0.294")
    assert "against a start of 0.300–0.350" in sentence


def test_collapses_finds_the_first_checkpoint_below_half_the_start_on_each_seed():
    heldout = np.array([[0.3, 0.4, 0.1, 0.05], [0.3, 0.35, 0.3, np.nan], [0.4, 0.19, 0.3, 0.3]])
    curve = Curves("ppo-kl", "", np.array([0, 10, 20, 30]), heldout, np.zeros((3, 30)), np.zeros((3, 30)))
    assert update.collapses(curve, (0, 1, 2)) == [
        {"seed": 0, "from_step": 10, "from": 0.4, "step": 20, "to": 0.1},
        {"seed": 2, "from_step": 0, "from": 0.4, "step": 10, "to": 0.19},
    ]
    fell = {"ppo-kl": curve, "main": curve}
    sentence = said(update._penalty_sentence(fell, (0, 1, 2)))
    assert "on seed 0, from 0.400 at step 10 to 0.100 at step 20; and on seed 2, from 0.400 at step 0" in sentence


def _evals(values: dict[int, float]) -> list[dict]:
    return [{"step": step, "heldout_expected_reward": value} for step, value in values.items()]


def test_equal_updates_compares_ppo_with_main_after_as_many_optimiser_steps():
    heldout = np.array([[0.3, 0.5, 0.6], [0.3, 0.45, 0.55], [0.3, np.nan, np.nan]])
    ppo = Curves("ppo", "", np.array([0, 10, 20]), heldout, np.zeros((3, 20)), np.zeros((3, 20)))
    mains = [_evals({0: 0.3, 10: 0.35, 20: 0.4, 40: 0.52, 50: 0.6}) for _ in range(3)]
    equal = update.equal_updates(ppo, mains, 4)
    assert equal == {
        "updates": 40,
        "ppo_step": 10,
        "ppo": pytest.approx(0.475),
        "main": pytest.approx(0.52),
        "order": "every seed of `ppo` below every seed of `main`",
    }
    sentence = said(update._updates_sentence(equal, 20, 4, 50))
    assert sentence.startswith("In 20 steps both sampled 20 batches of the same size, but `ppo` took 80 optimiser")
    assert "40 each (`ppo`'s step 10, and `main`'s step 40 of the 50 it runs in all), `ppo` had a mean of 0.475" in (
        sentence
    )


def test_equal_updates_without_a_shared_count_says_so():
    ppo = Curves("ppo", "", np.array([0, 10]), np.array([[0.3, 0.5]]), np.zeros((1, 10)), np.zeros((1, 10)))
    assert update.equal_updates(ppo, [_evals({0: 0.3, 10: 0.4})], 4) is None
    assert "cannot be compared at equal updates" in said(update._updates_sentence(None, 10, 4, 10))
