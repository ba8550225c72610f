"""Chapter 6's outcome-dependent wording (rlbook.book._exploration_words): each phrase says what happened."""

from __future__ import annotations

from rlbook.book import _exploration_words as words
from rlbook.book import exploration
from rlbook.publish import prose

SEEDS = (0, 1, 2)


def test_the_greedy_answer_never_reads_as_a_bound_that_says_nothing():
    assert words.greedy_right([{"greedy": 1.0}] * 3, 40) == "right on all 40 held-out sums"
    assert (
        words.greedy_right([{"greedy": 0.9}, {"greedy": 1.0}, {"greedy": 0.95}], 40)
        == "right on 36–40 of the 40 held-out sums"
    )


def _sums(never: int, widened: int, narrowed: int) -> dict:
    return {"never_before": never, "widened": widened, "narrowed": narrowed}


def test_the_sums_base_never_solved_are_counted_seed_by_seed_with_their_total():
    said = words.widened_sentence([_sums(5, 5, 1), _sums(5, 4, 0), _sums(2, 2, 2)], SEEDS, 40)
    assert said.startswith(
        "`base` never solved 5, 5 and 2 of the 40 sums on seeds 0, 1 and 2, 12 over the three seeds. "
        "`main` solved 5, 4 and 2 of them at least once, 11 of the 12. Those sums are the only evidence"
    )
    assert said.endswith("`main` never solved 1, 0 and 2 sums that `base` had solved, 3 over the three seeds.")
    assert not prose.degenerate(said)


def test_what_main_did_on_base_s_unsolved_sums_is_said_only_where_it_happened():
    gained = [_sums(2, 1, 0)] * 3
    assert "had solved" not in words.widened_sentence(gained, SEEDS, 40)
    none = words.widened_sentence([_sums(2, 0, 0)] * 3, SEEDS, 40)
    assert none.endswith("`main` solved none of them either.") and "evidence" not in none
    assert words.widened_sentence([_sums(0, 0, 0)] * 3, SEEDS, 40) == (
        "`base` solved every one of the 40 sums at least once on every seed."
    )
    assert words.widened_sentence([_sums(3, 1, 0)], (0,), 40).startswith(
        "`base` never solved 3 of the 40 sums on seed 0. `main` solved 1 of them at least once."
    )


def test_accepted_only_against_main_gives_both_finals_and_the_side_of_each_seed():
    said = words.rft_versus([0.4617, 0.4797, 0.518], [0.4508, 0.4906, 0.4961], SEEDS)
    assert said == (
        "at 0.46, 0.48 and 0.52 against `main`'s 0.45, 0.49 and 0.50 on seeds 0, 1 and 2: "
        "above `main` on seeds 0 and 2 and below it on seed 1"
    )
    assert words.rft_versus([0.501, 0.6], [0.499, 0.5], (0, 1)).endswith(
        "above `main` on seed 1 and level with it on seed 0"
    )


def test_the_loss_of_the_pretraining_format_is_split_between_sft_and_rl():
    own = [
        {"own": 0.86, "own_sft": 0.75, "own_after": 0.56, "greedy": 1.0, "greedy_sft": 0.9, "greedy_after": 0.8},
        {"own": 0.86, "own_sft": 0.60, "own_after": 0.55, "greedy": 1.0, "greedy_sft": 0.9, "greedy_after": 0.8},
    ]
    assert words.own_lost(own, (0, 1)) == "RL lost more than SFT on seed 0; SFT lost more than RL on seed 1"
    assert words.own_stages(own[0], 0) == (
        "On seed 0, SFT took the sampled accuracy in that format from 0.86 to 0.75 and the greedy one from "
        "1.00 to 0.90; RL took them on to 0.56 and 0.80."
    )


def test_where_rl_ended_against_the_own_format_mark_names_the_seeds():
    assert words.own_mark([0, 1, 2], SEEDS) == "they end below it on every seed"
    assert words.own_mark([], SEEDS) == "they end above it on every seed"
    assert words.own_mark([0, 2], SEEDS) == "they end below it on seeds 0 and 2 and above it on seed 1"


def test_two_runs_are_ordered_only_when_their_seeds_do_not_overlap():
    assert (
        words.versus({"a": [0.3, 0.35], "b": [0.45, 0.5]}, "a", "b")
        == "every seed of `a` ended below every seed of `b`."
    )
    assert words.versus({"a": [0.6, 0.7], "b": [0.45, 0.5]}, "a", "b").startswith("every seed of `a` ended above")
    assert "overlapping" in words.versus({"a": [0.4, 0.6], "b": [0.45, 0.5]}, "a", "b")


def test_a_range_over_seeds_reads_as_one_value_when_its_ends_agree():
    assert words.seed_range([0.981, 0.979], ".0%") == "98%"
    assert words.seed_range([7, 10, 8], "d") == "7–10"


def test_a_range_in_a_table_is_joined_to_its_ends_so_a_narrow_column_never_breaks_it():
    assert words.seed_range([0.31, 0.4], ".2f", exploration.TABLE_DASH) == "0.31\u2060–\u20600.40"
