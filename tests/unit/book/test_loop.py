"""Chapter 1's outcome-dependent wording (rlbook.book.loop): each phrase says what happened, on made-up facts."""

from __future__ import annotations

from rlbook.book import loop


def test_a_never_right_sum_is_called_confidently_wrong_only_when_its_favourite_dominates():
    sentence = loop.wrong_sentence("2+1", "4#", 20, 32)
    assert sentence == (
        "For 2+1 no sample was right, and the policy is confidently wrong: its favourite answer, 4, came up 20 "
        "times in 32."
    )
    assert loop.wrong_sentence("2+1", "4#", 16, 32).startswith("For 2+1 no sample was right, and the policy is conf")


def test_a_never_right_sum_without_a_dominant_favourite_says_so():
    sentence = loop.wrong_sentence("2+1", "4#", 10, 32)
    assert "confident" not in sentence
    assert (
        sentence
        == "For 2+1 no sample was right, and no wrong answer dominates either: the commonest, 4, came up only 10 times in 32."
    )
