"""Chapter 5's outcome-dependent wording (rlbook.book._limits_words) and table rows (rlbook.book.limits): each
phrase says what happened, on made-up facts."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlbook.book import _limits_words as words
from rlbook.book import limits
from rlbook.book.wording import choice
from rlbook.publish import prose
from rlbook.publish.page_rules import page_wordings

SEEDS = (0, 1, 2)
ROOT = Path(__file__).resolve().parents[3]


def hack(shares, favourite="#"):
    return {"share": shares, "wrong": [{"completion": favourite}]}


def test_a_takeover_on_every_seed_describes_no_other_seed():
    found = {s: hack([0.01, 0.9]) for s in SEEDS}
    assert words.takeover(found, [0, 1, 2], SEEDS) == choice("every", words.TAKEOVER, taken="every seed")


def test_seeds_without_a_takeover_are_named_with_the_largest_share_they_paid():
    found = {0: hack([0.01, 0.9]), 1: hack([0.01, 0.04]), 2: hack([0.02, 0.03])}
    made = words.takeover(found, [0], SEEDS)
    assert made == choice("some", words.TAKEOVER, taken="seed 0", others="seeds 1 and 2", peak="3%–4%")


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
    row = limits._lr_row("exploit-slow", 1, 0.0123, [0.01, 0.12, 0.05], None, [0.3, 0.5])
    assert row == ["exploit-slow", 1, "1.2%", "1%\u00a0→\u00a05%", "12%", "–", "0.30\u00a0→\u00a00.50"]  # never broken


def test_slow_growth_names_where_the_loophole_grew_and_where_it_shrank():
    rising, falling = [0.01] * 5 + [0.05] * 50 + [0.12] * 5, [0.010] * 5 + [0.016] * 50 + [0.002] * 5
    made = words.slow_growth({0: rising, 1: [0.01] * 5 + [0.07] * 5, 2: rising}, SEEDS, 1)
    assert made == choice("every", words.GROWTH, grew="every seed", seed=1, largest=0.07)
    assert str(made["values"]["largest"]) == "7%"  # one seed's share, the followed one, never a range
    made = words.slow_growth({0: rising, 1: rising, 2: falling}, SEEDS, 1)
    assert made == choice("some", words.GROWTH, grew="seeds 0 and 1", seed=1, largest=0.12, shrank="seed 2")


def test_slow_growth_names_another_seed_where_the_share_shrank_on_the_followed_one():
    rising, falling = [0.01] * 5 + [0.09] * 5, [0.02] * 5 + [0.01] * 5
    made = words.slow_growth({0: falling, 1: falling, 2: rising}, SEEDS, 1)
    assert made["values"]["seed"] == 2 and str(made["values"]["largest"]) == "9%"
    assert words.slow_growth({0: rising, 1: falling, 2: rising}, SEEDS, None)["values"]["seed"] == 0


def test_slow_growth_says_so_where_the_loophole_grew_nowhere():
    made = words.slow_growth({0: [0.1] * 10 + [0.0] * 5}, (0,), 0)
    assert made == choice("none", words.GROWTH, shrank="seed 0")


def test_trusted_says_where_the_over_rated_answer_was_labelled_right_often():
    assert words.trusted({0: 7, 1: 3, 2: 4}, SEEDS) == choice("every", words.TRUST, count="3–7", often="every seed")
    some = words.trusted({0: 7, 1: 0, 2: 4}, SEEDS)
    assert (
        some["case"] == "some_never"
        and some["values"]["rare"] == "seed 1"
        and some["values"]["often"] == ("seeds 0 and 2")
    )
    assert words.trusted({0: 7, 1: 1, 2: 0}, SEEDS)["case"] == "some_few"
    with pytest.raises(ValueError, match="fewer than 2"):
        words.trusted({0: 1, 1: 0}, (0, 1))


def test_heldout_fall_says_when_accuracy_reached_zero_and_stayed_there():
    made = words.heldout_fall([0, 5, 10, 15, 20], [0.30, 0.2, 0.004, 0.0, 0.001])
    assert made == choice("zero_and_stayed", words.FALL, start=0.30, zero=10, last=20)
    assert words.heldout_fall([0, 5, 10], [0.30, 0.2, 0.0]) == choice("zero_at_end", words.FALL, start=0.30, last=10)


def test_heldout_fall_without_zero_gives_the_best_later_checkpoint_and_the_end():
    made = words.heldout_fall([0, 5, 10, 15], [0.34, 0.27, 0.0, 0.12])
    assert made == choice("never_back", words.FALL, start=0.34, best=0.27, best_step=5, end=0.12)
    assert str(made["values"]["best"]) == "0.27"


def test_the_judge_sections_give_one_seed_s_values_as_its_table_prints_them():
    judge = {
        "rm": {"proxy": [0.586, 0.7, 0.86], "gold": [0.615, 0.4, 0.284]},
        "kl": {"proxy": [0.586, 0.8], "gold": [0.6, 0.487]},
        "over": {"share": [0.05, 0.3, 0.609], "top": [["12#", 40, 0.953, 35]]},
    }
    made = words.judge_on_seed(judge, 2)
    assert made["seed"] == 2
    shown = {k: str(v) for k, v in made.items() if k != "seed"}
    assert shown == {
        "proxy_first": "0.59",
        "proxy_last": "0.86",
        "gold_first": "0.61",
        "gold_last": "0.28",
        "mean_gold_rm": "0.43",
        "mean_gold_kl": "0.54",
        "over_first": "5%",
        "over_last": "61%",
        "top_prompts": "35",
        "top_score": "0.95",
    }


def test_the_table_of_loophole_answers_is_said_to_list_all_or_the_commonest():
    assert words.listed(5, 7) == choice("commonest", words.LISTED, listed="five")
    assert words.listed(4, 4) == choice("all", words.LISTED)


def test_the_page_words_every_case_of_every_choice_and_the_words_read_clean():
    page = page_wordings((ROOT / limits.PAGE).read_text(encoding="utf-8"))
    for name, cases in (("takeover", words.TAKEOVER), ("heldout_fall", words.FALL), ("slow_growth", words.GROWTH),
                        ("trusted", words.TRUST), ("listed", words.LISTED)):  # fmt: skip
        assert set(page[name]) == set(cases), name
        assert not any(prose.degenerate(w) for w in page[name].values()), name
