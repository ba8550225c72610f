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


def test_penalty_sentence_names_the_seeds_that_ended_below_the_base():
    start = [0.33, 0.30, 0.35]
    below = {"main": _curves(start, [0.5] * 3), "ppo-kl": _curves(start, [0.41, 0.02, 0.48])}
    assert "did end seed 1 below where the base started" in said(update._penalty_sentence(below, (0, 1, 2)))
    above = {"main": _curves(start, [0.5] * 3), "ppo-kl": _curves(start, [0.41, 0.4, 0.48])}
    assert "kept every seed above" in said(update._penalty_sentence(above, (0, 1, 2)))
