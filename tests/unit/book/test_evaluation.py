"""Chapter 8's outcome-dependent wording (rlbook.book._evaluation_words): every outcome reads right, none degenerately."""

from __future__ import annotations

import pytest

from rlbook.book import _evaluation_words as ev
from rlbook.publish import prose


@pytest.mark.parametrize(
    "by_step, sentence",
    [
        (
            {100: ["training reward", "fixed budget"], 90: ["validation accuracy"]},
            "The training reward and fixed budget rules both pick step 100 while the validation accuracy rule picks step 90",
        ),
        ({100: ["training reward", "validation accuracy", "fixed budget"]}, "All three rules pick step 100"),
        (
            {90: ["training reward"], 80: ["validation accuracy"], 100: ["fixed budget"]},
            (
                "The training reward rule picks step 90, the validation accuracy rule picks step 80 and the fixed budget "
                "rule picks step 100"
            ),
        ),
    ],
)
def test_pick_sentence_names_each_step_once(by_step, sentence):
    assert ev.pick_sentence(by_step) == sentence


def test_habit_sentence_names_the_largest_group_that_kept_its_answer():
    habits = {"1+1": ("1", "1"), "3+7": ("11", "11"), "5+5": ("11", "11"), "2+9": ("12", "14")}
    assert ev.habit_sentence(habits).startswith("To 3+7 and 5+5 the policy's commonest answer is 11, before RL")
    assert ev.habit_sentence({"2+9": ("12", "14")}).startswith("Their commonest answers changed")


def test_picks_finding_says_where_the_validation_rule_differs():
    same = {s: {"selected": 100, "last": 100} for s in (0, 1, 2)}
    assert ev.picks_finding(same, (0, 1, 2)) == (
        "On every seed the validation rule picks the last checkpoint, the fixed budget's pick."
    )
    mixed = {**same, 0: {"selected": 90, "last": 100}}
    assert ev.picks_finding(mixed, (0, 1, 2)) == (
        "The validation rule picks an earlier checkpoint than the fixed "
        "budget on seed 0; on seeds 1 and 2 it picks the last one."
    )


def test_carry_finding_names_each_seed_s_order():
    def seeds(*pairs):
        return {s: {"slices": {"carry_start": c, "plain_start": p}} for s, (c, p) in enumerate(pairs)}

    assert ev.carry_finding(seeds((0.4, 0.5), (0.3, 0.5), (0.2, 0.6)), (0, 1, 2)) == (
        "Carry sums started lower on every seed."
    )
    assert ev.carry_finding(seeds((0.57, 0.48), (0.57, 0.51), (0.43, 0.48)), (0, 1, 2)) == (
        "Carry sums started lower on seed 2, higher on seeds 0 and 1."
    )
    assert ev.carry_finding(seeds((0.5, 0.5), (0.3, 0.5), (0.2, 0.6)), (0, 1, 2)) == (
        "Carry sums started lower on seeds 1 and 2, level on seed 0."
    )


def test_apart_sentence_never_offers_a_zero_spread():
    from rlbook.book.facts import Num

    one = ev.apart_sentence(1, Num(0.0), Num(0.33))
    assert "0.00" not in one and "made no difference" in one and "0.33" in one
    two = ev.apart_sentence(2, Num(0.04), Num(0.30))
    assert two.startswith("Their test accuracies lie within 0.04") and "0.30 wide" in two


@pytest.mark.parametrize(
    "names, sentence",
    [
        (["1+1"], "one sum, 1+1, got no right answer from either policy."),
        (["1+1", "5+5"], "two sums (1+1 and 5+5) got no right answer from either policy."),
        ([], "every held-out sum got a right answer from one policy or the other."),
    ],
)
def test_stuck_sentence_reads_right_for_any_count(names, sentence):
    assert ev.stuck_sentence(names) == sentence


def test_constraint_finding_names_the_seeds_where_the_constraint_is_free():
    def facts(*pairs):
        return {s: {"retained": {"constrained_test": c, "selected_test": u}} for s, (c, u) in enumerate(pairs)}

    assert ev.constraint_finding(facts((0.3, 0.4), (0.3, 0.4), (0.3, 0.4)), (0, 1, 2)) == (
        "On every seed the constraint costs test accuracy."
    )
    assert ev.constraint_finding(facts((0.59, 0.58), (0.3, 0.4), (0.3, 0.4)), (0, 1, 2)) == (
        "On seeds 1 and 2 the constraint costs test accuracy; on seed 0 the earlier checkpoint does as well or better "
        "on the test prompts."
    )
    assert ev.constraint_finding(facts((0.5, 0.4), (0.5, 0.4), (0.5, 0.4)), (0, 1, 2)) == (
        "On every seed the earlier checkpoint does as well or better on the test prompts."
    )


def test_the_excess_of_an_unmatched_row_splits_into_the_settings_and_rl_s_own_gain():
    split = ev.excess([0.21, 0.38, 0.25, 0.27, 0.22])
    assert split["attempts"] + split["attempts_gain"] == pytest.approx(0.38 - 0.21)
    assert split["cooling"] + split["cooling_gain"] == pytest.approx(0.27 - 0.21)
    assert split["words"] == (
        "With best of four, the extra attempts alone add +0.13 (the unmatched row minus the matched one at best of "
        "four), and RL's matched gain is 0.04 larger with four attempts than with one. At temperature 0.5, the cooler "
        "sampling alone adds +0.05, and RL's matched gain is 0.01 larger at 0.5 than at 1."
    )


def test_a_gain_that_shrinks_or_holds_at_a_setting_is_said_so():
    said = ev.excess([0.25, 0.42, 0.22, 0.25, 0.25])["words"]
    assert "0.03 smaller with four attempts than with one" in said and "the same at 0.5 as at 1" in said
    assert "the cooler sampling alone adds less than 0.005 either way" in said
    assert not prose.degenerate(said)
