"""Every chapter's claims, each declared once in its facts module (rlbook.book), hold on seeds 0, 1 and 2.

One test per claim: a failure names the chapter, the claim, the sentence it
protects and the figures it saw. The same checks run when a page loads its
facts during the build, and ``rlbook claims`` runs them on another numerical
draw (README, "Checking the claims on other machines").
"""

from __future__ import annotations

import functools

import pytest

from rlbook import book
from rlbook.book._available import available_topics

# Facts that need a missing extra (the TRL appendix's without the trl extra) are left out, as the build leaves
# out their page.
CLAIMS = [(topic, claim) for topic in available_topics() for claim in book.chapter(topic).CLAIMS]


@functools.cache
def facts(topic: str):
    return book.load(topic, book.SEEDS, check=False)


@pytest.mark.parametrize(("topic", "claim"), CLAIMS, ids=[f"{t}:{c.name}" for t, c in CLAIMS])
def test_claim_holds_on_seeds_0_to_2(topic, claim):
    failure = claim.failure(facts(topic))
    assert failure is None, f"chapter {topic!r}: {failure}"
