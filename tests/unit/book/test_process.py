"""Chapter 11's facts and claims (rlbook.book.process, rlbook.book._process_claims) on made-up outcomes: each claim
holds where the outcome bears it out and fails on the seed that contradicts it, and the tables give every seed."""

from __future__ import annotations

import copy

from made_up_facts import facts_of, verdicts

from rlbook.book import _process_claims, process
from rlbook.book.facts import freeze

SEEDS = (0, 1, 2)


def _kind(auc: float) -> dict:
    return {"steps": 500, "right": 0.7, "auc": auc, "accuracy": 0.75}


def _run(accuracy: list[float], reward: list[float], right: float, ended: float) -> dict:
    shown = [{"prompt": "#47+38=", "answer": "85#", "steps": [0.6]}]
    return {
        "steps": [0, 30, 60],
        "accuracy": accuracy,
        "reward": reward,
        "train_accuracy": accuracy,
        "written": {"ended": ended, "right": right, "process": right, "score": 0.6, "worked": 1.0, "shown": shown},
    }


SEED = {
    "training": {"answers": 2000, "steps": 4000, "unended": 3, "right": {"units": 0.76, "tens": 0.9, "number": 0.58}},
    "judged": {
        "train": {"units": _kind(0.74), "tens": _kind(0.6), "number": _kind(0.75)},
        "heldout": {"units": _kind(0.62), "tens": _kind(0.55), "number": _kind(0.62)},
    },
    "best_of_n": {
        "outcome": [0.53, 0.88, 0.98],
        "process-exact": [0.53, 0.88, 0.975],
        "prm-min": [0.53, 0.56, 0.44],
        "prm-product": [0.53, 0.52, 0.37],
    },
    "runs": {
        "worked": _run([0.54, 0.7, 0.87], [0.59, 0.75, 0.89], 0.87, 1.0),
        "process-exact": _run([0.54, 0.72, 0.88], [0.59, 0.76, 0.89], 0.88, 1.0),
        "prm": _run([0.54, 0.01, 0.0], [0.52, 0.8, 0.92], 0.0, 0.2),
    },
}


def _facts(change=None):
    return facts_of(SEED, SEEDS, change)


def _verdicts(facts):
    return verdicts(_process_claims.CLAIMS, facts)


def test_every_claim_holds_on_outcomes_that_bear_it_out():
    assert all(all(held.values()) for held in _verdicts(_facts()).values())


def test_a_claim_fails_on_the_seed_whose_outcome_contradicts_it():
    def scorer_generalised(seed):
        seed["judged"]["heldout"]["units"]["auc"] = 0.8

    def prm_picked_well(seed):
        seed["best_of_n"]["prm-min"][2] = 0.9

    def prm_run_kept_its_sums(seed):
        seed["runs"]["prm"]["accuracy"][-1] = 0.6

    def rule_picked_worse(seed):
        seed["best_of_n"]["process-exact"][2] = 0.9

    def prm_ended(seed):
        seed["runs"]["prm"]["written"]["ended"] = 0.9

    for change, name in (
        (scorer_generalised, "scorer-worse-on-heldout-prompts"),
        (prm_picked_well, "prm-picks-worse-from-more"),
        (prm_run_kept_its_sums, "prm-run-collapses"),
        (rule_picked_worse, "exact-rule-picks-as-outcome"),
        (prm_ended, "prm-stops-ending"),
    ):
        assert _verdicts(_facts(change))[name] == {0: True, 1: False, 2: True}, name


def test_the_tables_give_every_seed_and_judge():
    tables = process._tables({s: freeze(copy.deepcopy(SEED)) for s in SEEDS}, SEEDS)
    assert len(tables["judged"]) == 2 * len(SEEDS)
    assert len(tables["best_of_n"]) == len(SEEDS) * len(process.JUDGES)
    assert [row["run"] for row in tables["runs"]] == [run for run in process.RUNS for _ in SEEDS]
    assert tables["best_of_n"][2] == {
        "seed": 0,
        "judge": "prm-min",
        "n = 1": "0.530",
        "n = 4": "0.560",
        "n = 16": "0.440",
    }


def test_the_hack_is_told_only_in_the_cases_that_happened():
    def facts(ended: dict[int, float]):
        by_seed = {s: copy.deepcopy(SEED) for s in SEEDS}
        for s, share in ended.items():
            by_seed[s]["runs"]["prm"]["written"]["ended"] = share
        return by_seed

    both = process._hack_words(facts({0: 0.1, 1: 0.9, 2: 0.95}), SEEDS)
    assert "never ends" in both and "on seed 0, 3 of the 2,000 did" in both
    assert "On seeds 1 and 2, where at least half of its answers ended, they were wrong" in both
    ending = process._hack_words(facts({0: 0.9, 1: 0.9, 2: 0.9}), SEEDS)
    assert "never ends" not in ending and ending.startswith("They were wrong all the same")
    never = process._hack_words(facts({0: 0.0, 1: 0.1, 2: 0.2}), SEEDS)
    assert "they were" not in never.lower() and "on every seed, 3, 3 and 3 of the 2,000 did" in never


def test_whether_the_answers_still_ended_is_worded_as_it_came_out():
    def words(ended: dict[int, float]) -> str:
        by_seed = {s: copy.deepcopy(SEED) for s in SEEDS}
        for s, share in ended.items():
            by_seed[s]["runs"]["prm"]["written"]["ended"] = share
        return process._ended_words(by_seed, SEEDS)

    assert (
        words({0: 0.99, 1: 0.942, 2: 0.97}) == "At least 94% of its answers still ended with the end mark on every seed"
    )
    assert words({0: 0.1, 1: 0.2, 2: 0.0}).startswith("Fewer than half of its answers still ended with the end mark on")
    assert words({0: 0.1, 1: 0.9, 2: 0.2}) == (
        "Whether its answers still ended with the end mark differed by seed: fewer than half of them did on seeds 0 "
        "and 2, not on seed 1"
    )


def test_the_exact_rule_beside_the_ceiling_is_worded_as_it_came_out():
    def words(exact: float) -> str:
        by_seed = {s: copy.deepcopy(SEED) for s in SEEDS}
        for d in by_seed.values():
            d["best_of_n"]["outcome"][-1] = 0.99
            d["best_of_n"]["process-exact"][-1] = 0.99
        by_seed[1]["best_of_n"]["process-exact"][-1] = exact
        return process._exact_words(by_seed, SEEDS)

    assert (
        words(0.99)
        == "The exact process rule picked as well as the ceiling, 0.990, 0.990 and 0.990 at n = 16 on seeds 0, 1 and 2"
    )
    assert words(0.98).startswith("The exact process rule picked almost as well, 0.990, 0.980 and 0.990 against")


def test_the_shown_answers_with_a_wrong_step_are_counted_in_words():
    seed = copy.deepcopy(SEED)
    seed["runs"]["prm"]["written"]["shown"] = [
        {"prompt": "#47+38=", "answer": "7+8=15,4+3+1=8;85#", "steps": [0.9, 0.9, 0.9]},
        {"prompt": "#47+38=", "answer": "7+8=15,4+3=7;85#", "steps": [0.9, 0.9, 0.9]},
    ]
    assert process._shown_wrong_words(seed) == "one of the two"
