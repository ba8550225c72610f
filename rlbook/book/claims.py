"""A chapter's claims: each sentence the prose rests on, declared once as a check over the chapter's facts.

A facts module (:mod:`rlbook.book`) lists its claims in ``CLAIMS``. The page
checks them when it loads its facts, so a broken claim fails the build with
the chapter, the claim and the figures it saw; one parametrised test checks
every claim of every chapter on seeds 0 to 2; and ``rlbook claims`` checks
them all on another numerical draw (README, "Checking the claims on other
machines").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rlbook.book.facts import Facts


@dataclass(frozen=True)
class Claim:
    """One claim: a short ``name``, the sentence it protects (``says``), the check, and what to show if it fails.

    ``holds(F)`` is true when the chapter's facts ``F`` bear the sentence out;
    ``shows(F)`` gives the figures a reader of a failure needs, in one line.
    """

    name: str
    says: str
    holds: Callable[[Facts], Any]
    shows: Callable[[Facts], Any] | None = None

    def failure(self, facts: Facts) -> str | None:
        """None when the claim holds on ``facts``; otherwise one line saying what failed and the figures seen."""
        try:
            if self.holds(facts):
                return None
            seen = "" if self.shows is None else f"; saw {self.shows(facts)}"
        except Exception as err:  # noqa: BLE001 - a claim that cannot be evaluated is a broken claim
            seen = f"; checking it raised {type(err).__name__}: {err}"
        return f"claim {self.name!r} does not hold: {self.says}{seen}"


class ClaimError(AssertionError):
    """Claims of a chapter that its facts do not bear out: the chapter, then one line per claim."""


def check(topic: str, page: str, claims: Sequence[Claim], facts: Facts) -> None:
    """Raise :class:`ClaimError` naming the chapter and every claim of ``claims`` that ``facts`` break."""
    names = [c.name for c in claims]
    if len(set(names)) < len(names):
        raise ValueError(
            f"chapter {topic!r} declares a claim name twice: {sorted(n for n in names if names.count(n) > 1)}"
        )
    failures = [line for line in (c.failure(facts) for c in claims) if line]
    if failures:
        raise ClaimError(f"chapter {topic!r} ({page}):\n" + "\n".join(f"  {line}" for line in failures))
