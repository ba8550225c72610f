"""Chapter 7's outcome-dependent wording (rlbook.book._working_words) and shown answers (rlbook.book.working): each
phrase says what happened, and nothing else."""

from __future__ import annotations

import pytest

from rlbook.book import _working_words as words
from rlbook.book import working
from rlbook.publish import prose

SEEDS = (0, 1, 2)


def test_rediscovery_says_where_the_seeds_part_ways():
    shares = {0: (0.005, 0.0), 1: (0.04, 0.88), 2: (0.02, 0.15)}
    said = words.rediscovery(shares, SEEDS)
    assert said == (
        "The seeds parted ways: worked answers became the majority on seed 1 (4.0% to 88%) and "
        "stayed a minority on seeds 0 and 2 (seed 0: 0.5% to 0.0%; seed 2: 2.0% to 15%)."
    )


def test_rediscovery_when_every_seed_or_none_agrees_says_it_once_without_parting():
    every = words.rediscovery({s: (0.05, 0.9) for s in SEEDS}, SEEDS)
    assert every.startswith("Worked answers became the majority on every seed (") and "parted" not in every
    none = words.rediscovery({s: (0.05, 0.1) for s in SEEDS}, SEEDS)
    assert none.startswith("Worked answers stayed a minority on every seed (") and "majority" not in none


def test_rediscovery_on_one_seed_names_it_and_its_move():
    assert words.rediscovery({1: (0.04, 0.6)}, (1,)) == "Worked answers became the majority on seed 1 (4.0% to 60%)."


def test_percent_keeps_a_small_share_readable():
    assert (words.percent(0.005), words.percent(0.04), words.percent(0.876)) == ("0.5%", "4.0%", "88%")


def test_the_takeover_line_is_inclusive():
    assert "majority on seed 0" in words.rediscovery({0: (0.1, 0.5), 1: (0.1, 0.49)}, (0, 1))


def test_ahead_gives_the_range_of_the_lead_or_says_the_seeds_disagree():
    assert words.ahead([0.9, 0.95, 0.92], [0.6, 0.5, 0.7]) == "ended 0.22–0.45 above the control on each seed"
    # The lead is taken between the accuracies as the tables print them: 0.86 - 0.46, not 0.864 - 0.455.
    assert words.ahead([0.864], [0.455]) == "ended 0.40 above the control on its seed"
    assert words.ahead([0.5], [0.7]) == "ended 0.20 below the control on its seed"
    mixed = words.ahead([0.9, 0.5], [0.6, 0.7])
    assert mixed.startswith("ended between -0.20 and +0.30") and mixed.endswith("depending on the seed")


def test_change_by_seed_groups_the_seeds_by_direction():
    assert (
        words.change_by_seed([0.2, 0.2, 0.2], [0.15, 0.11, 0.21], SEEDS)
        == "fell on seeds 0 and 1 and held level on seed 2"
    )
    assert words.change_by_seed([0.2, 0.2, 0.2], [0.3, 0.4, 0.5], SEEDS) == "rose on every seed"
    assert words.change_by_seed([0.5], [0.2], (0,)) == "fell on seed 0"
    assert words.change_by_seed([0.2, 0.2], [0.3, 0.1], (0, 1)) == "rose on seed 0 and fell on seed 1"


def test_accuracy_change_says_it_rose_only_where_it_rose_on_every_seed():
    assert (
        words.accuracy_change([0.35, 0.38, 0.38], [0.6, 0.57, 0.64], SEEDS)
        == "Accuracy rose with it on every seed, from 0.35–0.38 to 0.57–0.64."
    )
    mixed = words.accuracy_change([0.15, 0.12, 0.13], [0.08, 0.09, 0.13], SEEDS)
    assert mixed == (
        "Accuracy did not follow on every seed: it went from 0.12–0.15 to 0.08–0.13, and fell on "
        "seeds 0 and 1 and held level on seed 2."
    )


def test_part_says_where_a_part_added_and_where_it_took_away():
    assert words.part([0.11, 0.12, 0.10], SEEDS) == "added to accuracy on every seed (+0.10 to +0.12)"
    assert (
        words.part([-0.1, -0.07, 0.02], SEEDS)
        == "added to accuracy on seed 2 and took accuracy away on seeds 0 and 1 (-0.10 to +0.02)"
    )
    assert words.part([0.0, -0.01], (0, 1)) == "took accuracy away on seed 1 and changed nothing on seed 0 (-0.01 to 0)"


def test_part_never_prints_a_change_as_zero():
    assert words.part([0.004, 0.11], (0, 1)) == "added to accuracy on every seed (+0.004 to +0.11)"


def test_against_worked_names_the_seeds_of_each_side():
    sides = ("below `worked`'s", "level with or above `worked`'s")
    assert words.against_worked([0.5, 0.6, 0.7], [0.9, 0.9, 0.9], (0, 1, 2), *sides) == "below `worked`'s on every seed"
    assert words.against_worked([0.97, 0.6, 0.98], [0.97, 0.9, 0.99], (0, 1, 2), *sides) == (
        "below `worked`'s on seeds 1 and 2 and level with or above `worked`'s on seed 0"
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


def test_edges_give_the_mean_of_both_runs_and_point_to_the_table_for_each_seed():
    said = words.edges([0.264, 0.282, 0.135], [0.184, 0.283, 0.221], (0, 1, 2))
    assert said == ("an edge of +0.23 on average over the seeds, against +0.23 under `worked`")
    assert words.edges([0.1], [0.2], (0,)) == "an edge of +0.10, against +0.20 under `worked`"
    assert not prose.degenerate(f"The worked answers had {said}.")


def test_weights_say_which_part_was_larger_and_by_how_much_only_where_one_side_led_everywhere():
    assert words.weights([0.09, 0.13, 0.09], [0.26, 0.20, 0.19], (0, 1, 2)) == (
        "execution added more than the switch on every seed, 1.5 to 2.9 times as much"
    )
    assert words.weights([0.09, 0.13], [0.26, 0.10], (0, 1)) == (
        "execution added more than the switch on seed 0 and the switch added more than execution on seed 1"
    )
