"""Chapter 7's outcome-dependent numbers and choices, for its facts module (:mod:`rlbook.book.working`).

What the prose of chapters/07-written-working.qmd reads from ``F.phrases``
(:func:`phrases`): the values of the seed it follows
(:func:`rlbook.book._shown.shown_seed`) and the ranges over seeds it
prints, and the choices
(:func:`rlbook.book.wording.choice`) of the sentences whose form follows
the runs, which the page words case by case: what ``worked``'s accuracy did
over RL, how its gain splits between the switch of style and execution, how
it ended against the control ``worked-direct``, and what
``worked-rediscover`` did, whose seeds can part ways (:func:`rediscovery`), and
the lesson the page draws from it (``rediscovery_lesson``, the same choice).
Each selector picks its case and values whatever the outcome and never
offers a degenerate quantity as evidence; ``tests/unit/book/test_working.py``
tries each on made-up outcomes. Private to the chapter:
:func:`rlbook.book.topics` skips modules whose name starts with an
underscore.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rlbook.book import _sides, phrasing
from rlbook.book._shown import shown_seed
from rlbook.book.facts import Num
from rlbook.book.wording import choice

TAKEOVER = 0.5
"""The held-out share of worked answers at or above which the chapter says they became a run's majority."""


def _range(values, fmt: str | Callable[[float], str] = ".2f", dash: str = "–") -> str:
    """The range of ``values`` over seeds, as text (one value when both ends read the same)."""
    return phrasing.span([float(v) for v in values], fmt, dash)


def percent_format(x: float) -> str:
    """The format of a share as a percentage: to a tenth of a percent under 10 % ("0.5%"), to a whole percent above
    ("88%")."""
    return ".1%" if x < 0.1 else ".0%"


def percent(x: float) -> str:
    """A share as a percentage, in :func:`percent_format`."""
    return format(x, percent_format(x))


def _move(before: float, after: float) -> str:
    """One seed's change of a share, as "4.0% to 88%"."""
    return f"{percent(before)} to {percent(after)}"


def _moves(shares: dict[int, tuple[float, float]], where: list[int]) -> str:
    """How the share moved on the seeds ``where``, as values: "4.0% to 88%" for one seed (which the sentence names
    just before), "seed 0: 26% to 98%; seed 1: 23% to 97%" for several."""
    if len(where) == 1:
        return _move(*shares[where[0]])
    return "; ".join(f"seed {s}: {_move(*shares[s])}" for s in where)


REDISCOVERY = _sides.cases(("majority", "minority"))
"""The cases of :func:`rediscovery`: worked answers became the majority on every seed, stayed a minority on every
seed, or the seeds parted ways."""


def rediscovery(
    shares: dict[int, tuple[float, float]], seeds: tuple[int, ...], takeover: float = TAKEOVER
) -> dict[str, Any]:
    """What ``worked-rediscover`` did: the seeds where worked answers became the majority and those where they did
    not, each with how its share moved.

    ``shares`` maps each seed to its held-out share of worked answers before
    and after RL; worked answers became the majority where the share ended at
    or above ``takeover``.
    """
    took = [s for s in seeds if shares[s][1] >= takeover]
    rest = [s for s in seeds if s not in took]
    moves = {
        f"{name}_moves": _moves(shares, where) for name, where in (("majority", took), ("minority", rest)) if where
    }
    return _sides.grouped({"majority": took, "minority": rest}, seeds, **moves)


AHEAD = ("above", "below", "above_its_seed", "below_its_seed", "mixed")
"""The cases of :func:`ahead`: ``worked`` ended above the control on every seed, or below it, each said of one
seed or of several; or above on some seeds and not on others."""


def ahead(worked: list[float], control: list[float]) -> dict[str, Any]:
    """Where ``worked``'s final held-out accuracy ended against the control's, seed by seed: the range of its lead
    where it led on every seed (or trailed on every seed), the lowest and highest difference otherwise."""
    gaps = [round(w, 2) - round(c, 2) for w, c in zip(worked, control)]  # as the tables print them
    side = "above" if min(gaps) > 0 else "below" if max(gaps) < 0 else None
    if side is None:
        return choice("mixed", AHEAD, low=Num(min(gaps), "+.2f"), high=Num(max(gaps), "+.2f"))
    case = side if len(gaps) > 1 else f"{side}_its_seed"
    return choice(case, AHEAD, lead=_range([abs(g) for g in gaps]))


LEVEL = 0.02
"""A change in held-out accuracy smaller than this is "level" in the chapter's words (a few sums of 300)."""

CHANGE_SIDES = ("rose", "fell", "level")
"""The ways a seed's accuracy can move over RL (:func:`change_by_seed`): it rose, fell, or held level."""
CHANGE = _sides.cases(CHANGE_SIDES)
"""The cases of :func:`change_by_seed` and :func:`accuracy_change`: the combinations of those ways that hold a
seed."""


def _changes(before: list[float], after: list[float], seeds: tuple[int, ...], tolerance: float) -> dict:
    """The seeds by which way a quantity moved from ``before`` to ``after``, a move within ``tolerance`` level."""
    groups: dict[str, list[int]] = {way: [] for way in CHANGE_SIDES}
    for s, b, a in zip(seeds, before, after):
        groups[phrasing.direction(a, b, tolerance, CHANGE_SIDES)].append(s)
    return groups


def change_by_seed(
    before: list[float], after: list[float], seeds: tuple[int, ...], tolerance: float = LEVEL
) -> dict[str, Any]:
    """Which way a quantity moved on each seed, grouped ("fell on seeds 0 and 1 and held level on seed 2")."""
    return _sides.grouped(_changes(before, after, seeds, tolerance), seeds)


def accuracy_change(
    before: list[float], after: list[float], seeds: tuple[int, ...], tolerance: float = LEVEL
) -> dict[str, Any]:
    """What ``worked``'s held-out accuracy did over RL: the case ``rose`` where it rose on every seed, otherwise
    which seeds it rose, fell or held level on; with its value before and after on the seed the page follows
    (``seed``)."""
    shown = seeds.index(shown_seed(seeds))
    moved: dict[str, Any] = {"seed": seeds[shown], "before": Num(before[shown]), "after": Num(after[shown])}
    return _sides.grouped(_changes(before, after, seeds, tolerance), seeds, **moved)


PART_SIDES = ("added", "took", "nothing")
"""What one part of a split gain did on a seed (:func:`part`): added to accuracy, took some away, or changed
nothing."""
PART = _sides.cases(PART_SIDES)
"""The cases of :func:`part`: the combinations of those that hold a seed."""


def part(values: list[float], seeds: tuple[int, ...]) -> dict[str, Any]:
    """What one part of a split gain did over the seeds: where it added to accuracy, where it took some away, and
    where it changed nothing, with its range over seeds (``span``, "+0.10 to +0.12")."""
    groups = _sides.sides(values, [0.0] * len(values), seeds, PART_SIDES)
    return _sides.grouped(groups, seeds, span=phrasing.span(list(values), _signed, " to "))


def _signed(x: float) -> str:
    """A signed change to two decimals, three where two would print a change as +0.00 or -0.00, and 0 for none."""
    if x == 0:
        return "0"
    return f"{x:+.3f}" if abs(x) < 0.005 else f"{x:+.2f}"


SHARE_SIDES = ("below", "above")
"""Where ``worked-rediscover``'s share ended against ``worked``'s on a seed (:func:`against_worked`): below it, or
level with or above it."""
SHARE_VS = _sides.cases(SHARE_SIDES)
"""The cases of :func:`against_worked`: the combinations of those that hold a seed."""


def against_worked(again: list[float], worked: list[float], seeds: tuple[int, ...]) -> dict[str, Any]:
    """How a quantity of ``worked-rediscover`` compares with ``worked``'s, seed by seed: the seeds where it is
    smaller (``below``), and the others (``above``, level included)."""
    return _sides.grouped(_sides.sides(worked, again, seeds, SHARE_SIDES), seeds)


WEIGHT_SIDES = ("execution", "switch", "same")
"""Which part of ``worked``'s split gain was the larger on a seed (:func:`weights`), or that they were equal."""
WEIGHTS = ("times", *_sides.cases(WEIGHT_SIDES))
"""The cases of :func:`weights`: ``times`` where execution added more than a positive switch on every seed, with
how many times as much; otherwise the combinations of :data:`WEIGHT_SIDES` that hold a seed."""


def weights(switch: list[float], execution: list[float], seeds: tuple[int, ...]) -> dict[str, Any]:
    """Which part of the split gain was the larger, seed by seed, and by how much where execution led on every seed
    and the switch added something."""
    made = _sides.grouped(_sides.sides(execution, switch, seeds, WEIGHT_SIDES), seeds, WEIGHTS)
    if all(e > w > 0 for w, e in zip(switch, execution)):
        times = phrasing.span([e / w for w, e in zip(switch, execution)], ".1f", " to ")
        return choice("times", WEIGHTS, **made["values"], times=times)
    return made


def run_rows(by_seed: dict, seeds: tuple[int, ...], name: str) -> list[dict]:
    """Run ``name``'s before-and-after row on each of ``seeds``, in order (the prose and the tables of chapter 7)."""
    return [by_seed[s]["rows"][name] for s in seeds]


def _share(x: float) -> Num:
    """A share as :func:`percent` prints it, as a number."""
    return Num(x, percent_format(x))


def on_seed(worked: dict, control: dict, again: dict) -> dict[str, Num]:
    """The values the prose gives for the seed the page follows, each formatted as the ranges over seeds were, from
    each run's row on that seed: ``worked``'s share of worked answers, mean length and style-choice entropy before
    and after RL, its probability of a worked answer after RL and each style's accuracy; the control's accuracy and
    style-choice entropy; ``worked-rediscover``'s share and each style's accuracy before RL, its accuracy before and
    after, and the edge of a worked answer before RL under it and under ``worked``."""
    return {
        "share_before": _share(worked["share_before"]),
        "share_after": _share(worked["share_after"]),
        "length_before": Num(worked["length_before"], ".1f"),
        "length_after": Num(worked["length_after"], ".1f"),
        "style_entropy_before": Num(worked["style_entropy_before"]),
        "style_entropy_after": Num(worked["style_entropy_after"]),
        "p_worked_after": _share(worked["p_worked_after"]),
        "worked_right_before": Num(worked["accuracy_worked_before"]),
        "worked_right_after": Num(worked["accuracy_worked_after"]),
        "direct_right_before": Num(worked["accuracy_direct_before"]),
        "control_accuracy_before": Num(control["accuracy_before"]),
        "control_accuracy_after": Num(control["accuracy_after"]),
        "control_style_entropy_before": Num(control["style_entropy_before"]),
        "control_style_entropy_after": Num(control["style_entropy_after"]),
        "again_share_before": _share(again["share_before"]),
        "again_worked_right_before": Num(again["accuracy_worked_before"]),
        "again_direct_right_before": Num(again["accuracy_direct_before"]),
        "again_edge": Num(again["working_pays_before"], "+.2f"),
        "worked_edge": Num(worked["working_pays_before"], "+.2f"),
        "again_accuracy_before": Num(again["accuracy_before"]),
        "again_accuracy_after": Num(again["accuracy_after"]),
    }


def phrases(by_seed: dict, seeds: tuple[int, ...]) -> dict:
    """The values of the followed seed, the ranges over seeds, and the choices of the prose."""
    worked, control = run_rows(by_seed, seeds, "worked"), run_rows(by_seed, seeds, "worked-direct")
    again = run_rows(by_seed, seeds, "worked-rediscover")
    shown = seeds.index(shown_seed(seeds))
    out: dict[str, Any] = {
        "on_seed": on_seed(worked[shown], control[shown], again[shown]),
        "control_share_before": _range([r["share_before"] for r in control], percent),
        "control_share_after": _range([r["share_after"] for r in control], percent),
    }
    out["accuracy_change"] = accuracy_change(
        [r["accuracy_before"] for r in worked], [r["accuracy_after"] for r in worked], seeds
    )
    out["switch"] = part([r["gain_from_switch"] for r in worked], seeds)
    out["execution"] = part([r["gain_from_execution"] for r in worked], seeds)
    out["ahead"] = ahead([r["accuracy_after"] for r in worked], [r["accuracy_after"] for r in control])
    out["control_change"] = change_by_seed(
        [r["accuracy_before"] for r in control], [r["accuracy_after"] for r in control], seeds
    )
    out["execution_vs_switch"] = weights(
        [r["gain_from_switch"] for r in worked], [r["gain_from_execution"] for r in worked], seeds
    )
    out["again_share_vs"] = against_worked([r["share_after"] for r in again], [r["share_after"] for r in worked], seeds)
    out["rediscovery"] = rediscovery({s: (r["share_before"], r["share_after"]) for s, r in zip(seeds, again)}, seeds)
    out["rediscovery_lesson"] = out["rediscovery"]  # the lesson the page draws from it, worded case by case
    return out
