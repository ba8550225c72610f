"""Chapter 7's outcome-dependent choices (rlbook.book._working_words) and shown answers (rlbook.book.working): each
selector picks what happened, and nothing else, and the page words every case."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlbook.book import _working_words as words
from rlbook.book import working
from rlbook.book.wording import choice
from rlbook.publish import prose
from rlbook.publish.page_rules import page_wordings

SEEDS = (0, 1, 2)
ROOT = Path(__file__).resolve().parents[3]


def test_rediscovery_says_where_the_seeds_part_ways():
    shares = {0: (0.005, 0.0), 1: (0.04, 0.88), 2: (0.02, 0.15)}
    assert words.rediscovery(shares, SEEDS) == choice(
        "majority_minority",
        words.REDISCOVERY,
        majority="seed 1",
        majority_moves="4.0% to 88%",
        minority="seeds 0 and 2",
        minority_moves="seed 0: 0.5% to 0.0%; seed 2: 2.0% to 15%",
    )


def test_rediscovery_when_every_seed_or_none_agrees_says_it_once_without_parting():
    every = words.rediscovery({s: (0.05, 0.9) for s in SEEDS}, SEEDS)
    assert every["case"] == "majority" and every["values"]["majority"] == "every seed"
    none = words.rediscovery({s: (0.05, 0.1) for s in SEEDS}, SEEDS)
    assert none["case"] == "minority" and set(none["values"]) == {"minority", "minority_moves"}


def test_rediscovery_on_one_seed_names_it_and_its_move():
    assert words.rediscovery({1: (0.04, 0.6)}, (1,)) == choice(
        "majority", words.REDISCOVERY, majority="seed 1", majority_moves="4.0% to 60%"
    )


def test_percent_keeps_a_small_share_readable():
    assert (words.percent(0.005), words.percent(0.04), words.percent(0.876)) == ("0.5%", "4.0%", "88%")


def test_the_takeover_line_is_inclusive():
    assert words.rediscovery({0: (0.1, 0.5), 1: (0.1, 0.49)}, (0, 1))["values"]["majority"] == "seed 0"


def test_ahead_gives_the_range_of_the_lead_or_says_the_seeds_disagree():
    assert words.ahead([0.9, 0.95, 0.92], [0.6, 0.5, 0.7]) == choice("above", words.AHEAD, lead="0.22–0.45")
    # The lead is taken between the accuracies as the tables print them: 0.86 - 0.46, not 0.864 - 0.455.
    assert words.ahead([0.864], [0.455]) == choice("above_its_seed", words.AHEAD, lead="0.40")
    assert words.ahead([0.5], [0.7]) == choice("below_its_seed", words.AHEAD, lead="0.20")
    mixed = words.ahead([0.9, 0.5], [0.6, 0.7])
    assert mixed["case"] == "mixed" and (str(mixed["values"]["low"]), str(mixed["values"]["high"])) == (
        "-0.20",
        "+0.30",
    )


def test_change_by_seed_groups_the_seeds_by_direction():
    assert words.change_by_seed([0.2, 0.2, 0.2], [0.15, 0.11, 0.21], SEEDS) == choice(
        "fell_level", words.CHANGE, fell="seeds 0 and 1", level="seed 2"
    )
    assert words.change_by_seed([0.2, 0.2, 0.2], [0.3, 0.4, 0.5], SEEDS) == choice(
        "rose", words.CHANGE, rose="every seed"
    )
    assert words.change_by_seed([0.5], [0.2], (0,)) == choice("fell", words.CHANGE, fell="seed 0")
    assert words.change_by_seed([0.2, 0.2, 0.2], [0.3, 0.1, 0.2], SEEDS) == choice(
        "rose_fell_level", words.CHANGE, rose="seed 0", fell="seed 1", level="seed 2"
    )


def test_accuracy_change_says_it_rose_only_where_it_rose_on_every_seed():
    assert words.accuracy_change([0.35, 0.38, 0.38], [0.6, 0.57, 0.64], SEEDS) == choice(
        "rose", words.CHANGE, rose="every seed", seed=0, before=0.35, after=0.6
    )
    assert words.accuracy_change([0.15, 0.12, 0.13], [0.08, 0.09, 0.13], SEEDS) == choice(
        "fell_level", words.CHANGE, fell="seeds 0 and 1", level="seed 2", seed=0, before=0.15, after=0.08
    )


def test_accuracy_change_gives_the_values_of_the_followed_seed_as_the_table_prints_them():
    made = words.accuracy_change([0.3, 0.5364], [0.6, 0.8836], (2, 0))
    assert made["values"]["seed"] == 0
    assert (str(made["values"]["before"]), str(made["values"]["after"])) == ("0.54", "0.88")
    # An audited triple without the shown seed follows its first seed.
    assert words.accuracy_change([0.3, 0.5], [0.6, 0.8], (1, 2))["values"]["seed"] == 1


def test_part_says_where_a_part_added_and_where_it_took_away():
    assert words.part([0.11, 0.12, 0.10], SEEDS) == choice(
        "added", words.PART, added="every seed", span="+0.10 to +0.12"
    )
    assert words.part([-0.1, -0.07, 0.02], SEEDS) == choice(
        "added_took", words.PART, added="seed 2", took="seeds 0 and 1", span="-0.10 to +0.02"
    )
    assert words.part([0.0, -0.01], (0, 1)) == choice(
        "took_nothing", words.PART, took="seed 1", nothing="seed 0", span="-0.01 to 0"
    )


def test_part_never_prints_a_change_as_zero():
    assert words.part([0.004, 0.11], (0, 1))["values"]["span"] == "+0.004 to +0.11"


def test_against_worked_names_the_seeds_of_each_side():
    assert words.against_worked([0.5, 0.6, 0.7], [0.9, 0.9, 0.9], SEEDS) == choice(
        "below", words.SHARE_VS, below="every seed"
    )
    assert words.against_worked([0.97, 0.6, 0.98], [0.97, 0.9, 0.99], SEEDS) == choice(
        "below_above", words.SHARE_VS, below="seeds 1 and 2", above="seed 0"
    )


def test_the_samples_table_lists_each_answer_once_with_its_count_and_verdict():
    samples = {
        "prompt": "#47+38=",
        "step": 60,
        "before": [
            {"text": "85#", "count": 10, "status": "accepted"},
            {"text": "84#", "count": 6, "status": "incorrect"},
        ],
        "after": [{"text": "7+8=15,4+3+1=8;85#", "count": 16, "status": "accepted"}],
    }
    table = working.samples_table(samples)
    assert table["header"][2] == "times in 16"
    assert [r[0] for r in table["rows"]] == ["before RL", "before RL", "after RL (step 60)"]
    assert table["rows"][1] == ["before RL", "`84#`", 6, "wrong value"]


def test_the_shown_sum_carries_and_is_held_out():
    task = working.shown_task()
    assert sum(x % 10 for x in task.operands) >= 10
    assert task.prompt.startswith("#") and task.prompt.endswith("=")


@pytest.mark.parametrize("claim", working.CLAIMS, ids=lambda c: c.name)
def test_every_claim_names_itself_and_says_what_it_protects(claim):
    assert claim.name and claim.says and callable(claim.holds)


def _row(**values: float) -> dict:
    """A run's before-and-after row on one seed: 0.5 everywhere but ``values``."""
    keys = [
        "share_before",
        "share_after",
        "length_before",
        "length_after",
        "style_entropy_before",
        "style_entropy_after",
        "p_worked_after",
        "accuracy_before",
        "accuracy_after",
        "accuracy_worked_before",
        "accuracy_worked_after",
        "accuracy_direct_before",
        "working_pays_before",
    ]
    return {k: 0.5 for k in keys} | values


def test_the_followed_seed_s_values_are_formatted_as_the_ranges_were():
    worked = _row(share_before=0.4967, share_after=0.994, length_before=10.65, p_worked_after=0.991)
    control = _row(accuracy_before=0.288, style_entropy_after=0.034)
    again = _row(share_before=0.04, working_pays_before=0.2637)
    made = {k: str(v) for k, v in words.on_seed(worked, control, again).items()}
    assert (made["share_before"], made["share_after"], made["length_before"]) == ("50%", "99%", "10.7")
    assert (made["p_worked_after"], made["again_share_before"]) == ("99%", "4.0%")
    assert (made["control_accuracy_before"], made["control_style_entropy_after"]) == ("0.29", "0.03")
    assert (made["again_edge"], made["worked_edge"]) == ("+0.26", "+0.50")


def test_weights_say_which_part_was_larger_and_by_how_much_only_where_one_side_led_everywhere():
    assert words.weights([0.09, 0.13, 0.09], [0.26, 0.20, 0.19], SEEDS) == choice(
        "times", words.WEIGHTS, execution="every seed", times="1.5 to 2.9"
    )
    assert words.weights([0.09, 0.13], [0.26, 0.10], (0, 1)) == choice(
        "execution_switch", words.WEIGHTS, execution="seed 0", switch="seed 1"
    )
    assert words.weights([-0.01, 0.1], [0.2, 0.3], (0, 1)) == choice("execution", words.WEIGHTS, execution="every seed")


def test_the_page_words_every_case_of_every_choice_and_the_words_read_clean():
    page = page_wordings((ROOT / working.PAGE).read_text(encoding="utf-8"))
    for name, cases in (
        ("accuracy_change", words.CHANGE),
        ("control_change", words.CHANGE),
        ("ahead", words.AHEAD),
        ("switch", words.PART),
        ("execution", words.PART),
        ("execution_vs_switch", words.WEIGHTS),
        ("rediscovery", words.REDISCOVERY),
        ("rediscovery_lesson", words.REDISCOVERY),
        ("again_share_vs", words.SHARE_VS),
    ):
        assert set(page[name]) == set(cases), name
        assert not any(prose.degenerate(w) for w in page[name].values()), name
