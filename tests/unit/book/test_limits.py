"""Chapter 5's outcome-dependent wording (rlbook.book._limits_words) and table rows (rlbook.book.limits): each
phrase says what happened, on made-up facts."""

from __future__ import annotations

import pytest

from rlbook.book import _limits_words as words
from rlbook.book import limits
from rlbook.publish import prose

SEEDS = (0, 1, 2)


def hack(shares, favourite="#"):
    return {"share": shares, "wrong": [{"completion": favourite}]}


def test_a_takeover_on_every_seed_is_said_once_and_no_other_seed_is_described():
    found = {s: hack([0.01, 0.9]) for s in SEEDS}
    assert words.takeover_sentence(found, [0, 1, 2], SEEDS) == "The loophole took over on every seed."


def test_seeds_without_a_takeover_are_named_with_what_they_did():
    found = {0: hack([0.01, 0.9]), 1: hack([0.01, 0.04]), 2: hack([0.02, 0.03])}
    sentence = words.takeover_sentence(found, [0], SEEDS)
    assert sentence.startswith("The loophole took over on seed 0; on seeds 1 and 2 the policy kept writing sums")
    assert "at most 3%–4% of a batch" in sentence


def test_favourites_name_each_answer_once_with_its_seeds():
    same = {s: hack([0.9], "#") for s in SEEDS}
    assert words.favourites(same, [0, 1, 2], SEEDS) == "`'#'` on every seed"
    mixed = {0: hack([0.9], "1 1#"), 1: hack([0.9], "#"), 2: hack([0.9], "#")}
    assert words.favourites(mixed, [0, 1, 2], SEEDS) == "`'1 1#'` on seed 0 and `'#'` on seeds 1 and 2"


def test_values_by_seed_group_equal_values():
    assert (
        words.by_value({0: 16, 1: 4, 2: 4}, SEEDS, lambda n: f"n = {n}")
        == "n = 16 on seed 0 and n = 4 on seeds 1 and 2"
    )
    assert words.by_value({0: 4, 1: 4, 2: 4}, SEEDS) == "4 on every seed"


def test_a_row_of_the_two_settings_table_shows_a_dash_when_the_loophole_never_took_over():
    row = limits._lr_row("exploit-slow", 1, [0.01, 0.12, 0.05], None, [0.3, 0.5])
    assert row == ["exploit-slow", 1, "1%\u00a0→\u00a05%", "12%", "–", "0.30\u00a0→\u00a00.50"]  # never broken


def test_slow_growth_names_where_the_loophole_grew_and_where_it_shrank():
    rising, falling = [0.01] * 5 + [0.05] * 50 + [0.12] * 5, [0.010] * 5 + [0.016] * 50 + [0.002] * 5
    assert words.slow_growth({0: rising, 1: rising, 2: rising}, (0, 1, 2)) == (
        "its share of a batch still grew on every seed, to a largest share of 12%."
    )
    assert words.slow_growth({0: rising, 1: rising, 2: falling}, (0, 1, 2)) == (
        "its share of a batch still grew on seeds 0 and 1, to a largest share of 12%; on seed 2 it shrank, "
        "from 1.0% to 0.2% of a batch."
    )


def test_slow_growth_refuses_a_run_where_the_loophole_grew_nowhere():
    with pytest.raises(ValueError, match="grew on no seed"):
        words.slow_growth({0: [0.1] * 10 + [0.0] * 5}, (0,))


def test_trusted_sentence_says_where_the_over_rated_answer_was_labelled_right_often():
    every = words.trusted_sentence({0: 7, 1: 3, 2: 4}, (0, 1, 2))
    assert (
        every.startswith("It is also the right answer of 3–7 training prompts, so the judge saw it")
        and "On" not in every
    )
    some = words.trusted_sentence({0: 7, 1: 0, 2: 4}, (0, 1, 2))
    assert some.startswith("It is also the right answer of 4–7 training prompts on seeds 0 and 2, so")
    assert some.endswith(
        "On seed 1 it is the right answer of no training prompt: a judge also over-rates answers it "
        "was seldom shown labelled right."
    )
    with pytest.raises(ValueError, match="fewer than 2"):
        words.trusted_sentence({0: 1, 1: 0}, (0, 1))


def test_heldout_fall_says_when_accuracy_reached_zero_and_stayed_there():
    sentence = words.heldout_fall([0, 5, 10, 15, 20], [0.30, 0.2, 0.004, 0.0, 0.001])
    assert sentence == "fell from 0.30 at the start to 0.00 by step 10 and stayed there to the last checkpoint, step 20"
    assert (
        words.heldout_fall([0, 5, 10], [0.30, 0.2, 0.0])
        == "fell from 0.30 at the start to 0.00 at the last checkpoint, step 10"
    )


def test_heldout_fall_without_zero_gives_the_best_later_checkpoint_and_the_end():
    sentence = words.heldout_fall([0, 5, 10, 15], [0.34, 0.27, 0.0, 0.12])
    assert sentence == (
        "fell from 0.34 at the start and never came back: its best later checkpoint was 0.27, at step 5, and it "
        "ended at 0.12"
    )
    assert not prose.degenerate(f"Its held-out accuracy {sentence}.")


def test_slow_versus_names_the_seeds_of_both_runs_and_never_says_fewer_of_none():
    none = words.slow_versus([0, 1, 2], [], SEEDS)
    assert none == "the loophole took over on none of the three seeds, against every seed in `exploit`"
    assert "fewer" not in none
    assert (
        words.slow_versus([0, 1, 2], [1], SEEDS) == "the loophole took over on seed 1, against every seed in `exploit`"
    )
