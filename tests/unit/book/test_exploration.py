"""Chapter 6's outcome-dependent wording (rlbook.book.exploration): each phrase says what happened."""

from __future__ import annotations

from rlbook.book import exploration

SEEDS = (0, 1, 2)


def test_the_greedy_answer_never_reads_as_a_bound_that_says_nothing():
    assert exploration._greedy([{"greedy": 1.0}] * 3, 40) == "right on all 40 held-out sums"
    assert (
        exploration._greedy([{"greedy": 0.9}, {"greedy": 1.0}, {"greedy": 0.95}], 40)
        == "right on 36–40 of the 40 held-out sums"
    )


def test_what_main_did_on_base_s_unsolved_sums_is_said_only_where_it_happened():
    both = [{"widened": 3, "narrowed": 2}, {"widened": 2, "narrowed": 2}, {"widened": 3, "narrowed": 3}]
    assert exploration._widened(both, SEEDS) == (
        "`main` solved 2–3 of them at least once; it never solved 2–3 sums "
        "that `base` had solved (ranges over the seeds)."
    )
    gained = [{"widened": 1, "narrowed": 0}] * 3
    assert "never solved" not in exploration._widened(gained, SEEDS)
    assert exploration._widened([{"widened": 0, "narrowed": 0}] * 3, SEEDS).startswith("`main` solved none of them")


def test_where_rl_ended_against_the_own_format_mark_names_the_seeds():
    assert exploration._below([0, 1, 2], SEEDS) == "they end below it on every seed"
    assert exploration._below([], SEEDS) == "they end above it on every seed"
    assert exploration._below([0, 2], SEEDS) == "they end below it on seeds 0 and 2 and above it on seed 1"


def test_two_runs_are_ordered_only_when_their_seeds_do_not_overlap():
    assert (
        exploration._versus({"a": [0.3, 0.35], "b": [0.45, 0.5]}, "a", "b")
        == "every seed of `a` ended below every seed of `b`."
    )
    assert exploration._versus({"a": [0.6, 0.7], "b": [0.45, 0.5]}, "a", "b").startswith(
        "every seed of `a` ended above"
    )
    assert "overlapping" in exploration._versus({"a": [0.4, 0.6], "b": [0.45, 0.5]}, "a", "b")


def test_a_range_over_seeds_reads_as_one_value_when_its_ends_agree():
    assert exploration._range([0.981, 0.979], ".0%") == "98%"
    assert exploration._range([7, 10, 8], "d") == "7–10"


def test_a_range_in_a_table_is_joined_to_its_ends_so_a_narrow_column_never_breaks_it():
    assert exploration._range([0.31, 0.4], ".2f", exploration.TABLE_DASH) == "0.31\u2060–\u20600.40"
