"""Chapter 3's outcome-dependent sentences (rlbook.book.gradient): each selector picks the case that happened,
on made-up facts, and the page words every case cleanly."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlbook.book import gradient
from rlbook.book.wording import choice
from rlbook.publish import prose
from rlbook.publish.page_rules import page_wordings

SEEDS = (0, 1, 2)
ROOT = Path(__file__).resolve().parents[3]


def loop(seed: int, gap: float) -> dict:
    return {"seed": seed, "loop": [0.3, 0.4, 0.5 + gap], "pg": [0.3, 0.4, 0.5]}


@pytest.mark.parametrize(("gaps", "where"), [((0.0, 0.0, 0.001), "every seed"), ((0.0, 0.05, 0.0), "seeds 0 and 2")])
def test_same_as_pg_names_the_seeds_where_the_curves_agree(gaps, where):
    made = gradient.same_as_pg([loop(s, g) for s, g in zip(SEEDS, gaps)], SEEDS, 1280)
    assert made == choice("same", gradient.SAME_AS_PG, where=where, within="two", samples=1280)
    assert str(made["values"]["samples"]) == "1,280"


def test_same_as_pg_says_where_the_curves_part_on_every_seed():
    made = gradient.same_as_pg([loop(s, g) for s, g in zip(SEEDS, (0.02, 0.05, 0.03))], SEEDS, 1280)
    assert made == choice("parted", gradient.SAME_AS_PG)


@pytest.mark.parametrize(
    ("at_zero", "expected"),
    [
        ((0.5, 0.2, 0.8), choice("plain", gradient.QUIETER)),
        ((1.5, 1.2, 1.8), choice("baseline", gradient.QUIETER)),
        ((0.5, 1.2, 0.8), choice("split", gradient.QUIETER, quieter="seeds 0 and 2", noisier="seed 1")),
    ],
)
def test_quieter_says_which_estimate_is_quieter(at_zero, expected):
    variance = {s: {"at_zero": v} for s, v in zip(SEEDS, at_zero)}
    assert gradient.quieter(variance, SEEDS) == expected


@pytest.mark.parametrize(
    ("value", "case", "shown"), [(0.0, "none", None), (0.25, "positive", "+0.250"), (-0.125, "negative", "-0.125")]
)
def test_step_credit_never_prints_a_zero_as_a_change(value, case, shown):
    made = gradient.step_credit(value)
    assert made["case"] == case
    assert (str(made["values"]["value"]) if shown else made["values"]) == (shown or {})


@pytest.mark.parametrize(
    ("ends", "kept", "expected"),
    [
        ((0.25, 0.27, 0.28), (-0.2, -0.1, -0.05), choice("fell", gradient.LARGE, fell="0.020–0.050")),
        ((0.25, 0.3, 0.35), (-0.2, 0.0, 0.4), choice("kept", gradient.LARGE, kept="-20%, 0% and 40%")),
    ],
)
def test_large_shift_says_whether_every_seed_fell_below_its_start(ends, kept, expected):
    curves = [
        {"large_shift": [0.3, end], "kept": {"large_shift": share}} for end, share in zip(ends, kept, strict=True)
    ]
    assert gradient.large_shift(curves) == expected


def test_the_page_words_every_case_of_every_choice_and_the_words_read_clean():
    page = page_wordings((ROOT / gradient.PAGE).read_text(encoding="utf-8"))
    for name, cases in (
        ("same_as_pg", gradient.SAME_AS_PG),
        ("quieter", gradient.QUIETER),
        ("first_credit", gradient.STEP_CREDIT),
        ("large_shift", gradient.LARGE),
    ):
        assert set(page[name]) == set(cases), name
        assert not any(prose.degenerate(w) for w in page[name].values()), name


def test_shifted_runs_are_kept_shares_of_their_baselined_twins_gain():
    ends = {"baseline": 0.5, "shift": 0.45, "large_shift": 0.32}  # the last checkpoint of each training
    curves = {name: {"steps": [0, 10], "heldout": [0.3, end]} for name, end in ends.items()}
    made = gradient._shifted(1, curves, [0.3, 0.55], [0.3, 0.5])
    assert made["baseline"] == [0.3, 0.5] and made["main"] == [0.3, 0.55] and made["loop"] == [0.3, 0.5]
    assert made["steps"] == [0, 10]
    assert made["kept"]["shift"] == pytest.approx(0.75) and made["kept"]["large_shift"] == pytest.approx(0.1)
