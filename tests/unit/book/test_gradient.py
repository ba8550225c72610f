"""rlbook.book.gradient's wording: each outcome-dependent sentence of chapter 3, in every case, says what
happened and passes the prose lint."""

from __future__ import annotations

import pytest

from rlbook.book import gradient
from rlbook.publish import prose

SEEDS = (0, 1, 2)


def said(sentence: str) -> str:
    assert not prose.degenerate(sentence), prose.degenerate(sentence)
    return sentence


def loop(seed: int, gap: float) -> dict:
    return {"seed": seed, "loop": [0.3, 0.4, 0.5 + gap], "pg": [0.3, 0.4, 0.5]}


@pytest.mark.parametrize(
    ("gaps", "where"),
    [
        ((0.0, 0.0, 0.001), "On every seed"),
        ((0.0, 0.05, 0.0), "On seeds 0 and 2"),
        ((0.02, 0.05, 0.03), "parts from `pg`'s on every seed"),
    ],
)
def test_same_as_pg_names_the_seeds_where_the_curves_agree(gaps, where):
    sentence = said(gradient._same_as_pg_sentence([loop(s, g) for s, g in zip(SEEDS, gaps)], SEEDS, 1280))
    assert where in sentence
    if "On" in where:
        assert "within two of the 1,280 samples" in sentence


@pytest.mark.parametrize(
    ("at_zero", "expected"),
    [
        ((0.5, 0.2, 0.8), "On every seed the plain 0/1 reward gives the quieter"),
        ((1.5, 1.2, 1.8), "On every seed the group baseline gives the quieter"),
        ((0.5, 1.2, 0.8), "quieter estimate on seeds 0 and 2 and the noisier on seed 1"),
    ],
)
def test_quiet_sentence_says_which_estimate_is_quieter(at_zero, expected):
    variance = {s: {"at_zero": v} for s, v in zip(SEEDS, at_zero)}
    assert expected in said(gradient._quiet_sentence(variance, SEEDS))


@pytest.mark.parametrize(
    ("value", "expected"),
    [(0.0, "no credit at all"), (0.25, "a positive advantage, +0.250"), (-0.125, "a negative advantage, -0.125")],
)
def test_step_credit_never_prints_a_zero_as_a_change(value, expected):
    sentence = said(gradient._step_credit(value))
    assert expected in sentence and "+0.000" not in sentence
