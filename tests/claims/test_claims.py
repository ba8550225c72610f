"""Every chapter's laws, each declared once in its facts module (rlbook.book), hold on seeds 0, 1 and 2.

One test per law: a failure names the chapter, the law, what it checks and
the figures it saw. Findings are what this build's runs did: they are judged
too, so that a finding that cannot be evaluated (a typo in its check) fails
here, but a finding that did not hold only changes its sentence's words.
The same judgement runs when a page loads its facts, and ``rlbook claims
--seeds 0-9`` audits every claim on more seeds and draws (ROBUSTNESS.md).
"""

from __future__ import annotations

import functools

import pytest

from rlbook import book
from rlbook.book import claims
from rlbook.book._available import available_topics

# Facts that need a missing extra (the TRL appendix's without the trl extra) are left out, as the build leaves
# out their page.
CLAIMS = [(topic, claim) for topic in available_topics() for claim in book.chapter(topic).CLAIMS]
LAWS = [(topic, claim) for topic, claim in CLAIMS if claim.kind == "law"]
FINDINGS = [(topic, claim) for topic, claim in CLAIMS if claim.kind == "finding"]


@functools.cache
def facts(topic: str):
    return book.load(topic, book.SEEDS, check=False)


@pytest.mark.parametrize(("topic", "claim"), LAWS, ids=[f"{t}:{c.name}" for t, c in LAWS])
def test_law_holds_on_seeds_0_to_2(topic, claim):
    failure = claim.failure(facts(topic))
    assert failure is None, f"chapter {topic!r}: {failure}"


@pytest.mark.parametrize(("topic", "claim"), FINDINGS, ids=[f"{t}:{c.name}" for t, c in FINDINGS])
def test_finding_can_be_judged(topic, claim):
    failure = claim.failure(facts(topic)) or ""
    assert "checking it raised" not in failure, f"chapter {topic!r}: {failure}"
    if isinstance(claim.holds, claims.Every):
        assert set(claim.by_seed(facts(topic))) == set(book.SEEDS)
