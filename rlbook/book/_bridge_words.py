"""The TRL appendix's choices and displays (chapters/appendix-trl.qmd), for its facts module (:mod:`rlbook.book.bridge`).

How the appendix shows what its runs did: a console transcript folded to the
page's code box, the cross-check table and the notes of its translation
tables (:func:`times`); and the choices
(:func:`rlbook.book.wording.choice`) of its sentences whose form follows the
runs, which the page words case by case with ``say``: the logit difference
of the GPT-2 copy, where TRL's policy ends against ``rlbook``'s, and which
trainer gained more on which seeds, and whether their ranges of gains overlap. Each picks its case whatever the
outcome and never offers a zero as evidence;
``tests/unit/book/test_bridge.py`` tries them. Private to the appendix:
:func:`rlbook.book.topics` skips modules whose name starts with an
underscore.
"""

from __future__ import annotations

import re
import textwrap

from rlbook.book import phrasing
from rlbook.book.facts import Num
from rlbook.book.wording import choice

TIMES = re.compile(r"(?<=\S) x (?=\S)")
"""The letter x standing between two operands, as the notes of :mod:`rlbook.trl.translation` write a product."""


def times(note: str) -> str:
    """A note of :mod:`rlbook.trl.translation` as the appendix's tables show it: each product written with the
    multiplication sign, as the book writes formulas ("-A x logp" becomes "-A × logp")."""
    return TIMES.sub(" × ", note)


WIDTH = 78
"""The widest line of a console transcript the appendix prints: a page's code box shows 80 characters."""


def console(command: str, lines: list[str], width: int = WIDTH) -> str:
    """A command and what it printed, as a terminal shows them, folded to ``width`` characters (appendix).

    The command is broken before an option, never between an option and
    its value, with a shell's ``\\``, so it still runs when copied; a long
    printed line wraps with an indent.
    """
    groups: list[str] = []
    for word in command.split(" "):
        if groups and not word.startswith("-"):
            groups[-1] += " " + word
        else:
            groups.append(word)
    shown = ["$"]
    for group in groups:
        if len(shown[-1]) + 1 + len(group) > width - 2:
            shown[-1] += " \\"
            shown.append("   ")
        shown[-1] += " " + group
    printed = [textwrap.fill(line, width, subsequent_indent="  ") for line in lines]
    return "\n".join(shown + printed)


LOGITS = ("same", "differ")
"""The cases of :func:`logits`: the policy and its GPT-2 copy give the same logits, or logits that differ."""


def logits(gap: float) -> dict:
    """The largest logit difference between the policy and its GPT-2 copy (appendix): none at all, or its bound.

    No difference at all is a case of its own, never offered as a number of 0.
    """
    if gap == 0:
        return choice("same", LOGITS)
    return choice("differ", LOGITS, gap=Num(gap, "sci"))


LEVEL = 0.005
"""How close two held-out rewards of the appendix's trainers must be for :func:`order` to call them level."""

ORDER = ("above", "below", "level")
"""The cases of :func:`order`: TRL's policy ends above ``rlbook``'s, below it, or level with it (:data:`LEVEL`)."""


def order(trl_end: float, book_end: Num) -> dict:
    """Where TRL's held-out reward ends against ``rlbook``'s ``book_end`` on the shown seed (appendix)."""
    return choice(phrasing.direction(trl_end, book_end, LEVEL, ORDER), ORDER, book_end=book_end)


def crosscheck_rows(worst: dict) -> list[list[str]]:
    """The cross-check table: each quantity, and its largest difference over the run, or "none" where it is 0."""
    return [[f"`{name}`", "none" if value == 0 else f"{value:.1e}"] for name, value in worst.items()]


LARGER = ("trl", "book", "neither", "trl_book", "trl_neither", "book_neither", "trl_book_neither")
"""The cases of :func:`larger`: on which sides the seeds fall, TRL's gain larger, ``rlbook``'s larger, or neither
(the gains equal), joined in that order."""


def larger(trl: list[float], book: list[float], seeds: tuple[int, ...]) -> dict:
    """Which trainer's held-out gain was larger on which seeds, for the appendix's comparison (§ TRL against rlbook).

    The case names the sides that hold a seed, and the values the seeds of
    each ("seeds 0 and 1", "every seed"); a seed where the two gains are
    equal is on the side ``neither``. ValueError unless each trainer has one
    gain per seed.
    """
    if not len(trl) == len(book) == len(seeds):
        raise ValueError(f"one gain per seed for each trainer: {len(trl)} and {len(book)} gains for {len(seeds)} seeds")
    sides = {
        "trl": [s for s, a, b in zip(seeds, trl, book) if a > b],
        "book": [s for s, a, b in zip(seeds, trl, book) if a < b],
        "neither": [s for s, a, b in zip(seeds, trl, book) if a == b],
    }
    found = {side: phrasing.seeds(where, seeds) for side, where in sides.items() if where}
    return choice("_".join(found), LARGER, **found)


RANGES = ("overlap", "trl_above", "book_above")
"""The cases of :func:`ranges`: the trainers' ranges of held-out gains over the seeds overlap, or TRL's lies wholly
above ``rlbook``'s, or ``rlbook``'s above TRL's."""


def ranges(trl: list[float], book: list[float]) -> dict:
    """Whether the two trainers' held-out gains over the seeds overlap as ranges, or one range lies above the other
    (the appendix's comparison, § TRL against rlbook)."""
    if min(trl) > max(book):
        return choice("trl_above", RANGES)
    if min(book) > max(trl):
        return choice("book_above", RANGES)
    return choice("overlap", RANGES)
