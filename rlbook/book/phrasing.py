"""Words for outcomes: how many seeds, which ones, a range, a direction (every chapter's facts).

A chapter's prose must say what its runs show, and some of that wording
depends on the outcome: "every seed" or "seeds 0 and 2", a range or a single
value, "above" or "below". The facts modules (:mod:`rlbook.book`) build such
phrases with these helpers, so that a page never chooses its words with
if/else, and no phrase ever offers a degenerate quantity: an empty list is
"none", a range whose ends agree is one value, a list never repeats itself.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve")
"""Small whole numbers as words: prose says "three seeds", not "3 seeds"."""


def number_word(n: int) -> str:
    """``n`` as a word up to twelve ("three"), as digits beyond (13, 1,024)."""
    if n < 0:
        raise ValueError(f"a count is never negative, got {n}")
    return WORDS[n] if n < len(WORDS) else f"{n:,}"


def listing(items: Sequence[object], conjunction: str = "and") -> str:
    """``items`` joined for a sentence: "a", "a and b", "a, b and c"; ValueError when empty or repeated."""
    texts = [str(item) for item in items]
    if not texts:
        raise ValueError("an empty list has no phrase: say what is absent instead")
    if len(set(texts)) < len(texts):
        raise ValueError(f"a listing repeats itself: {texts}")
    return texts[0] if len(texts) == 1 else f"{', '.join(texts[:-1])} {conjunction} {texts[-1]}"


def in_order(values: Sequence[object]) -> str:
    """Values of the seeds in seed order, joined for a sentence ("0.40, 0.47 and 0.47"): repeats are kept,
    since two seeds may end at the same value (chapter 4's KL finals); ValueError when empty."""
    texts = [str(v) for v in values]
    if not texts:
        raise ValueError("an empty list has no phrase: say what is absent instead")
    return texts[0] if len(texts) == 1 else f"{', '.join(texts[:-1])} and {texts[-1]}"


def seeds(where: Sequence[int], of: Sequence[int], noun: str = "seed") -> str:
    """Which of the seeds ``of`` a statement holds on: "every seed", "seeds 0 and 2", "none of the three seeds".

    ``where`` must be a subset of ``of``. A single seed in all is named
    ("seed 0"); several, all of them, are "every seed".
    """
    where, of = sorted(set(where)), sorted(set(of))
    if not set(where) <= set(of):
        raise ValueError(f"seeds {where} are not all among {of}")
    if not where:
        return f"none of the {number_word(len(of))} {noun}s" if len(of) > 1 else f"not {noun} {of[0]}"
    if where == of and len(of) > 1:
        return f"every {noun}"
    return f"{noun} {where[0]}" if len(where) == 1 else f"{noun}s {listing(where)}"


def share(k: int, n: int, noun: str = "") -> str:
    """``k`` of ``n`` in words: "all three", "two of the three", "one of the three", "none of the three"."""
    if not 0 <= k <= n:
        raise ValueError(f"{k} of {n} is not a share")
    tail = f" {noun}" if noun else ""
    if n == 1:
        return ("the one" if k else "not the one") + tail
    if k == n:
        return f"all {number_word(n)}{tail}"
    if k == 0:
        return f"none of the {number_word(n)}{tail}"
    return f"{number_word(k)} of the {number_word(n)}{tail}"


def span(values: Sequence[float], fmt: str | Callable[[float], str] = ".2f", dash: str = "–") -> str:
    """The range of ``values`` as text, "0.48–0.55"; one value when both ends read the same ("0.50")."""
    if not values:
        raise ValueError("an empty list has no range")
    show = fmt if callable(fmt) else (lambda x: format(x, fmt))
    low, high = show(min(values)), show(max(values))
    return low if low == high else f"{low}{dash}{high}"


def direction(
    value: float,
    reference: float,
    tolerance: float = 0.0,
    words: tuple[str, str, str] = ("above", "below", "level with"),
) -> str:
    """Where ``value`` lies against ``reference``: "above", "below", or "level with" within ``tolerance``."""
    if abs(value - reference) <= tolerance:
        return words[2]
    return words[0] if value > reference else words[1]


def by_side(
    values: Sequence[float],
    references: Sequence[float],
    of: Sequence[int],
    above: str,
    below: str,
    level: str | None = None,
    joiner: str = ", ",
) -> str:
    """The seeds ``of`` grouped by where ``values`` lies against ``references``, seed by seed, in words.

    "<above> on seeds 0 and 1, <below> on seed 2": ``above`` where the value
    is larger, ``below`` where smaller, ``level`` where equal (with ``level``
    None, equal seeds go with ``below``); a side with no seed is left out.
    Used wherever a page says a comparison seed by seed because it differs
    across seeds or draws (chapters 7 and 8, the TRL appendix).
    """
    if not len(values) == len(references) == len(of):
        raise ValueError(f"one value per seed: {len(values)} values and {len(references)} references, {len(of)} seeds")
    groups: dict[str, list[int]] = {above: [], below: []}
    if level is not None:
        groups[level] = []
    for seed, value, reference in zip(of, values, references):
        side = above if value > reference else level if value == reference and level is not None else below
        groups[side].append(seed)
    return joiner.join(f"{word} on {seeds(where, of)}" for word, where in groups.items() if where)


def approximately(x: float) -> str:
    """A large number to one significant figure, in words where that reads better: "about two million".

    Used where a count is an order of magnitude, such as one sample in about
    two million; under ten thousand it keeps two significant figures in
    digits ("about 8,300").
    """
    if not math.isfinite(x) or x <= 0:
        raise ValueError(f"{x} has no approximate size")
    for size, name in ((1e12, "trillion"), (1e9, "billion"), (1e6, "million")):
        if x >= size:
            lead = round(x / size, -math.floor(math.log10(x / size)))
            lead_text = number_word(int(lead)) if lead == int(lead) else f"{lead:g}"
            return f"about {lead_text} {name}"
    digits = math.floor(math.log10(x))
    rounded = round(x, 1 - digits) if x >= 10 else round(x, 1)
    return f"about {rounded:,.0f}" if rounded >= 10 else f"about {rounded:g}"
