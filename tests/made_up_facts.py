"""Made-up facts for the tests of a chapter's claims: one seed's outcome copied onto every seed, one seed changed,
and each claim's verdict seed by seed (tests/unit/book/test_recipe.py, test_preference.py, test_process.py)."""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence

from rlbook.book.claims import Claim
from rlbook.book.facts import Facts, freeze


def facts_of(seed: dict, seeds: Sequence[int], change: Callable[[dict], None] | None = None) -> Facts:
    """Facts whose every seed holds a copy of ``seed``; ``change`` edits seed 1's copy (the one a claim should fail
    on)."""
    by_seed = {s: copy.deepcopy(seed) for s in seeds}
    if change:
        change(by_seed[1])
    return freeze({"seeds": list(seeds), "by_seed": by_seed})


def verdicts(claims: Sequence[Claim], facts: Facts) -> dict[str, dict[int, bool] | None]:
    """Each claim's verdict on each seed of ``facts``, by name."""
    return {c.name: c.by_seed(facts) for c in claims}
