"""Chapter 10's facts and claims (rlbook.book.preference, rlbook.book._preference_claims) on made-up outcomes: each
claim holds where the outcome bears it out and fails on the seed that contradicts it, the tables give every seed, and
the answers a policy writes that no pair held are counted as such."""

from __future__ import annotations

from made_up_facts import facts_of, verdicts

from rlbook.book import _preference_claims, preference

SEEDS = (0, 1, 2)


def _policy(end: float, chosen: float, rejected: float, unseen: float, wrong: float) -> dict:
    return {
        "steps": [0, 500],
        "accuracy": [0.33, end],
        "end": end,
        "moved": {"chosen": chosen, "rejected": rejected},
        "ranked": 0.8,
        "unseen": {"share": unseen, "wrong": wrong, "count": 100},
    }


SEED = {
    "pairs": {"count": 13_000, "sampled": 96_000, "silent": 0.26, "heldout": 500, "swapped": 0.2},
    "main": {
        "steps": [0, 100],
        "answers": [0, 96_000],
        "accuracy": [0.33, 0.52],
        "start": 0.33,
        "end": 0.52,
        "moved": {"chosen": 0.5, "rejected": -2.3},
        "unseen": {"share": 0.08, "wrong": 0.8, "count": 78},
    },
    "policies": {
        "dpo": _policy(0.45, 0.35, -3.3, 0.12, 0.99),
        "dpo-noisy": _policy(0.38, 0.25, -0.9, 0.1, 0.99),
        "dpo-small-beta": _policy(0.1, -3.3, -24.0, 0.7, 1.0),
    },
    "models": {"bt": {"ranked": 0.83, "fitted": 0.95}, "bt-noisy": {"ranked": 0.75, "fitted": 0.9}},
}


def _facts(change=None):
    return facts_of(SEED, SEEDS, change)


def _verdicts(facts):
    return verdicts(_preference_claims.CLAIMS, facts)


def test_every_claim_holds_on_outcomes_that_bear_it_out():
    assert all(all(held.values()) for held in _verdicts(_facts()).values())


def test_a_claim_fails_on_the_seed_whose_outcome_contradicts_it():
    def dpo_caught_up(seed):
        seed["policies"]["dpo"]["end"] = 0.6

    def small_beta_kept_right_answers(seed):
        seed["policies"]["dpo-small-beta"]["moved"]["chosen"] = 0.1

    def dpo_raised_the_right_answers_most(seed):
        seed["policies"]["dpo"]["moved"] = {"chosen": 2.0, "rejected": -1.0}

    def main_raised_the_right_answers_most(seed):
        seed["main"]["moved"] = {"chosen": 2.0, "rejected": -1.0}

    def main_wrote_more_unseen_answers(seed):
        seed["main"]["unseen"]["share"] = 0.5

    def bt_ranked_new_pairs_as_well_as_its_own(seed):
        seed["models"]["bt"]["fitted"] = seed["models"]["bt"]["ranked"]

    for change, name in (
        (dpo_caught_up, "main-above-dpo"),
        (bt_ranked_new_pairs_as_well_as_its_own, "bt-fits-more-than-new"),
        (main_raised_the_right_answers_most, "main-pushes-rejected-down-too"),
        (main_wrote_more_unseen_answers, "main-writes-fewer-unseen"),
        (small_beta_kept_right_answers, "small-beta-lowers-chosen"),
        (dpo_raised_the_right_answers_most, "dpo-pushes-rejected-down"),
    ):
        held = _verdicts(_facts(change))
        assert held[name] == {0: True, 1: False, 2: True}


def test_every_claim_is_checked_on_each_seed():
    assert all(held is not None for held in _verdicts(_facts()).values())
    assert {c.kind for c in _preference_claims.CLAIMS} == {"law", "finding"}


def test_the_tables_give_every_seed_and_run():
    tables = preference._tables({s: SEED for s in SEEDS}, SEEDS)
    assert [row["seed"] for row in tables["accuracy"]] == list(SEEDS)
    assert tables["accuracy"][0]["main"] == "0.520" and tables["accuracy"][0]["dpo-small-beta"] == "0.100"
    assert [(row["run"], row["seed"]) for row in tables["moved"]] == [
        (name, s) for name in ("main", "dpo", "dpo-small-beta") for s in SEEDS
    ]
    assert tables["moved"][0]["chosen (right)"] == "+0.50" and tables["moved"][0]["rejected (wrong)"] == "-2.30"
    assert tables["ranked"][0]["bt (reward model)"] == "83.0%"
    assert list(tables["ranked"][0])[2:5] == ["bt (reward model)", "bt, its training pairs", "bt-noisy (reward model)"]
    assert tables["ranked"][0]["bt, its training pairs"] == "95.0%"


def test_the_spread_of_shares_is_said_in_points_and_a_tiny_one_as_less_than_a_point():
    assert preference._spread([0.515, 0.808, 0.589]) == "29 points"
    assert preference._spread([0.5, 0.504, 0.502]) == "less than a point"
