"""Chapter 2's facts module (rlbook.book.rewards): its outcome-dependent choices (rlbook.book._rewards_words), the
page's words for every case, and some of its claims, on made-up facts (the claims on the real runs are checked
by tests/claims/test_claims.py)."""

from __future__ import annotations

from pathlib import Path

from rlbook.book import _rewards_words as words
from rlbook.book import rewards as r
from rlbook.book._shown import SHOWN
from rlbook.book.facts import freeze
from rlbook.book.wording import choice
from rlbook.publish.page_rules import page_wordings
from rlbook.publish.prose import degenerate

ROOT = Path(__file__).resolve().parents[3]


def claim(name):
    return next(c for c in r.CLAIMS if c.name == name)


def test_shares_of_all_are_said_in_words_and_others_as_percentages():
    assert words.how_many(1.0) == choice("every", words.HOW_MANY, share=1.0)
    assert words.how_many(0.995)["case"] == "almost_every"
    made = words.how_many(0.97)
    assert made == choice("share", words.HOW_MANY, share=0.97) and str(made["values"]["share"]) == "97%"


def test_the_pretrained_reward_never_offers_a_zero_count():
    none = words.pretrained_reward({"accepted": 0, "samples": 1280, "expected_reward": 0.0})
    assert none == {"earns": choice("nothing", words.EARNS), "detail": choice("nothing", words.EARNS, samples=1280)}
    assert str(none["detail"]["values"]["samples"]) == "1,280"
    some = words.pretrained_reward({"accepted": 3, "samples": 1280, "expected_reward": 3 / 1280})
    assert some["earns"] == choice("some", words.EARNS)
    assert some["detail"] == choice("some", words.EARNS, accepted=3, samples=1280, reward=3 / 1280)
    assert str(some["detail"]["values"]["reward"]) == "0.00"


def _valid_end(sizes, extra=0):
    return {
        s: {"valid_end": {"malformed": m, "incomplete": i, "extra_number": extra if s == SHOWN else 0}}
        for s, (m, i) in sizes.items()
    }


def test_the_valid_end_choice_says_what_the_samples_hold():
    seeds = (0, 1, 2)
    empty = words.valid_end(_valid_end({0: (0, 0), 1: (0, 0), 2: (0, 0)}), seeds)
    assert empty == choice("empty", words.VALID_END, seeds="every seed")
    elsewhere = words.valid_end(_valid_end({0: (0, 0), 1: (2, 0), 2: (0, 1)}), seeds)
    assert elsewhere == choice("elsewhere", words.VALID_END, filled="seeds 1 and 2")
    here = words.valid_end(_valid_end({0: (2, 1), 1: (0, 0), 2: (0, 0)}, extra=2), seeds)
    counts = {"rollouts": "three", "malformed": 2, "incomplete": 1}
    assert here == choice("shown_third", words.VALID_END, **counts, third="two of the three")
    alone = words.valid_end(_valid_end({0: (1, 0), 1: (0, 0), 2: (0, 0)}), seeds)
    assert alone == choice("shown", words.VALID_END, rollouts="one", malformed=1, incomplete=0)


def test_the_summary_lists_the_broken_end_cell_only_where_a_seed_filled_it():
    seeds = (0, 1, 2)
    assert words.broken_end(_valid_end({0: (0, 0), 1: (0, 0), 2: (0, 0)}), seeds) == choice("empty", words.BROKEN_END)
    filled = words.broken_end(_valid_end({0: (0, 0), 1: (2, 0), 2: (0, 1)}), seeds)
    assert filled == choice("filled", words.BROKEN_END, filled="seeds 1 and 2")


def test_refusing_malformed_steps_names_what_it_moves_and_never_a_zero():
    assert words.refuse_malformed(0) == choice("none", words.REFUSE)
    assert words.refuse_malformed(24) == choice("some", words.REFUSE, malformed="24")
    assert words.refuse_malformed(3) == choice("some", words.REFUSE, malformed="three")


def test_directions_name_the_seeds_that_went_each_way():
    seeds = (0, 1, 2)
    assert words.directions([0.5, 0.5, 0.5], [0.6, 0.55, 0.4], seeds) == choice(
        "up_down", words.DRIFT, up="seeds 0 and 1", down="seed 2"
    )
    assert words.directions([0.5] * 3, [0.6] * 3, seeds) == choice("up", words.DRIFT, up="every seed")
    assert words.directions([0.5] * 3, [0.4] * 3, seeds) == choice("down", words.DRIFT, down="every seed")
    assert words.directions([0.5] * 3, [0.5] * 3, seeds) == choice("level", words.DRIFT, level="every seed")


def test_the_move_of_step_validity_is_barely_only_under_the_threshold_either_way():
    assert words.move(0.53, 0.56)["case"] == "barely" and words.move(0.56, 0.53)["case"] == "barely"
    moved = words.move(0.5334, 0.5957)
    assert moved["case"] == "moved" and (str(moved["values"]["start"]), str(moved["values"]["end"])) == ("0.53", "0.60")
    assert words.move(0.6, 0.5)["case"] == "moved"


def test_the_page_words_every_case_of_every_choice_and_the_words_read_clean():
    page = page_wordings((ROOT / r.PAGE).read_text(encoding="utf-8"))
    for name, cases in (
        ("earns", words.EARNS),
        ("detail", words.EARNS),
        ("format", words.HOW_MANY),
        ("plain_known", words.HOW_MANY),
        ("valid_end", words.VALID_END),
        ("broken_end", words.BROKEN_END),
        ("refuse_malformed", words.REFUSE),
        ("outcome_drift", words.DRIFT),
        ("outcome_move", words.MOVE),
    ):
        assert set(page[name]) == set(cases), name
        assert not any(degenerate(w) for w in page[name].values()), name


def test_claims_catch_a_broken_fact():
    seed = {"incorrect_all_valid": 1, "valid_share": 0.4}
    facts = freeze({"seeds": [0], "by_seed": {0: seed}})
    assert "no wrong value has both steps valid" in claim("valid-steps-imply-right-sum").failure(facts)
    assert "saw {0: 0.4}" in claim("right-answers-mostly-valid").failure(facts)
    assert (
        claim("cases-as-intended").failure(freeze({"mismatches": ["empty answer"]})).endswith("saw ('empty answer',)")
    )
