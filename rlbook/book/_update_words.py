"""Chapter 4's outcome-dependent choices, for its facts module (:mod:`rlbook.book.update`).

The choices (:func:`rlbook.book.wording.choice`) of the sentences of
chapters/04-update-choices.qmd whose form follows the runs, which the page
words case by case with ``F.say``: how the ratios of a reused batch drift
and how often CISPO's cap binds on it, how long the runs in disguise stayed
with ``main``, which runs lost a seed and what the guard stopped, which run
travelled furthest from the base, whether ``ppo-kl`` collapsed, and how
``ppo`` and ``main`` compare at equal optimiser steps. Each selector picks
its case and values whatever the outcome and never offers a degenerate
quantity as evidence; ``tests/unit/book/test_update.py`` tries each on
made-up outcomes. Private to the chapter: :func:`rlbook.book.topics` skips
modules whose name starts with an underscore.
"""

from __future__ import annotations

import math

from rlbook.book import phrasing
from rlbook.book.facts import Num
from rlbook.book.wording import choice

DRIFT = ("grows", "shrinks", "stays")
"""The cases of :func:`ratio_drift`: between the run's reuse and twice as many steps, the share outside PPO's
region grows further, shrinks again or stays where it was."""


def ratio_drift(outside: list[float], reuse: int) -> dict:
    """How the share of a batch's tokens outside PPO's region moves between ``reuse`` and twice as many steps.

    ``outside`` holds the share after each step on the batch, from the
    first; the values are the share after one step, after ``reuse`` and
    after twice as many.
    """
    later, at_reuse = outside[-1], outside[reuse - 1]
    case = "grows" if later > at_reuse else "shrinks" if later < at_reuse else "stays"
    return choice(
        case,
        DRIFT,
        first=Num(outside[0], ".1%"),
        reuse=reuse,
        at_reuse=Num(at_reuse, ".1%"),
        twice=2 * reuse,
        later=Num(later, ".1%"),
    )


CAP = ("never", "both", "reuse_only", "last_only", "between")
"""The cases of :func:`cap_binds`: CISPO's cap binds on no token of the batch; on some after the run's reuse and
after twice as many steps; after the reuse only; after twice as many only; or only in between."""


def cap_binds(capped: list[float], tokens: int, cap: float, reuse: int) -> dict:
    """How often CISPO's cap binds on the shown batch of ``tokens`` tokens, counted in tokens (chapter 4).

    ``capped`` holds the share of tokens capped after each step on the batch.
    Counts are given as words and a case never prints a count of zero as
    evidence: where the cap binds after only one of the two numbers of steps
    the other is "none", and where it binds after neither, the most it bound
    on in between.
    """
    counts = [round(c * tokens) for c in capped]
    values = {"tokens": Num(tokens, ",.0f"), "reuse": reuse, "twice": 2 * reuse, "cap": Num(cap, "g")}
    at_reuse, last = counts[reuse - 1], counts[-1]
    if max(counts) == 0:
        return choice("never", CAP, **values)
    if at_reuse and last:
        case = "both"
    elif at_reuse or last:
        case = "reuse_only" if at_reuse else "last_only"
    else:
        case = "between"
    words = {"at_reuse": at_reuse, "last": last, "most": max(counts)}
    return choice(case, CAP, **values, **{k: phrasing.number_word(n) for k, n in words.items() if n})


AGREED = ("agreed", "parted")
"""The cases of :func:`agreed`: the runs in disguise stayed with ``main`` past its first checkpoint, or not."""


def agreed(until: int, first: int, tol: float) -> dict:
    """Up to which checkpoint ``until`` the runs in disguise stayed within ``tol`` of ``main`` on this machine, or
    that they parted before its first checkpoint after the start, ``first``."""
    if until >= first:
        return choice("agreed", AGREED, tol=Num(tol, "g"), until=until)
    return choice("parted", AGREED, first=first)


LOST = ("no_run", "one_reusing", "one_single", "all_reusing", "none_reusing", "some_reusing")
"""The cases of :func:`lost_seeds`: no run lost a seed; one did, which reuses each batch or takes one update per
batch; several did, all of which reuse each batch, none of which does, or some of which do."""


def lost_seeds(lost: dict[str, list[int]], reused: tuple[str, ...], last: int, seeds: tuple[int, ...]) -> dict:
    """What chapter 4's rule for a lost seed finds: which runs lost seeds, which seeds, and whether they reuse a batch.

    ``lost`` maps each run that lost a seed to the seeds it lost; ``reused``
    names the runs that reuse each batch; ``last`` is the step every seed of
    every run reached when none was lost. ``which`` gives the seeds: for one
    run, its seeds ("seeds 1 and 2"); for several, each run with its seeds.
    """
    if not lost:
        return choice("no_run", LOST, last=last)
    names = phrasing.listing([f"`{n}`" for n in lost])
    reusing = [n for n in lost if n in reused]
    if len(lost) == 1:
        (where,) = lost.values()
        which = phrasing.seeds(where, seeds)
        return choice("one_reusing" if reusing else "one_single", LOST, names=names, which=which)
    which = phrasing.listing([f"`{n}` on {phrasing.seeds(where, seeds)}" for n, where in lost.items()])
    if len(reusing) == len(lost):
        return choice("all_reusing", LOST, names=names, which=which)
    if not reusing:
        return choice("none_reusing", LOST, names=names, which=which)
    return choice("some_reusing", LOST, names=names, which=which, share=phrasing.share(len(reusing), len(lost)))


STOPS = ("none", "one", "several")
"""The cases of :func:`stops`: the guard stopped no seed, one, or several (whose page words are then lists)."""


def stops(stories: list[dict]) -> dict:
    """What each seed the guard stopped did before the stop (chapter 4), from :func:`rlbook.analysis.credit.stop_story`.

    Each story also names its ``run`` and ``seed``. "none" has no words to
    print; "one" gives the story's values; "several" gives each value as a
    list in the stories' order, and the threshold once where all agree.
    """
    if not stories:
        return choice("none", STOPS)
    shown = [
        {
            "kl_before": Num(st["kl_before"]),
            "kl_jump": Num(st["kl_jump"], ".1f"),
            "jump_step": st["jump_step"],
            "malformed_before": Num(st["malformed_before"], ".0%"),
            "malformed_peak": Num(st["malformed_peak"], ".0%"),
            "reward_before": Num(st["reward_before"]),
            "reward_last": Num(st["reward_last"]),
            "stopped": st["stopped"],
        }
        for st in stories
    ]
    if len(stories) == 1:
        only = stories[0]
        return choice("one", STOPS, run=only["run"], seed=only["seed"], threshold=only["threshold"], **shown[0])
    return choice(
        "several",
        STOPS,
        runs=phrasing.listing([f"`{st['run']}` seed {st['seed']}" for st in stories]),
        threshold=phrasing.span([st["threshold"] for st in stories], "d"),
        **{key: phrasing.in_order([row[key] for row in shown]) for key in shown[0]},
    )


PENALTY = ("held", "one", "two", "more")
"""The cases of :func:`penalty`: ``ppo-kl`` collapsed on no seed; or on one, two, or more seeds."""


def penalty(fell: list[dict], heldout_after: float, starts: list[float], seeds: tuple[int, ...]) -> dict:
    """Where ``ppo-kl`` collapsed (chapter 4), from :func:`rlbook.book.update.collapses`, or how low it went.

    ``fell`` holds each collapse: the seed, the checkpoint before and the one
    at which it fell, with their values. Where it never collapsed, its lowest
    held-out value after the start, ``heldout_after``, against the ``starts``
    of its seeds. One and two collapses give each one's values, numbered;
    more give them as lists in seed order.
    """
    if not fell:
        return choice("held", PENALTY, lowest=Num(heldout_after, ".3f"), start=phrasing.span(starts, ".3f"))
    rows = [
        {
            "seed": c["seed"],
            "high": Num(c["from"], ".3f"),
            "high_step": c["from_step"],
            "low": Num(c["to"], ".3f"),
            "low_step": c["step"],
        }
        for c in fell
    ]
    if len(rows) <= 2:
        case = "one" if len(rows) == 1 else "two"
        return choice(case, PENALTY, **{f"{k}{i}": v for i, row in enumerate(rows, 1) for k, v in row.items()})
    return choice(
        "more",
        PENALTY,
        seeds=phrasing.seeds([row["seed"] for row in rows], seeds),
        **{f"{k}s": phrasing.in_order([row[k] for row in rows]) for k in ("high", "high_step", "low", "low_step")},
    )


COMPARED = ("unshared", "above", "below", "overlapping")
"""The cases of :func:`compared`: ``ppo``'s and ``main``'s checkpoints share no number of optimiser steps; or,
at the most they share, every seed of ``ppo`` ended above every seed of ``main``, below, or the two overlap."""


def compared(equal: dict | None, main_steps: int) -> dict:
    """How ``ppo`` and ``main`` compare after as many optimiser steps (chapter 4), from
    :func:`rlbook.book.update.equal_updates`; ``main_steps`` is the length of ``main``'s full run."""
    if equal is None:
        return choice("unshared", COMPARED)
    return choice(
        equal["order"],
        COMPARED,
        updates=equal["updates"],
        ppo_step=equal["ppo_step"],
        main_steps=main_steps,
        ppo=Num(equal["ppo"], ".3f"),
        main=Num(equal["main"], ".3f"),
    )


FURTHEST = ("unpenalised", "penalised")
"""The cases of :func:`furthest`: the run that travelled furthest from the base has no KL penalty, or has one."""


def furthest(
    kl: dict[str, float], by_seed: dict[str, list[float]], penalised: set[str], seeds: tuple[int, ...]
) -> dict:
    """Which run travelled furthest from the base (chapter 4): the largest median KL over the final steps.

    ``kl`` is each run's median over its seeds, ``by_seed`` each seed's own
    median in the order of ``seeds`` (NaN for a seed that did not get there),
    ``penalised`` the runs with a KL penalty. ``where`` names the seeds on
    which that run's own median is the largest of all runs. Where the
    furthest run carries a penalty, ``free`` is the furthest run without one,
    with its median ``free_kl``.
    """
    top = max(kl, key=kl.__getitem__)
    largest = [
        max((v[k] for v in by_seed.values() if not math.isnan(v[k])), default=math.nan) for k in range(len(seeds))
    ]
    where = [s for k, s in enumerate(seeds) if by_seed[top][k] == largest[k]]
    values = {"run": f"`{top}`", "kl": Num(kl[top], ".3f"), "where": phrasing.seeds(where, seeds)}
    if top not in penalised:
        return choice("unpenalised", FURTHEST, **values)
    free = max((n for n in kl if n not in penalised), key=kl.__getitem__)
    return choice("penalised", FURTHEST, free=f"`{free}`", free_kl=Num(kl[free], ".3f"), **values)
