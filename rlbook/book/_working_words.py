"""Chapter 7's outcome-dependent wording, for its facts module (:mod:`rlbook.book.working`).

The sentences and ranges over seeds the prose of
chapters/07-written-working.qmd reads from ``F.phrases`` (:func:`phrases`):
what ``worked``'s share of worked answers, length and accuracy did over RL,
how its gain splits between the switch of style and execution, how it ended
against the control ``worked-direct``, and what ``worked-rediscover`` did,
whose seeds can part ways (:func:`rediscovery`). Each helper reads right
whatever the outcome and never offers a degenerate quantity as evidence;
``tests/unit/book/test_working.py`` tries each on made-up outcomes. Private
to the chapter: :func:`rlbook.book.topics` skips modules whose name starts
with an underscore.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from rlbook.book import phrasing

TAKEOVER = 0.5
"""The held-out share of worked answers at or above which the chapter says they became a run's majority."""


def _range(values, fmt: str | Callable[[float], str] = ".2f", dash: str = "–") -> str:
    """The range of ``values`` over seeds, as text (one value when both ends read the same)."""
    return phrasing.span([float(v) for v in values], fmt, dash)


def percent(x: float) -> str:
    """A share as a percentage: to a tenth of a percent under 10 % ("0.5%"), to a whole percent above ("88%")."""
    return format(x, ".1%" if x < 0.1 else ".0%")


def _move(before: float, after: float) -> str:
    """One seed's change of a share, as "4.0% to 88%"."""
    return f"{percent(before)} to {percent(after)}"


def rediscovery(shares: dict[int, tuple[float, float]], seeds: tuple[int, ...], takeover: float = TAKEOVER) -> str:
    """What ``worked-rediscover`` did, as one sentence: where worked answers became the majority, where not.

    ``shares`` maps each seed to its held-out share of worked answers before
    and after RL; worked answers became the majority where the share ended at
    or above ``takeover``. Where the seeds part ways, the sentence says so, once.
    """
    took = [s for s in seeds if shares[s][1] >= takeover]
    rest = [s for s in seeds if s not in took]

    def moves(where: list[int]) -> str:
        if len(where) == 1:  # the seed is named just before
            return _move(*shares[where[0]])
        return "; ".join(f"seed {s}: {_move(*shares[s])}" for s in where)

    if not rest:
        return f"Worked answers became the majority on {phrasing.seeds(took, seeds)} ({moves(took)})."
    if not took:
        return f"Worked answers stayed a minority on {phrasing.seeds(rest, seeds)} ({moves(rest)})."
    return (
        f"The seeds parted ways: worked answers became the majority on {phrasing.seeds(took, seeds)} "
        f"({moves(took)}) and stayed a minority on {phrasing.seeds(rest, seeds)} ({moves(rest)})."
    )


def ahead(worked: list[float], control: list[float]) -> str:
    """Where ``worked``'s final held-out accuracy ended against the control's, seed by seed, as a predicate."""
    gaps = [round(w, 2) - round(c, 2) for w, c in zip(worked, control)]  # as the tables print them
    side = "above" if min(gaps) > 0 else "below" if max(gaps) < 0 else None
    if side is None:
        return f"ended between {min(gaps):+.2f} and {max(gaps):+.2f} against the control, depending on the seed"
    each = "on each seed" if len(gaps) > 1 else "on its seed"
    return f"ended {_range([abs(g) for g in gaps])} {side} the control {each}"


LEVEL = 0.02
"""A change in held-out accuracy smaller than this is "level" in the chapter's words (a few sums of 300)."""


def change_by_seed(before: list[float], after: list[float], seeds: tuple[int, ...], tolerance: float = LEVEL) -> str:
    """Which way a quantity moved on each seed, grouped: "fell on seeds 0 and 1 and held level on seed 2"."""
    words: dict[str, list[int]] = {"rose": [], "fell": [], "held level": []}
    for s, b, a in zip(seeds, before, after):
        words[phrasing.direction(a, b, tolerance, ("rose", "fell", "held level"))].append(s)
    parts = [f"{word} on {phrasing.seeds(where, seeds)}" for word, where in words.items() if where]
    return phrasing.listing(parts)


def accuracy_change(before: list[float], after: list[float], seeds: tuple[int, ...], tolerance: float = LEVEL) -> str:
    """What ``worked``'s held-out accuracy did over RL, as a sentence: it rose with the share on every seed, or
    which seeds it rose, fell or held level on."""
    moved = f"from {_range(before)} to {_range(after)}"
    if all(a - b > tolerance for b, a in zip(before, after)):
        return f"Accuracy rose with it on {phrasing.seeds(seeds, seeds)}, {moved}."
    return f"Accuracy did not follow on every seed: it went {moved}, and {change_by_seed(before, after, seeds)}."


def part(values: list[float], seeds: tuple[int, ...]) -> str:
    """What one part of a split gain did over the seeds, as a predicate: "added to accuracy on every seed
    (+0.10 to +0.12)", or which seeds it added on and which it took away on."""
    grouped = {
        "added to accuracy": [s for s, v in zip(seeds, values) if v > 0],
        "took accuracy away": [s for s, v in zip(seeds, values) if v < 0],
        "changed nothing": [s for s, v in zip(seeds, values) if v == 0],
    }
    said = phrasing.listing([f"{word} on {phrasing.seeds(where, seeds)}" for word, where in grouped.items() if where])
    return f"{said} ({phrasing.span(list(values), _signed, ' to ')})"


def _signed(x: float) -> str:
    """A signed change to two decimals, three where two would print a change as +0.00 or -0.00, and 0 for none."""
    if x == 0:
        return "0"
    return f"{x:+.3f}" if abs(x) < 0.005 else f"{x:+.2f}"


def against_worked(again: list[float], worked: list[float], seeds: tuple[int, ...], less: str, more: str) -> str:
    """How a quantity of ``worked-rediscover`` compares with ``worked``'s, seed by seed: ``less`` on the seeds where
    it is smaller, ``more`` on the others ("below `worked`'s on every seed", or both sides named)."""
    return phrasing.by_side(worked, again, seeds, less, more, joiner=" and ")


def edges(again: list[float], worked: list[float], seeds: tuple[int, ...]) -> str:
    """The edge of a worked answer over a direct one before RL under ``worked-rediscover`` against ``worked``'s:
    the values themselves (their means over several seeds, whose values the chapter's table gives), not which
    side of each other they fell on."""
    if len(seeds) == 1:
        return f"an edge of {again[0]:+.2f}, against {worked[0]:+.2f} under `worked`"
    return (
        f"an edge of {float(np.mean(again)):+.2f} on average over the seeds, against "
        f"{float(np.mean(worked)):+.2f} under `worked`"
    )


def weights(switch: list[float], execution: list[float], seeds: tuple[int, ...]) -> str:
    """Which part of the split gain was the larger, seed by seed, and by how much where execution led on every seed."""
    said = phrasing.by_side(
        execution,
        switch,
        seeds,
        "execution added more than the switch",
        "the switch added more than execution",
        "the two parts added the same",
        joiner=" and ",
    )
    if all(e > w > 0 for w, e in zip(switch, execution)):
        said += f", {phrasing.span([e / w for w, e in zip(switch, execution)], '.1f', ' to ')} times as much"
    return said


def run_rows(by_seed: dict, seeds: tuple[int, ...], name: str) -> list[dict]:
    """Run ``name``'s before-and-after row on each of ``seeds``, in order (the prose and the tables of chapter 7)."""
    return [by_seed[s]["rows"][name] for s in seeds]


def phrases(by_seed: dict, seeds: tuple[int, ...]) -> dict:
    """The outcome-dependent numbers and words of the prose."""
    worked, control = run_rows(by_seed, seeds, "worked"), run_rows(by_seed, seeds, "worked-direct")
    again = run_rows(by_seed, seeds, "worked-rediscover")
    out = {}
    for key, fmt in (
        ("share", percent),
        ("length", ".1f"),
        ("accuracy", ".2f"),
        ("style_entropy", ".2f"),
        ("p_worked", percent),
    ):
        for when in ("before", "after"):
            out[f"{key}_{when}"] = _range([r[f"{key}_{when}"] for r in worked], fmt)
            out[f"control_{key}_{when}"] = _range([r[f"{key}_{when}"] for r in control], fmt)
            out[f"again_{key}_{when}"] = _range([r[f"{key}_{when}"] for r in again], fmt)
    out["accuracy_change"] = accuracy_change(
        [r["accuracy_before"] for r in worked], [r["accuracy_after"] for r in worked], seeds
    )
    out["switch"] = part([r["gain_from_switch"] for r in worked], seeds)
    out["execution"] = part([r["gain_from_execution"] for r in worked], seeds)
    out["worked_right_before"] = _range([r["accuracy_worked_before"] for r in worked])
    out["direct_right_before"] = _range([r["accuracy_direct_before"] for r in worked])
    out["worked_right_after"] = _range([r["accuracy_worked_after"] for r in worked])
    out["ahead"] = ahead([r["accuracy_after"] for r in worked], [r["accuracy_after"] for r in control])
    out["control_change"] = change_by_seed(
        [r["accuracy_before"] for r in control], [r["accuracy_after"] for r in control], seeds
    )
    out["again_worked_right_before"] = _range([r["accuracy_worked_before"] for r in again])
    out["again_direct_right_before"] = _range([r["accuracy_direct_before"] for r in again])
    out["again_edge"] = edges(
        [r["working_pays_before"] for r in again], [r["working_pays_before"] for r in worked], seeds
    )
    out["execution_vs_switch"] = weights(
        [r["gain_from_switch"] for r in worked], [r["gain_from_execution"] for r in worked], seeds
    )
    out["again_share_vs"] = against_worked(
        [r["share_after"] for r in again],
        [r["share_after"] for r in worked],
        seeds,
        "below `worked`'s",
        "level with or above `worked`'s",
    )
    out["rediscovery"] = rediscovery({s: (r["share_before"], r["share_after"]) for s, r in zip(seeds, again)}, seeds)
    return out
