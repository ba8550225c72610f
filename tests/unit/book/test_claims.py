"""rlbook.book.claims: a broken claim names its chapter, the claim and the figures it saw."""

from __future__ import annotations

import pytest

from rlbook.book.claims import Claim, ClaimError, check
from rlbook.book.facts import freeze

FACTS = freeze({"start": 0.4, "end": 0.6})


def test_a_claim_that_holds_says_nothing():
    claim = Claim("lift", "the run lifts held-out reward", lambda F: F.end > F.start)
    assert claim.failure(FACTS) is None
    check("loop", "chapters/01.qmd", [claim], FACTS)


def test_a_broken_claim_names_chapter_claim_sentence_and_figures():
    claim = Claim("drop", "the run loses reward", lambda F: F.end < F.start, lambda F: (F.start, F.end))
    with pytest.raises(ClaimError) as err:
        check("loop", "chapters/01.qmd", [claim], FACTS)
    assert str(err.value) == (
        "chapter 'loop' (chapters/01.qmd):\n  claim 'drop' does not hold: the run loses reward; saw (0.4, 0.6)"
    )


def test_a_claim_that_raises_is_a_broken_claim():
    claim = Claim("typo", "a fact that is not there", lambda F: F.ned > 0)
    assert "checking it raised AttributeError" in claim.failure(FACTS)


def test_claim_names_are_unique():
    claim = Claim("same", "x", lambda F: True)
    with pytest.raises(ValueError, match="twice"):
        check("loop", "p", [claim, claim], FACTS)
