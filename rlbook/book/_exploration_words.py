"""Chapter 6's outcome-dependent numbers and choices, for its facts module (:mod:`rlbook.book.exploration`).

What the prose of chapters/06-exploration-rollouts.qmd reads from
``F.phrases`` (:func:`phrases`): the ranges over seeds and numbers it
prints, and the choices (:func:`rlbook.book.wording.choice`) of the
sentences whose form follows the runs, which the page words case by case:
how often the pretrained policy's greedy answer is right, which sums RL
solved that ``base`` never did and the other way round, where RL's chat
answers ended against the pretraining format's mark, which stage lost more
of that format, whether ``main`` clipped the same share on every seed, and
how ``stale`` and ``accepted-only`` ended against ``main``. Each selector picks its case and values whatever the outcome and
never offers a degenerate quantity as evidence;
``tests/unit/book/test_exploration.py`` tries each on made-up outcomes.
Private to the chapter: :func:`rlbook.book.topics` skips modules whose name
starts with an underscore.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rlbook.book import _sides, phrasing
from rlbook.book._shown import shown_seed
from rlbook.book.facts import Num
from rlbook.book.wording import choice
from rlbook.core import world
from rlbook.runs import MAIN


def seed_range(values, fmt: str = ".2f", dash: str = "–") -> str:
    """The range of ``values`` over seeds, as text (one value when both ends read the same)."""
    return phrasing.span([int(v) if fmt == "d" else float(v) for v in values], fmt, dash)


def listed(seeds: tuple[int, ...]) -> str:
    """The seeds named one by one, for values given seed by seed in their order: "seed 0", "seeds 0, 1 and 2"."""
    return f"seed {seeds[0]}" if len(seeds) == 1 else f"seeds {phrasing.listing(seeds)}"


GREEDY = ("all", "some")
"""The cases of :func:`greedy_right`: the greedy answer is right on every held-out sum, or on some of them."""


def greedy_right(own: list[dict], n: int) -> dict[str, Any]:
    """How often the pretrained policy's greedy answer is right over seeds, without a bound that says nothing."""
    right = sorted({round(o["greedy"] * n) for o in own})
    if right == [n]:
        return choice("all", GREEDY, n=n)
    return choice("some", GREEDY, n=n, right=phrasing.span(right, "d"))


WIDENED = ("solved_all", "one_seed_none", "one_seed_some", "seeds_none", "seeds_some")
"""The cases of :func:`widened`: ``base`` solved every sum; or, on one seed or on several, it left some unsolved
and ``main`` solved none of them, or some."""


def widened(pk: list[dict], seeds: tuple[int, ...], n: int) -> dict[str, Any]:
    """The sums ``base`` never solved and what ``main`` did on them, seed by seed and in all.

    The counts of every seed are given with their total, never as a range of
    counts against a range of counts ("never solved 7, 10 and 8 of the 40
    sums on seeds 0, 1 and 2, 25 over the three seeds").
    """
    never = [int(p["never_before"]) for p in pk]
    solved = [int(p["widened"]) for p in pk]
    if not sum(never):
        return choice("solved_all", WIDENED, n=n, seeds=phrasing.seeds(seeds, seeds))
    values: dict[str, Any] = {"n": n, "never": phrasing.in_order(never), "where": listed(seeds)}
    if len(seeds) == 1:
        return choice("one_seed_some" if solved[0] else "one_seed_none", WIDENED, **values, solved=solved[0])
    values |= {"total": Num(sum(never), ",.0f"), "count": phrasing.number_word(len(seeds))}
    if not sum(solved):
        return choice("seeds_none", WIDENED, **values)
    return choice("seeds_some", WIDENED, **values, widened=phrasing.in_order(solved), solved=sum(solved))


NARROWED = ("none", "one_seed", "seeds")
"""The cases of :func:`narrowed`: ``main`` lost no sum that ``base`` had solved; or it lost some, on one seed or on
several."""


def narrowed(pk: list[dict], seeds: tuple[int, ...]) -> dict[str, Any]:
    """The sums ``base`` had solved that ``main`` never solved, seed by seed and in all; the case ``none`` where
    there are none, which the page leaves unsaid."""
    lost = [int(p["narrowed"]) for p in pk]
    if not any(lost):
        return choice("none", NARROWED)
    if len(seeds) == 1:
        return choice("one_seed", NARROWED, lost=lost[0])
    total = Num(sum(lost), ",.0f")
    return choice("seeds", NARROWED, lost=phrasing.in_order(lost), total=total, count=phrasing.number_word(len(seeds)))


BELOW = _sides.cases(("below", "above"))
"""The cases of :func:`own_mark`: RL's chat answers end below the own-format mark, above it, or each on some seeds."""


def own_mark(below: list[int], seeds: tuple[int, ...]) -> dict[str, Any]:
    """Where RL's chat answers ended against the pretrained policy's own-format mark, seed by seed."""
    return _sides.grouped({"below": below, "above": [s for s in seeds if s not in below]}, seeds)


VERSUS = ("above", "below", "overlap")
"""The cases of :func:`versus`: every seed of one run ended above every seed of the other, below, or they overlap."""


STALE_START = ("above", "one_below", "some_below", "all_below")
"""The cases of :func:`stale_start`: ``stale`` ended above its own start on every seed, below it on one seed of
several, on some, or on all."""


def stale_start(curves: list[list[float]], seeds: tuple[int, ...]) -> dict[str, Any]:
    """Where ``stale`` ended below its own start (chapter 6): the seeds, with the first such seed's two values.

    Where that is one seed of several, ``seed`` alone names it, so the page
    never names it twice.
    """
    fell = [(s, c) for s, c in zip(seeds, curves, strict=True) if c[-1] < c[0]]
    if not fell:
        return choice("above", STALE_START)
    seed, curve = fell[0]
    values = {"seed": seed, "start": Num(curve[0], ".3f"), "end": Num(curve[-1], ".3f")}
    if len(fell) == len(seeds):
        return choice("all_below", STALE_START, **values)
    if len(fell) == 1:
        return choice("one_below", STALE_START, **values)
    return choice("some_below", STALE_START, where=phrasing.seeds([s for s, _ in fell], seeds), **values)


CLIP_FORMAT = ".1%"
"""How chapter 6 prints a run's share of clipped tokens, in its table of stale rollouts and in its prose."""


def clipped(col: list[dict], name: str, lag: int) -> list[float]:
    """Each seed's mean share of tokens that run ``name`` clipped per step, from step ``lag`` on (chapter 6).

    ``col`` holds each seed's measurements of how rollouts are collected
    (``exploration._collection``), in seed order.
    """
    return [float(np.nanmean(np.array(c[name]["clip"][lag:], dtype=float))) for c in col]


MAIN_CLIP = ("same", "differs")
"""The cases of :func:`main_clip`: ``main`` clipped the same share on every seed, as printed, or not."""


def main_clip(shares: list[float], seeds: tuple[int, ...]) -> dict[str, Any]:
    """The share of tokens ``main`` clipped per step, seed by seed, said once where every seed prints the same.

    Its table of stale rollouts shows ``main``'s column only in the case
    ``differs``, so that it never lists one value three times.
    """
    shown = [format(v, CLIP_FORMAT) for v in shares]
    if len(set(shown)) == 1:
        return choice("same", MAIN_CLIP, share=shown[0], where=phrasing.seeds(seeds, seeds))
    return choice("differs", MAIN_CLIP, shares=phrasing.in_order(shown), where=listed(seeds))


def versus(first: list[float], second: list[float]) -> dict[str, Any]:
    """One run's final held-out rewards over seeds (``first``) against another's: which ended above, if either."""
    fa, fb = np.asarray(first), np.asarray(second)
    if fa.min() > fb.max():
        return choice("above", VERSUS)
    if fa.max() < fb.min():
        return choice("below", VERSUS)
    return choice("overlap", VERSUS)


def phrases(by_seed: dict, seeds: tuple[int, ...], lag: int) -> dict:
    """The numbers, ranges and choices of the prose."""
    sparse = [{r["temperature"]: r for r in by_seed[s]["sparse"]} for s in seeds]
    cov = [by_seed[s]["coverage"] for s in seeds]
    trend = [by_seed[s]["main"]["trend"] for s in seeds]
    pk = [by_seed[s]["passk"] for s in seeds]
    own = [by_seed[s]["own"] for s in seeds]
    col = [by_seed[s]["collection"] for s in seeds]
    final = {n: [c[n]["heldout"][-1] for c in col] for n in ("main", "stale", "accepted-only")}
    clip = {n: float(np.nanmean([np.array(c[n]["clip"][lag:], dtype=float) for c in col])) for n in ("main", "stale")}
    closed = [(o["after"] - o["before"]) / (o["own"] - o["before"]) for o in own]
    below = [s for s, o in zip(seeds, own) if o["after"] < o["own"]]
    kept = [c["counts"]["accepted-only"] for c in col]
    n_heldout = len(world.split("heldout"))
    return {
        "mixed_one": seed_range([t[1.0]["mixed"][list(t[1.0]["ks"]).index(MAIN.group_size)] for t in sparse], ".0%"),
        "junk_hot": seed_range([c[-1]["malformed"] + c[-1]["budget-stopped"] for c in cov], ".0%"),
        "repeat_part": seed_range([t["repeat_gain"] / t["reward_gain"] for t in trend], ".0%"),
        "pass1": pass1(by_seed[shown_seed(seeds)]["passk"]),
        "gap_last": seed_range([p["gap"][-1] for p in pk]),
        "on_solved": seed_range([p["on_solved"] for p in pk], ".0%"),
        "groups_right_first": seed_range([by_seed[s]["main"]["groups_right"]["first"] for s in seeds], ".0%"),
        "groups_right_late": seed_range([by_seed[s]["main"]["groups_right"]["late"] for s in seeds], ".0%"),
        "new_room": Num(max((1 - by_seed[s]["main"]["groups_right"]["first"]) / MAIN.group_size for s in seeds), ".3f"),
        "widened": widened(pk, seeds, n_heldout),
        "narrowed": narrowed(pk, seeds),
        "rate_bound": Num(3 / pk[0]["n"], ".1%"),
        "own": seed_range([o["own"] for o in own], ".0%"),
        "greedy": greedy_right(own, n_heldout),
        "closed": seed_range(closed, ".0%"),
        "below": own_mark(below, seeds),
        "stale_clip": Num(clip["stale"], ".1%"),
        "main_clip": Num(clip["main"], ".3%"),
        "main_clip_seeds": main_clip(clipped(col, "main", lag), seeds),
        "novel_cool": Num(by_seed[shown_seed(seeds)]["coverage"][0]["novel_share"], ".0%"),
        "novel_hot": Num(by_seed[shown_seed(seeds)]["coverage"][-1]["novel_share"], ".0%"),
        "stale_versus": versus(final["stale"], final["main"]),
        "stale_start": stale_start([c["stale"]["heldout"] for c in col], seeds),
        "kept": seed_range([k["kept"] / k["generated"] for k in kept], ".0%"),
        "rft_rise": seed_range([c["accepted-only"]["heldout"][-1] - c["accepted-only"]["heldout"][0] for c in col]),
        "rft_versus": rft_versus(final["accepted-only"], final["main"], seeds),
        "rft_gap": Num(max(abs(a - m) for a, m in zip(final["accepted-only"], final["main"])), ".2f"),
        "own_stages": own_stages(by_seed[shown_seed(seeds)]["own"]),
        "own_lost": own_lost(own, seeds),
    }


RFT_SIDES = ("above", "below", "level")
"""Where ``accepted-only`` ended against ``main`` on a seed (:func:`rft_versus`)."""
RFT = _sides.cases(RFT_SIDES)
"""The cases of :func:`rft_versus`: the seeds on which ``accepted-only`` ended above ``main``, below it, level with
it, or on several of those sides."""


def rft_versus(picky: list[float], main: list[float], seeds: tuple[int, ...]) -> dict[str, Any]:
    """Where ``accepted-only`` ended against ``main``, seed by seed, as the tables print both (two decimals)."""
    a, m = [round(x, 2) for x in picky], [round(x, 2) for x in main]
    return _sides.grouped(
        _sides.sides(a, m, seeds, RFT_SIDES),
        seeds,
        picky=phrasing.in_order([f"{x:.2f}" for x in a]),
        main=phrasing.in_order([f"{x:.2f}" for x in m]),
        where=listed(seeds),
    )


def pass1(pk: dict) -> dict[str, Num]:
    """pass@1 on the held-out sums before RL (``base``) and after it (``main``'s last checkpoint), on the shown seed,
    as the chapter's pass@k table prints it."""
    return {"before": Num(pk["before"][0]), "after": Num(pk["after"][0])}


def own_stages(own: dict) -> dict[str, Num]:
    """What each stage did to the pretraining format on the shown seed: its sampled (``own``) and greedy accuracy,
    pretrained, after SFT and after RL."""
    keys = ("own", "own_sft", "own_after", "greedy", "greedy_sft", "greedy_after")
    return {k: Num(own[k]) for k in keys}


LOST_SIDES = ("rl", "sft", "same")
"""Which stage lost more of the pretraining format on a seed (:func:`own_lost`)."""
LOST = _sides.cases(LOST_SIDES)
"""The cases of :func:`own_lost`: the seeds on which RL lost more of the pretraining format than SFT, on which SFT
lost more, on which the two lost the same, or several of those."""


def own_lost(own: list[dict], seeds: tuple[int, ...]) -> dict[str, Any]:
    """Which stage lost more of the pretraining format's sampled accuracy, seed by seed."""
    rl = [o["own_sft"] - o["own_after"] for o in own]
    sft = [o["own"] - o["own_sft"] for o in own]
    return _sides.grouped(_sides.sides(rl, sft, seeds, LOST_SIDES), seeds)
