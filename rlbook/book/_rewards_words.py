"""Chapter 2's outcome-dependent choices, for its facts module (:mod:`rlbook.book.rewards`).

The choices (:func:`rlbook.book.wording.choice`) of the sentences of
chapters/02-outcome-process-rewards.qmd whose form follows the runs, which
the page words case by case: a share said as "every one" only when it is
all, a count of zero said in words, a cell of the disagreement matrix
described by what the samples put in it, and the seeds on which a measure
went up or down. Each selector picks its case and values whatever the
outcome and never offers a degenerate quantity as evidence;
``tests/unit/book/test_rewards.py`` tries each on every outcome. Private to
the chapter: :func:`rlbook.book.topics` skips modules whose name starts with
an underscore.
"""

from __future__ import annotations

from typing import Any

from rlbook.book import _sides, phrasing
from rlbook.book._shown import shown_seed
from rlbook.book.facts import Num
from rlbook.book.wording import choice

HOW_MANY = ("every", "almost_every", "share")
"""The cases of a share said as how many (:func:`how_many`): all, all but a few that round away, or a percentage."""


def how_many(share: float) -> dict[str, Any]:
    """How much of a whole ``share`` is: every one of it, almost every one (it rounds to 100 %), or its percentage.

    Chapter 2 says so of the pretrained policy's rejections that fail on
    format and of the plain sums ``process-base``'s parent knows.
    """
    case = "every" if share == 1.0 else "almost_every" if f"{share:.0%}" == "100%" else "share"
    return choice(case, HOW_MANY, share=Num(share, ".0%"))


EARNS = ("nothing", "some")
"""The cases of what the pretrained checkpoint earned (:func:`pretrained_reward`): no accepted answer, or a few."""


def pretrained_reward(row: dict) -> dict[str, dict[str, Any]]:
    """What the pretrained checkpoint earned, as two choices of one case: ``earns``, and its ``detail`` with the counts.

    Where no answer was accepted, the detail holds no count of them, so that
    no wording offers a zero as a count.
    """
    if row["accepted"] == 0:
        return {
            "earns": choice("nothing", EARNS),
            "detail": choice("nothing", EARNS, samples=Num(row["samples"], ",.0f")),
        }
    counts = {
        "accepted": Num(row["accepted"], ",.0f"),
        "samples": Num(row["samples"], ",.0f"),
        "reward": Num(row["expected_reward"]),
    }
    return {"earns": choice("some", EARNS), "detail": choice("some", EARNS, **counts)}


VALID_END = ("empty", "elsewhere", "shown", "shown_third")
"""The cases of the cell "every step valid, but no reward" (:func:`valid_end`): empty on every seed; empty in the
shown sample only; filled in the shown sample, without or with answers that wrote a third number."""


def valid_end(by_seed: dict, seeds: tuple[int, ...]) -> dict[str, Any]:
    """What the book's samples put in the cell "every step valid, but no reward", seed by seed.

    The shown sample's count and its malformed and budget-stopped parts
    where it holds rollouts; otherwise the seeds whose samples fill the cell,
    or that every seed leaves it empty.
    """
    sizes = {s: by_seed[s]["valid_end"]["malformed"] + by_seed[s]["valid_end"]["incomplete"] for s in seeds}
    filled = [s for s in seeds if sizes[s]]
    if not filled:
        return choice("empty", VALID_END, seeds=phrasing.seeds(seeds, seeds))
    shown, size = by_seed[shown_seed(seeds)]["valid_end"], sizes[shown_seed(seeds)]
    if not size:
        return choice("elsewhere", VALID_END, filled=phrasing.seeds(filled, seeds))
    counts = {
        "rollouts": phrasing.number_word(size),
        "malformed": shown["malformed"],
        "incomplete": shown["incomplete"],
    }
    if not shown["extra_number"]:
        return choice("shown", VALID_END, **counts)
    return choice("shown_third", VALID_END, **counts, third=phrasing.share(shown["extra_number"], size))


BROKEN_END = ("empty", "filled")
"""The cases of :func:`broken_end`: the cell "every step valid, but no reward" is empty on every seed, or not."""


def broken_end(by_seed: dict, seeds: tuple[int, ...]) -> dict[str, Any]:
    """Whether any seed's sample fills the cell "every step valid, but no reward", and which, for chapter 2's summary.

    The summary lists the cells where the two judges disagree on real
    rollouts; a cell no seed filled is left out of that list.
    """
    filled = [s for s in seeds if by_seed[s]["valid_end"]["malformed"] + by_seed[s]["valid_end"]["incomplete"]]
    if not filled:
        return choice("empty", BROKEN_END)
    return choice("filled", BROKEN_END, filled=phrasing.seeds(filled, seeds))


REFUSE = ("none", "some")
"""The cases of :func:`refuse_malformed`: no malformed rollout of the shown sample earned step credit, or some did."""


def refuse_malformed(count: int) -> dict[str, Any]:
    """What refusing to read steps from a malformed answer would move in chapter 2's shown sample.

    ``count`` is the number of malformed rollouts that earned step credit,
    each of which the refusal would send to the column of no valid step;
    where there are none the rule moves nothing, and no wording offers the
    zero.
    """
    if not count:
        return choice("none", REFUSE)
    return choice("some", REFUSE, malformed=phrasing.number_word(count))


DRIFT = (*_sides.cases(("up", "down")), "level")
"""The cases of :func:`directions`: the seeds that ended up, down, or both; or every seed level."""


def directions(starts: list[float], ends: list[float], seeds: tuple[int, ...]) -> dict[str, Any]:
    """Which seeds ended above their start and which below ("up on seeds 0 and 1 and down on seed 2").

    A seed that ended level is named only when every seed did.
    """
    up = [s for s, a, b in zip(seeds, starts, ends) if b > a]
    down = [s for s, a, b in zip(seeds, starts, ends) if b < a]
    if not up and not down:
        return choice("level", DRIFT, level=phrasing.seeds(seeds, seeds))
    return _sides.grouped({"up": up, "down": down}, seeds, DRIFT)


BARELY = 0.05
"""How far the mean step validity may move for chapter 2 to say the outcome-only runs barely moved it."""
MOVE = ("barely", "moved")
"""The cases of :func:`move`: the outcome-only runs' mean step validity moved by less than :data:`BARELY`, or not."""


def move(start: float, end: float) -> dict[str, Any]:
    """Whether the outcome-only runs' mean step validity, ``start`` to ``end``, moved by less than :data:`BARELY`
    either way (chapter 2, "Outcome against process"; a finding: on some draws it moved more)."""
    return choice("barely" if abs(end - start) < BARELY else "moved", MOVE, start=Num(start), end=Num(end))
