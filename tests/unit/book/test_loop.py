"""Chapter 1's outcome-dependent sentences (rlbook.book.loop): each selector picks the case that happened, on
made-up facts, and the page words every case cleanly."""

from __future__ import annotations

from pathlib import Path

from rlbook.book import loop
from rlbook.book.wording import choice
from rlbook.publish import prose
from rlbook.publish.page_rules import page_wordings

SEEDS = (0, 1, 2)
ROOT = Path(__file__).resolve().parents[3]


def test_a_never_right_sum_is_called_confidently_wrong_only_when_its_favourite_dominates():
    expected = choice("dominant", loop.FAVOURITE, sum="2+1", top="4", count=20, samples=32)
    assert loop.wrong_favourite("2+1", "4#", 20, 32) == expected
    assert loop.wrong_favourite("2+1", "4#", 16, 32)["case"] == "dominant"


def test_a_never_right_sum_without_a_dominant_favourite_says_so():
    made = loop.wrong_favourite("2+1", "4#", 10, 32)
    assert made == choice("scattered", loop.FAVOURITE, sum="2+1", top="4", count=10, samples=32)


def test_the_greedy_answer_names_the_right_one_only_when_it_is_wrong():
    assert loop.greedy("15", 15, True) == choice("right", loop.GREEDY, greedy="15")
    assert loop.greedy("14", 15, False) == choice("wrong", loop.GREEDY, greedy="14", right=15)


def test_answers_against_their_advantage_on_the_shown_seed_are_named_with_their_rise():
    made = loop.against_advantage([["14", 0.33], ["16", 0.05]], [0, 2], SEEDS)
    assert made == choice("clear", loop.AGAINST, gained="`14` (+33%) and `16` (+5.0%)")


def test_a_negligible_rise_is_said_to_barely_move_never_offered_as_a_gain():
    made = loop.against_advantage([["14", 0.33], ["156", 7.7e-5]], [0], SEEDS)
    assert made == choice("clear_faint", loop.AGAINST, gained="`14` (+33%)", faint="`156` (+0.0077%)")


def test_answers_against_their_advantage_elsewhere_name_the_seeds_never_a_count_of_zero():
    made = loop.against_advantage([], [1, 2], SEEDS)
    assert made == choice("elsewhere", loop.AGAINST, bar=loop.Num(0.01, ".0%"), seeds="seeds 1 and 2")
    made = loop.against_advantage([["156", 7.7e-5]], [], SEEDS)
    assert made == choice("nowhere", loop.AGAINST, bar=loop.Num(0.01, ".0%"), seeds="every seed")


def test_a_rise_prints_two_significant_digits_and_never_rounds_to_zero():
    assert [loop.percent(r) for r in (0.33, 0.05, 7.7e-5, 1.234)] == ["+33%", "+5.0%", "+0.0077%", "+123%"]


def test_the_page_words_every_case_of_every_choice_and_the_words_read_clean():
    page = page_wordings((ROOT / loop.PAGE).read_text(encoding="utf-8"))
    for name, cases in (("wrong_favourite", loop.FAVOURITE), ("greedy", loop.GREEDY), ("against", loop.AGAINST)):
        assert set(page[name]) == set(cases), name
        assert not any(prose.degenerate(w) for w in page[name].values()), name
