"""Chapter 2's facts module (rlbook.book.rewards): its outcome-dependent wording (rlbook.book._rewards_words) and
some of its claims, on made-up facts (the claims on the real runs are checked by tests/claims/test_claims.py)."""

from __future__ import annotations

from rlbook.book import _rewards_words as words
from rlbook.book import rewards as r
from rlbook.book._shown import SHOWN
from rlbook.book.facts import freeze
from rlbook.publish.prose import degenerate


def claim(name):
    return next(c for c in r.CLAIMS if c.name == name)


def test_shares_of_all_are_said_in_words_and_others_as_percentages():
    assert words.each_of("the plain sums", 1.0) == "every one of the plain sums"
    assert words.each_of("the plain sums", 0.97) == "97% of the plain sums"
    assert words.format_clause(1.0) == "every one of its rejections is a failure of format"
    assert words.format_clause(0.995) == "almost every one of its rejections is a failure of format"
    assert words.format_clause(0.97) == "97% of its rejections are failures of format"


def test_the_pretrained_reward_never_offers_a_zero_count():
    none = words.pretrained_reward({"accepted": 0, "samples": 1280, "expected_reward": 0.0})
    assert none == {"earns": "nothing", "detail": "not one of its 1,280 answers is accepted"}
    some = words.pretrained_reward({"accepted": 3, "samples": 1280, "expected_reward": 3 / 1280})
    assert some["earns"] == "almost nothing" and some["detail"].startswith("3 of its 1,280 answers are accepted")


def _valid_end(sizes, extra=0):
    return {
        s: {"valid_end": {"malformed": m, "incomplete": i, "extra_number": extra if s == SHOWN else 0}}
        for s, (m, i) in sizes.items()
    }


def test_the_valid_end_sentence_says_what_the_samples_hold():
    seeds = (0, 1, 2)
    empty = words.valid_end_sentence(_valid_end({0: (0, 0), 1: (0, 0), 2: (0, 0)}), seeds)
    assert "empty on every seed" in empty
    elsewhere = words.valid_end_sentence(_valid_end({0: (0, 0), 1: (2, 0), 2: (0, 1)}), seeds)
    assert "seeds 1 and 2" in elsewhere and "empty" in elsewhere
    here = words.valid_end_sentence(_valid_end({0: (2, 1), 1: (0, 0), 2: (0, 0)}, extra=2), seeds)
    assert here.startswith("In the shown sample three rollouts land here (2 malformed, 1 stopped by the budget)")
    assert "two of the three of them" in here
    assert not words.valid_end_sentence(_valid_end({0: (1, 0), 1: (0, 0), 2: (0, 0)}), seeds).count("third number")
    for sentence in (empty, elsewhere, here):
        assert degenerate(sentence) == []


def test_directions_name_the_seeds_that_went_each_way():
    seeds = (0, 1, 2)
    assert words.directions([0.5, 0.5, 0.5], [0.6, 0.55, 0.4], seeds) == "up on seeds 0 and 1 and down on seed 2"
    assert words.directions([0.5] * 3, [0.6] * 3, seeds) == "up on every seed"
    assert words.directions([0.5] * 3, [0.5] * 3, seeds) == "level on every seed"


def test_claims_catch_a_broken_fact():
    seed = {"incorrect_all_valid": 1, "valid_share": 0.4}
    facts = freeze({"seeds": [0], "by_seed": {0: seed}})
    assert "no wrong value has both steps valid" in claim("valid-steps-imply-right-sum").failure(facts)
    assert "saw {0: 0.4}" in claim("right-answers-mostly-valid").failure(facts)
    assert (
        claim("cases-as-intended").failure(freeze({"mismatches": ["empty answer"]})).endswith("saw ('empty answer',)")
    )
