"""Chapter 8's choices (rlbook.book._evaluation_words): each selector picks the case that happened, with the values
its page words print, and the page words every case without a degenerate quantity."""

from __future__ import annotations

import itertools
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from rlbook.analysis import selection
from rlbook.analysis.selection import RULES
from rlbook.book import _evaluation_words as ev
from rlbook.book import evaluation, wording
from rlbook.book.facts import Num
from rlbook.book.wording import choice
from rlbook.publish import prose
from rlbook.publish.page_rules import page_wordings
from rlbook.runs import spec

SEEDS = (0, 1, 2)
ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize(
    "by_step, made",
    [
        (
            {100: ["training reward", "fixed budget"], 90: ["validation accuracy"]},
            choice(
                "pair_first",
                ev.PICKS,
                pair="training reward and fixed budget",
                pair_step=100,
                rule="validation accuracy",
                rule_step=90,
            ),
        ),
        (
            {90: ["training reward"], 100: ["validation accuracy", "fixed budget"]},
            choice(
                "pair_last",
                ev.PICKS,
                pair="validation accuracy and fixed budget",
                pair_step=100,
                rule="training reward",
                rule_step=90,
            ),
        ),
        (
            {100: ["training reward", "validation accuracy", "fixed budget"]},
            choice("all", ev.PICKS, count="three", step=100),
        ),
        (
            {90: ["training reward"], 80: ["validation accuracy"], 100: ["fixed budget"]},
            choice(
                "each",
                ev.PICKS,
                first="training reward",
                first_step=90,
                second="validation accuracy",
                second_step=80,
                third="fixed budget",
                third_step=100,
            ),
        ),
    ],
)
def test_picks_names_each_step_once(by_step, made):
    assert ev.picks(by_step) == made


def test_picks_refuses_rules_its_wording_does_not_cover():
    with pytest.raises(ValueError, match="each once"):
        ev.picks({100: ["training reward", "fixed budget"]})


def test_habit_names_the_largest_group_that_kept_its_answer():
    habits = {"1+1": ("1", "1"), "3+7": ("11", "11"), "5+5": ("11", "11"), "2+9": ("12", "14")}
    assert ev.habit(habits) == choice("kept", ev.HABIT, sums="3+7 and 5+5", answer="11")
    assert ev.habit({"2+9": ("12", "14")}) == choice("changed", ev.HABIT)
    assert ev.habit({}) == choice("none", ev.HABIT)


def test_picks_finding_says_where_the_validation_rule_differs():
    same = {s: {"selected": 100, "last": 100} for s in SEEDS}
    assert ev.picks_finding(same, SEEDS) == choice("last", ev.PICKS_FINDING, last="every seed")
    mixed = {**same, 0: {"selected": 90, "last": 100}}
    assert ev.picks_finding(mixed, SEEDS) == choice(
        "some_earlier", ev.PICKS_FINDING, earlier="seed 0", last="seeds 1 and 2"
    )
    earlier = {s: {"selected": 90, "last": 100} for s in SEEDS}
    assert ev.picks_finding(earlier, SEEDS) == choice("earlier", ev.PICKS_FINDING, earlier="every seed")


def test_carry_finding_names_each_seed_s_order():
    def seeds(*pairs):
        return {s: {"slices": {"carry_start": c, "plain_start": p}} for s, (c, p) in enumerate(pairs)}

    assert ev.carry_finding(seeds((0.4, 0.5), (0.3, 0.5), (0.2, 0.6)), SEEDS) == choice(
        "lower", ev.CARRY, lower="every seed"
    )
    assert ev.carry_finding(seeds((0.57, 0.48), (0.57, 0.51), (0.43, 0.48)), SEEDS) == choice(
        "lower_higher", ev.CARRY, lower="seed 2", higher="seeds 0 and 1"
    )
    assert ev.carry_finding(seeds((0.5, 0.5), (0.3, 0.5), (0.2, 0.6)), SEEDS) == choice(
        "lower_level", ev.CARRY, lower="seeds 1 and 2", level="seed 0"
    )
    assert ev.carry_finding(seeds((0.5, 0.5), (0.6, 0.5), (0.2, 0.6)), SEEDS) == choice(
        "lower_higher_level", ev.CARRY, lower="seed 2", higher="seed 1", level="seed 0"
    )


def test_told_apart_never_offers_a_zero_spread():
    one = ev.told_apart(1, Num(0.0), Num(0.33))
    assert one == choice("one_pick", ev.TOLD_APART, narrowest=0.33) and "spread" not in one["values"]
    assert ev.told_apart(2, Num(0.04), Num(0.30)) == choice("within", ev.TOLD_APART, spread=0.04, narrowest=0.30)


def test_the_validation_pick_of_step_0_is_the_policy_rl_started_from():
    assert ev.validation_pick(0) == choice("start", ev.VALIDATION_PICK, step=0)
    assert ev.validation_pick(40) == choice("later", ev.VALIDATION_PICK, step=40)


@pytest.mark.parametrize(
    "names, made",
    [
        (["1+1"], choice("one", ev.NEVER_RIGHT, sum="1+1")),
        (["1+1", "5+5"], choice("several", ev.NEVER_RIGHT, count="two", sums="1+1 and 5+5")),
        ([], choice("none", ev.NEVER_RIGHT)),
    ],
)
def test_never_right_reads_right_for_any_count(names, made):
    assert ev.never_right(names) == made


def test_constraint_finding_names_the_seeds_where_the_constraint_is_free():
    def facts(*pairs):
        return {s: {"retained": {"constrained_test": c, "selected_test": u}} for s, (c, u) in enumerate(pairs)}

    assert ev.constraint_finding(facts((0.3, 0.4), (0.3, 0.4), (0.3, 0.4)), SEEDS) == choice(
        "costs", ev.CONSTRAINT, cost="every seed"
    )
    assert ev.constraint_finding(facts((0.59, 0.58), (0.3, 0.4), (0.3, 0.4)), SEEDS) == choice(
        "some_cost", ev.CONSTRAINT, cost="seeds 1 and 2", free="seed 0"
    )
    assert ev.constraint_finding(facts((0.5, 0.4), (0.5, 0.4), (0.5, 0.4)), SEEDS) == choice(
        "free", ev.CONSTRAINT, free="every seed"
    )


def test_the_excess_of_an_unmatched_row_splits_into_the_settings_and_rl_s_own_gain():
    split = ev.excess([0.21, 0.38, 0.25, 0.27, 0.22], 0.5, 1.0)
    assert split["attempts"] + split["attempts_gain"] == pytest.approx(0.38 - 0.21)
    assert split["cooling"] + split["cooling_gain"] == pytest.approx(0.27 - 0.21)
    assert split["attempts_alone"]["case"] == "adds" and str(split["attempts_alone"]["values"]["change"]) == "+0.13"
    assert split["attempts_matched"]["case"] == "larger" and str(split["attempts_matched"]["values"]["by"]) == "0.04"
    assert split["cooling_alone"]["case"] == "adds" and str(split["cooling_alone"]["values"]["change"]) == "+0.05"
    assert split["cooling_matched"]["case"] == "larger" and str(split["cooling_matched"]["values"]["by"]) == "0.01"
    assert {k: split["cooling_matched"]["values"][k] for k in ("low", "usual")} == {"low": "0.5", "usual": "1"}


def test_the_comparisons_sample_at_the_two_temperatures_the_page_prints(monkeypatch):
    sampled_at = []

    def fake_evaluate(policy, tasks, n, temperature, budget, seed):
        sampled_at.append(temperature)
        rewards = np.array([[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 1.0, 0.0]])
        return SimpleNamespace(per_prompt=rewards.mean(axis=1), rewards=rewards)

    monkeypatch.setattr(selection, "evaluate", fake_evaluate)
    selection.comparison_rows(None, None, [], low_temperature=evaluation.LOW_TEMPERATURE)
    usual = spec("main").rl.temperature
    assert set(sampled_at) == {evaluation.LOW_TEMPERATURE, usual}
    cooling = ev.excess([0.2] * 5, evaluation.LOW_TEMPERATURE, usual)["cooling_matched"]["values"]
    assert (cooling["low"], cooling["usual"]) == (f"{evaluation.LOW_TEMPERATURE:g}", f"{usual:g}")


def test_a_gain_that_shrinks_or_holds_at_a_setting_is_said_so():
    split = ev.excess([0.25, 0.42, 0.22, 0.25, 0.25], 0.5, 1.0)
    assert split["attempts_matched"]["case"] == "smaller" and str(split["attempts_matched"]["values"]["by"]) == "0.03"
    assert split["cooling_matched"] == choice("same", ev.MATCHED, low="0.5", usual="1")
    assert split["cooling_alone"] == choice("negligible", ev.ALONE, below=ev.NEGLIGIBLE)
    assert str(split["cooling_alone"]["values"]["below"]) == "0.005"


def test_the_page_words_every_case_of_every_choice_and_the_words_read_clean():
    page = page_wordings((ROOT / evaluation.PAGE).read_text(encoding="utf-8"))
    for name, cases in (
        ("which", ev.PICKS),
        ("told_apart", ev.TOLD_APART),
        ("picks_finding", ev.PICKS_FINDING),
        ("validation_checkpoint", ev.VALIDATION_PICK),
        ("attempts_alone", ev.ALONE),
        ("attempts_matched", ev.MATCHED),
        ("cooling_alone", ev.ALONE),
        ("cooling_matched", ev.MATCHED),
        ("carry_finding", ev.CARRY),
        ("never_right", ev.NEVER_RIGHT),
        ("habit", ev.HABIT),
        ("constraint_finding", ev.CONSTRAINT),
    ):
        assert set(page[name]) == set(cases), name
        assert not any(prose.degenerate(w) for w in page[name].values()), name


def _outcomes() -> dict[str, list[dict]]:
    """Made-up outcomes of every selector, covering every case each declares."""
    sides = {"lower": (0.3, 0.5), "higher": (0.5, 0.3), "level": (0.4, 0.4)}
    carry = [
        ev.carry_finding({s: {"slices": {"carry_start": c, "plain_start": p}} for s, (c, p) in enumerate(pairs)}, SEEDS)
        for pairs in itertools.product(sides.values(), repeat=len(SEEDS))
    ]
    picks = [{s: {"selected": step, "last": 100} for s, step in enumerate(steps)} for steps in ((100,) * 3, (90,) * 3)]
    tests = ((0.3, 0.3, 0.3), (0.5, 0.5, 0.5), (0.3, 0.5, 0.3))
    kept = [{s: {"retained": {"constrained_test": c, "selected_test": 0.4}} for s, c in enumerate(t)} for t in tests]
    return {
        "which": [
            ev.picks(by_step)
            for by_step in (
                {100: list(RULES)},
                {100: [RULES[0], RULES[2]], 90: [RULES[1]]},
                {90: [RULES[0]], 100: [RULES[1], RULES[2]]},
                {90: [RULES[0]], 80: [RULES[1]], 100: [RULES[2]]},
            )
        ],
        "told_apart": [ev.told_apart(1, Num(0.0), Num(0.33)), ev.told_apart(2, Num(0.04), Num(0.30))],
        "picks_finding": [ev.picks_finding(p, SEEDS) for p in picks]
        + [ev.picks_finding({**picks[0], 0: {"selected": 90, "last": 100}}, SEEDS)],
        "validation_checkpoint": [ev.validation_pick(0), ev.validation_pick(40)],
        "attempts_alone": [ev.alone(0.13), ev.alone(0.001)],
        "attempts_matched": [ev.matched(0.04), ev.matched(-0.03), ev.matched(0.0)],
        "cooling_alone": [ev.alone(-0.05), ev.alone(0.0)],
        "cooling_matched": [ev.matched(c, low="0.5", usual="1") for c in (0.01, -0.02, 0.004)],
        "carry_finding": carry,
        "never_right": [ev.never_right(names) for names in ([], ["1+1"], ["1+1", "5+5"])],
        "habit": [ev.habit({"3+7": ("11", "11")}), ev.habit({"2+9": ("12", "14")}), ev.habit({})],
        "constraint_finding": [ev.constraint_finding(k, SEEDS) for k in kept],
    }


def test_every_case_the_selectors_make_is_worded_by_the_page_with_the_values_it_prints():
    page = page_wordings((ROOT / evaluation.PAGE).read_text(encoding="utf-8"))
    for name, made in _outcomes().items():
        assert {m["case"] for m in made} == set(page[name]), name
        for m in made:
            said = wording.say(name, m, page[name])
            assert not prose.degenerate(said), (name, said)
