"""Chapter 9's facts and claims (rlbook.book.recipe, rlbook.book._recipe_claims) on made-up outcomes: each claim
reads what it names, holds where the outcome bears it out and fails where it does not, and the tables give every
run and seed."""

from __future__ import annotations

import copy

from made_up_facts import facts_of, verdicts

from rlbook.book import _recipe_claims, recipe

SEEDS = (0, 1, 2)


def _clipped(end: float, clip: float, high: float, late: float) -> dict:
    return {
        "steps": [0, 60],
        "accuracy": [0.3, end],
        "start": 0.3,
        "end": end,
        "clip": clip,
        "clip_high": high,
        "clip_low": clip - high,
        "entropy_first": 0.4,
        "entropy_late": late,
    }


def _worked(end: float, share: float, cut_late: float = 0.0, cut_early: float = 0.0) -> dict:
    return {
        "steps": [0, 60],
        "accuracy": [0.45, end],
        "share": [0.5, share],
        "length": [10.0, 14.0],
        "start": 0.45,
        "end": end,
        "share_start": 0.5,
        "share_end": share,
        "length_start": 10.0,
        "length_end": 14.0,
        "cut_early": cut_early,
        "cut_late": cut_late,
    }


SEED = {
    "outside": 0.9,
    "clipped": {
        "ppo": _clipped(0.55, 0.03, 0.005, 0.12),
        "clip-higher": _clipped(0.56, 0.025, 0.003, 0.125),
        "gspo": _clipped(0.52, 0.4, 0.3, 0.15),
    },
    "sampled": {
        "batch": 960,
        "silent_main": 0.25,
        "silent_dynamic": 0.0,
        "sampled": 75_000,
        "main_sampled": 57_600,
        "extra": 75_000 / 57_600 - 1,
        "dynamic": {"steps": [0, 60], "accuracy": [0.3, 0.47], "start": 0.3, "end": 0.47, "answers": [0, 75_000]},
        "main": {
            "steps": [0, 60, 80],
            "accuracy": [0.3, 0.45, 0.48],
            "start": 0.3,
            "end": 0.5,
            "answers": [0, 57_600, 76_800],
        },
        "main_at_steps": 0.45,
        "nearest_step": 80,
        "main_at_sampled": 0.48,
    },
    "worked": {
        "worked": _worked(0.88, 0.99),
        "worked-seq-mean": _worked(0.85, 0.99),
        "worked-tight": _worked(0.6, 0.75, cut_late=0.03, cut_early=0.14),
        "worked-tight-filter": _worked(0.65, 0.85, cut_late=0.14, cut_early=0.14),
        "worked-tight-shape": _worked(0.4, 0.01, cut_early=0.14),
    },
}


def _facts(change=None):
    return facts_of(SEED, SEEDS, change)


def _verdicts(facts):
    return verdicts(_recipe_claims.CLAIMS, facts)


def test_every_claim_holds_on_outcomes_that_bear_it_out():
    assert all(all(held.values()) for held in _verdicts(_facts()).values())


def test_a_claim_fails_on_the_seed_whose_outcome_contradicts_it():
    def penalty_kept_working(seed):
        seed["worked"]["worked-tight-shape"]["share_end"] = 0.6

    def no_silent_groups(seed):
        seed["sampled"]["silent_main"] = 0.02

    for change, name in ((penalty_kept_working, "penalty-stops-working"), (no_silent_groups, "main-has-silent-groups")):
        held = _verdicts(_facts(change))
        assert held[name] == {0: True, 1: False, 2: True}
        assert all(all(v.values()) for other, v in held.items() if other != name)


def test_every_claim_is_checked_on_each_seed():
    assert all(held is not None for held in _verdicts(_facts()).values())
    assert {c.kind for c in _recipe_claims.CLAIMS} == {"law", "finding"}


def test_the_tables_give_every_run_and_seed():
    tables = recipe._tables(SEED_BY_SEED, SEEDS)
    assert [(row["run"], row["seed"]) for row in tables["clipped"]] == [
        (name, s) for name in recipe.CLIPPED for s in SEEDS
    ]
    assert [row["seed"] for row in tables["sampled"]] == list(SEEDS)
    assert [(row["run"], row["seed"]) for row in tables["worked"]] == [
        (name, s) for name in recipe.AGGREGATED + recipe.TIGHT for s in SEEDS
    ]
    assert tables["sampled"][0]["main, as many answers"] == "0.480 (step 80)"
    assert tables["clipped"][0]["clipped above"] == "0.5%"


SEED_BY_SEED = {s: SEED for s in SEEDS}


def test_the_gap_between_two_runs_is_worded_as_it_came_out():
    close = recipe._clipped_gap(SEED_BY_SEED, SEEDS, "clip-higher")
    assert close == f"On every seed the two ended within {recipe.CLOSE} of each other."
    by_seed = {s: copy.deepcopy(SEED) for s in SEEDS}
    by_seed[0]["clipped"]["gspo"].update(end=0.2)
    wide = recipe._clipped_gap(by_seed, SEEDS, "gspo")
    assert wide == (
        f"On seed 0 the gap was 0.35; on seeds 1 and 2 the two ended within {recipe.CLOSE} of each other. "
        "`gspo` ended below its own start on seed 0."
    )
