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


def test_answers_against_their_advantage_on_the_shown_seed_are_counted():
    made = loop.against_advantage({"against": 2, "negative": 3}, [0, 2], SEEDS)
    assert made == choice("here", loop.AGAINST, moved="two of the three")


def test_answers_against_their_advantage_elsewhere_name_the_seeds_never_a_count_of_zero():
    made = loop.against_advantage({"against": 0, "negative": 3}, [1, 2], SEEDS)
    assert made == choice("elsewhere", loop.AGAINST, seeds="seeds 1 and 2")
    made = loop.against_advantage({"against": 0, "negative": 3}, [], SEEDS)
    assert made == choice("nowhere", loop.AGAINST, seeds="every seed")


def test_the_page_words_every_case_of_every_choice_and_the_words_read_clean():
    page = page_wordings((ROOT / loop.PAGE).read_text(encoding="utf-8"))
    for name, cases in (("wrong_favourite", loop.FAVOURITE), ("greedy", loop.GREEDY), ("against", loop.AGAINST)):
        assert set(page[name]) == set(cases), name
        assert not any(prose.degenerate(w) for w in page[name].values()), name
