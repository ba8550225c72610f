"""Chapter 6's outcome-dependent wording, for its facts module (:mod:`rlbook.book.exploration`).

The sentences and ranges over seeds the prose of
chapters/06-exploration-rollouts.qmd reads from ``F.phrases``
(:func:`phrases`): what temperature did to ``base``'s samples, what RL
changed in pass@k and in the pretraining format, and how ``stale`` and
``accepted-only`` ended against ``main``. Each helper reads right whatever
the outcome and never offers a degenerate quantity as evidence;
``tests/unit/book/test_exploration.py`` tries each on made-up outcomes.
Private to the chapter: :func:`rlbook.book.topics` skips modules whose name
starts with an underscore.
"""

from __future__ import annotations

import numpy as np

from rlbook.book import phrasing
from rlbook.book._shown import shown_seed
from rlbook.book.facts import Num
from rlbook.core import world
from rlbook.runs import MAIN


def seed_range(values, fmt: str = ".2f", dash: str = "–") -> str:
    """The range of ``values`` over seeds, as text (one value when both ends read the same)."""
    return phrasing.span([int(v) if fmt == "d" else float(v) for v in values], fmt, dash)


def greedy_right(own: list[dict], n: int) -> str:
    """How often the pretrained policy's greedy answer is right, over seeds, without a bound that says nothing."""
    right = sorted({round(o["greedy"] * n) for o in own})
    if right == [n]:
        return f"right on all {n} held-out sums"
    return f"right on {phrasing.span(right, 'd')} of the {n} held-out sums"


def widened_sentence(pk: list[dict], seeds: tuple[int, ...], n: int) -> str:
    """The sums ``base`` never solved and what ``main`` did on them, seed by seed and in all, as sentences.

    The counts of every seed are named with their total, never as a range of counts against a range of counts
    ("never solved 7, 10 and 8 of the 40 sums on seeds 0, 1 and 2, 25 in all"); the sums ``main`` lost are said
    only where it lost some.
    """
    never = [int(p["never_before"]) for p in pk]
    widened = [int(p["widened"]) for p in pk]
    narrowed = [int(p["narrowed"]) for p in pk]
    where = f"seed {seeds[0]}" if len(seeds) == 1 else f"seeds {phrasing.listing(seeds)}"
    total, solved = sum(never), sum(widened)

    def all_of(counts: list[int]) -> str:
        return "" if len(counts) == 1 else f", {sum(counts):,} over the {phrasing.number_word(len(counts))} seeds"

    said = f"`base` never solved {phrasing.in_order(never)} of the {n} sums on {where}{all_of(never)}."
    if not total:
        said = f"`base` solved every one of the {n} sums at least once on {phrasing.seeds(seeds, seeds)}."
    elif not solved:
        said += " `main` solved none of them either."
    elif len(seeds) == 1:
        said += f" `main` solved {solved} of them at least once."
    else:
        said += f" `main` solved {phrasing.in_order(widened)} of them at least once, {solved} of the {total}."
    if solved:
        said += " Those sums are the only evidence of discovery here."
    if any(narrowed):
        said += (
            f" In the other direction, `main` never solved {phrasing.in_order(narrowed)} sums that `base` had"
            f" solved{all_of(narrowed)}."
        )
    return said


def own_mark(below: list[int], seeds: tuple[int, ...]) -> str:
    """Where RL's chat answers ended against the pretrained policy's own-format mark, as a clause."""
    above = [s for s in seeds if s not in below]
    if not above:
        return f"they end below it on {phrasing.seeds(below, seeds)}"
    if not below:
        return f"they end above it on {phrasing.seeds(above, seeds)}"
    return f"they end below it on {phrasing.seeds(below, seeds)} and above it on {phrasing.seeds(above, seeds)}"


def versus(final: dict[str, list[float]], a: str, b: str) -> str:
    """Run ``a``'s final held-out reward against ``b``'s over seeds, as a sentence: which ended above."""
    fa, fb = np.asarray(final[a]), np.asarray(final[b])
    if fa.min() > fb.max():
        return f"every seed of `{a}` ended above every seed of `{b}`."
    if fa.max() < fb.min():
        return f"every seed of `{a}` ended below every seed of `{b}`."
    return f"the seeds of `{a}` and `{b}` ended in overlapping ranges, so this comparison does not order them."


def phrases(by_seed: dict, seeds: tuple[int, ...], lag: int) -> dict:
    """The outcome-dependent words and numbers of the prose."""
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
        "pass1_before": seed_range([p["before"][0] for p in pk]),
        "pass1_after": seed_range([p["after"][0] for p in pk]),
        "gap_last": seed_range([p["gap"][-1] for p in pk]),
        "on_solved": seed_range([p["on_solved"] for p in pk], ".0%"),
        "groups_right_first": seed_range([by_seed[s]["main"]["groups_right"]["first"] for s in seeds], ".0%"),
        "groups_right_late": seed_range([by_seed[s]["main"]["groups_right"]["late"] for s in seeds], ".0%"),
        "new_room": Num(max((1 - by_seed[s]["main"]["groups_right"]["first"]) / MAIN.group_size for s in seeds), ".3f"),
        "widened": widened_sentence(pk, seeds, n_heldout),
        "rate_bound": Num(3 / pk[0]["n"], ".1%"),
        "own": seed_range([o["own"] for o in own], ".0%"),
        "greedy": greedy_right(own, n_heldout),
        "closed": seed_range(closed, ".0%"),
        "below": own_mark(below, seeds),
        "stale_clip": Num(clip["stale"], ".1%"),
        "main_clip": Num(clip["main"], ".3%"),
        "stale_versus": versus(final, "stale", "main"),
        "kept": seed_range([k["kept"] / k["generated"] for k in kept], ".0%"),
        "rft_rise": seed_range([c["accepted-only"]["heldout"][-1] - c["accepted-only"]["heldout"][0] for c in col]),
        "rft_versus": rft_versus(final["accepted-only"], final["main"], seeds),
        "rft_gap": Num(max(abs(a - m) for a, m in zip(final["accepted-only"], final["main"])), ".2f"),
        "own_stages": own_stages(by_seed[shown_seed(seeds)]["own"], shown_seed(seeds)),
        "own_lost": own_lost(own, seeds),
    }


def rft_versus(picky: list[float], main: list[float], seeds: tuple[int, ...]) -> str:
    """Where ``accepted-only`` ended against ``main``, seed by seed, as the tables print both (two decimals)."""
    a, m = [round(x, 2) for x in picky], [round(x, 2) for x in main]
    values = (
        f"at {phrasing.in_order([f'{x:.2f}' for x in a])} against `main`'s {phrasing.in_order([f'{x:.2f}' for x in m])}"
    )
    where = f"seed {seeds[0]}" if len(seeds) == 1 else f"seeds {phrasing.listing(seeds)}"
    sides = phrasing.by_side(a, m, seeds, "above `main`", "below it", "level with it", joiner=" and ")
    return f"{values} on {where}: {sides}"


def own_stages(own: dict, seed: int) -> str:
    """What each stage did to the pretraining format on the shown seed: sampled and greedy accuracy, as a sentence."""
    return (
        f"On seed {seed}, SFT took the sampled accuracy in that format from {own['own']:.2f} to {own['own_sft']:.2f} "
        f"and the greedy one from {own['greedy']:.2f} to {own['greedy_sft']:.2f}; RL took them on to "
        f"{own['own_after']:.2f} and {own['greedy_after']:.2f}."
    )


def own_lost(own: list[dict], seeds: tuple[int, ...]) -> str:
    """Which stage lost more of the pretraining format's sampled accuracy, seed by seed, in words."""
    rl = [o["own_sft"] - o["own_after"] for o in own]
    sft = [o["own"] - o["own_sft"] for o in own]
    return phrasing.by_side(
        rl, sft, seeds, "RL lost more than SFT", "SFT lost more than RL", "the two lost the same", joiner="; "
    )
