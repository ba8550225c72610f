"""The TRL appendix's wording (chapters/appendix-trl.qmd), for its facts module (:mod:`rlbook.book.bridge`).

How the appendix says and shows what its runs did: a console transcript
folded to the page's code box, the logit difference of the GPT-2 copy, the
cross-check table and which trainer gained more on which seeds. Each reads
right whatever the outcome and never offers a zero as evidence;
``tests/unit/book/test_bridge.py`` tries them. Private to the appendix:
:func:`rlbook.book.topics` skips modules whose name starts with an
underscore.
"""

from __future__ import annotations

import textwrap

from rlbook.book import phrasing
from rlbook.book.facts import Num

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


def logits_phrase(gap: float) -> str:
    """What the largest logit difference between the policy and its GPT-2 copy says, as a verb phrase (appendix).

    No difference at all is said in words, never offered as a number of 0.
    """
    if gap == 0:
        return "give the same logits, bit for bit"
    return f"give logits that differ by at most {Num(gap, 'sci')}"


def crosscheck_rows(worst: dict) -> list[list[str]]:
    """The cross-check table: each quantity, and its largest difference over the run, or "none" where it is 0."""
    return [[f"`{name}`", "none" if value == 0 else f"{value:.1e}"] for name, value in worst.items()]


def who_gained_more(trl: list[float], book: list[float], seeds: tuple[int, ...]) -> str:
    """Which trainer's held-out gain was larger on which seeds, for the appendix's comparison (§ TRL against rlbook).

    "TRL's on seeds 0 and 1, `rlbook`'s on seed 2" when the seeds disagree,
    "TRL's on every seed" when they agree; a seed where the two gains are
    equal is named as such.
    """
    if not len(trl) == len(book) == len(seeds):
        raise ValueError(f"one gain per seed for each trainer: {len(trl)} and {len(book)} gains for {len(seeds)} seeds")
    return phrasing.by_side(trl, book, seeds, "TRL's", "`rlbook`'s", "neither")
