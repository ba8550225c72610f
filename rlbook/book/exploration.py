"""Chapter 6's facts (chapters/06-exploration-rollouts.qmd): what sampling shows the reward, and rollouts as data.

Every number, range and outcome-dependent phrase of the chapter, and the data
its figures and tables draw, computed on every seed: ``base`` sampled at
several temperatures (pass@k, mixed groups, the exploration audit), the
batches ``main`` trained on, pass@k before and after RL at equal budgets,
what the pretrained policy knew in its own format, and the runs ``stale`` and
``accepted-only`` (how rollouts are collected). The chapter draws the batch
audit of :data:`SHOWN`; its claims hold on every seed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rlbook.analysis import audit, passk
from rlbook.book import phrasing
from rlbook.book._shown import shown_seed
from rlbook.book.claims import Claim, every
from rlbook.book.facts import Num
from rlbook.book.needs import Need, on_seeds
from rlbook.core import world
from rlbook.runs import MAIN, load, spec

PAGE = "chapters/06-exploration-rollouts.qmd"
RUNS = ("base", "main", "stale", "accepted-only")

TEMPERATURES = (0.5, 1.0, 1.5, 2.0)
"""Where the chapter samples ``base`` to see what temperature does to exploration."""
AUDIT_N = 64
"""Samples per held-out prompt for pass@k and mixed groups at each temperature."""
PASSK_N = 256
"""Samples per held-out prompt when pass@k is compared before and after RL."""
KS = tuple(2**i for i in range(9))
"""The k of the before-and-after comparison: 1, 2, 4, ..., 256."""
WINDOW = 10
"""Steps averaged at the start and the end of ``main`` when its batches are compared."""
NEAR = 0.1
"""How close to ``main`` the chapter claims ``accepted-only`` ends, in held-out expected reward."""
CLIP_BOUND = 1e-3
"""The share of tokens below which the chapter says that on-policy learning clips almost none."""


def needs(seeds: tuple[int, ...]) -> tuple[Need, ...]:
    return on_seeds(RUNS, seeds)


def _sparse(seed: int) -> list[dict]:
    """pass@k, mixed groups, never-right prompts and tokens of ``base`` on the held-out sums, per temperature."""
    rows = audit.sparse_reward_audit(
        load("base", seed).policy(), world.split("heldout"), TEMPERATURES, n=AUDIT_N, seed=seed
    )
    return [
        {
            "temperature": r["temperature"],
            "ks": r["ks"],
            "pass_at_k": r["pass_at_k"],
            "mixed": r["mixed"],
            "never": len(r["never_right"]),
            "tokens": r["tokens_per_sample"],
        }
        for r in rows
    ]


def _coverage(seed: int) -> list[dict]:
    """The exploration audit of ``base`` on the training prompts: one training batch's shape, twice, per temperature."""
    prompts = [t.prompt for t in world.split("train")]
    return audit.temperature_audit(
        load("base", seed).policy(), prompts, TEMPERATURES, n=MAIN.group_size, rounds=2, seed=seed
    )


def _composition(seed: int) -> dict:
    """What ``main``'s batches are made of, step by step, and how its reward gain splits."""
    flow = audit.run_composition(load("main", seed).rollouts)
    keys = ("step", *audit.CATEGORIES, "duplicate_accepted", "duplicate_incorrect", "novel_share", "reward_mean")
    # A group holds at most one distinct right answer, so the share of new right answers times the group size is
    # the share of groups that hold a right answer at all: at the first step and over the last WINDOW steps.
    right = [MAIN.group_size * row["accepted"] for row in flow]
    return {
        "flow": {k: [row[k] for row in flow] for k in keys},
        "trend": audit.sharpening(flow, window=WINDOW),
        "groups_right": {"first": right[0], "late": float(np.mean(right[-WINDOW:]))},
    }


def _before_after(seed: int) -> dict:
    """pass@k of ``base`` and of ``main``'s last checkpoint on the held-out sums, at equal budgets."""
    cmp = passk.pass_at_k_before_after(
        load("base", seed).policy(),
        load("main", seed).policy(),
        world.split("heldout"),
        n=PASSK_N,
        ks=list(KS),
        seed=seed,
    )
    return {
        "n": PASSK_N,
        "before": cmp.before,
        "after": cmp.after,
        "gap": cmp.gap,
        "counts_before": cmp.counts_before,
        "counts_after": cmp.counts_after,
        "never_before": cmp.never_before,
        "widened": cmp.widened,
        "narrowed": cmp.narrowed,
        "on_solved": cmp.gain_on_solved,
    }


def _own_format(seed: int) -> dict:
    """What the policy knows of the held-out sums in its pretraining format: pretrained, after SFT, after RL.

    Sampled (``own``, ``own_sft``, ``own_after``) and greedy (``greedy``,
    ``greedy_sft``, ``greedy_after``), with held-out expected reward in the
    chat format at the first and last checkpoint of ``main``.
    """
    heldout, run, base = world.split("heldout"), load("main", seed), load("base", seed)
    stages = {"": base.policy(0), "_sft": base.policy(), "_after": run.policy()}  # pretrained, after SFT, after RL
    out = {"before": run.evals[0]["heldout_expected_reward"], "after": run.evals[-1]["heldout_expected_reward"]}
    for tail, policy in stages.items():
        out[f"own{tail}"] = float(audit.own_format_accuracy(policy, heldout, seed=seed).mean())
        out[f"greedy{tail}"] = float(audit.own_format_accuracy(policy, heldout, greedy=True).mean())
    return out


def _collection(seed: int) -> dict:
    """``stale`` and ``accepted-only`` against ``main`` over the same steps: held-out reward, clipping, selection."""
    stale = spec("stale").rl
    assert stale is not None  # an RL run of the catalogue
    horizon = stale.steps
    out: dict[str, Any] = {}
    for name in ("main", "stale", "accepted-only"):
        run = load(name, seed)
        evals = [e for e in run.evals if e["step"] <= horizon]
        out[name] = {
            "eval_steps": [e["step"] for e in evals],
            "heldout": [e["heldout_expected_reward"] for e in evals],
            "clip": [m.get("clip_fraction") for m in run.metrics[:horizon]],
        }
    picky = load("accepted-only", seed)
    out["counts"] = {n: audit.selection_counts(load(n, seed).rollouts[:horizon]) for n in ("main", "accepted-only")}
    out["record"] = {k: picky.record[k] for k in ("selection_rule", "rollouts_before_filtering", "rollouts_used")}
    out["selection_total"] = audit.selection_counts(picky.rollouts)
    return out


def _seed(seed: int) -> dict:
    """Everything the chapter measures on one seed."""
    return {
        "sparse": _sparse(seed),
        "coverage": _coverage(seed),
        "main": _composition(seed),
        "passk": _before_after(seed),
        "own": _own_format(seed),
        "collection": _collection(seed),
    }


def compute(seeds: tuple[int, ...]) -> dict:
    """Every fact of chapter 6 on ``seeds`` (the batch audit of ``main`` drawn for :data:`SHOWN`)."""
    by_seed = {s: _seed(s) for s in seeds}
    stale = spec("stale").rl
    assert stale is not None  # an RL run of the catalogue
    lag, horizon = stale.stale, stale.steps
    return {
        "seeds": list(seeds),
        "shown": shown_seed(seeds),
        "by_seed": by_seed,
        "temperatures": TEMPERATURES,
        "audit_n": AUDIT_N,
        "passk_n": PASSK_N,
        "ks": KS,
        "group": MAIN.group_size,
        "n_train": len(world.split("train")),
        "n_heldout": len(world.split("heldout")),
        "lag": lag,
        "horizon": horizon,
        "window": WINDOW,
        "clip_bound": Num(CLIP_BOUND, ".1%"),
        "near": Num(NEAR, ".1f"),
        "phrases": _phrases(by_seed, seeds, lag),
        "tables": _tables(by_seed, seeds, lag),
        "figures": {
            "novel": {s: by_seed[s]["main"]["flow"]["novel_share"] for s in seeds},
            "steps": by_seed[shown_seed(seeds)]["main"]["flow"]["step"],
            "before_after": {s: {k: by_seed[s]["passk"][k] for k in ("before", "after", "gap")} for s in seeds},
            "stale": {s: {n: by_seed[s]["collection"][n] for n in ("main", "stale")} for s in seeds},
        },
    }


TABLE_DASH = "\u2060–\u2060"
"""The dash of a range in a table cell, joined to its ends so that a narrow column never breaks the range."""
ARROW = "\u00a0→\u00a0"
"""From one value to another in a table cell, held together in the same way."""


def _range(values, fmt: str = ".2f", dash: str = "–") -> str:
    """The range of ``values`` over seeds, as text (one value when both ends read the same)."""
    return phrasing.span([int(v) if fmt == "d" else float(v) for v in values], fmt, dash)


def _greedy(own: list[dict], n: int) -> str:
    """How often the pretrained policy's greedy answer is right, over seeds, without a bound that says nothing."""
    right = sorted({round(o["greedy"] * n) for o in own})
    if right == [n]:
        return f"right on all {n} held-out sums"
    return f"right on {phrasing.span(right, 'd')} of the {n} held-out sums"


def _widened(pk: list[dict], seeds: tuple[int, ...], n: int) -> str:
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


def _tables(by_seed: dict, seeds: tuple[int, ...], lag: int) -> dict:
    """The rows of the chapter's tables, formatted; each table a ``header`` and its ``rows``."""

    def span(values, fmt=".2f"):
        return _range(values, fmt, TABLE_DASH)

    sparse = [{r["temperature"]: r for r in by_seed[s]["sparse"]} for s in seeds]
    g = list(KS).index(MAIN.group_size)
    cov = [{r["temperature"]: r for r in by_seed[s]["coverage"]} for s in seeds]
    pk = {s: by_seed[s]["passk"] for s in seeds}
    col = {s: by_seed[s]["collection"] for s in seeds}
    words = audit.VERDICT_WORDS
    dropped = ("incorrect", "malformed", "incomplete")
    return {
        "sparse": {
            "header": [
                "T",
                "pass@1",
                f"pass@{AUDIT_N}",
                f"never right in {AUDIT_N}",
                f"mixed groups of {MAIN.group_size}",
                "tokens per answer",
            ],
            "rows": [
                [
                    f"{t:g}",
                    span([x[t]["pass_at_k"][0] for x in sparse]),
                    span([x[t]["pass_at_k"][-1] for x in sparse]),
                    span([x[t]["never"] for x in sparse], "d"),
                    span([x[t]["mixed"][g] for x in sparse], ".0%"),
                    span([x[t]["tokens"] for x in sparse]),
                ]
                for t in TEMPERATURES
            ],
        },
        "coverage": {
            "header": [
                "T",
                "repeats",
                "new in round 2",
                "malformed or cut off",
                "right answers per prompt",
                "tokens per rollout",
            ],
            "rows": [
                [
                    f"{t:g}",
                    span([x[t]["duplicate"] for x in cov], ".0%"),
                    span([x[t]["novel_share"] for x in cov], ".0%"),
                    span([x[t]["malformed"] + x[t]["budget-stopped"] for x in cov], ".0%"),
                    span([x[t]["distinct_right_per_prompt"] for x in cov]),
                    span([x[t]["tokens_per_rollout"] for x in cov]),
                ]
                for t in TEMPERATURES
            ],
        },
        "trend": {
            "header": [
                "seed",
                "reward gain",
                "gain in repeated right answers",
                "groups with a right answer, first step → late",
                "novel share, early → late",
            ],
            "rows": [
                [
                    s,
                    f"{t['reward_gain']:.3f}",
                    f"{t['repeat_gain']:.3f}",
                    f"{g['first']:.0%}{ARROW}{g['late']:.0%}",
                    f"{t['novel_early']:.1%}{ARROW}{t['novel_late']:.1%}",
                ]
                for s in seeds
                for t, g in [(by_seed[s]["main"]["trend"], by_seed[s]["main"]["groups_right"])]
            ],
        },
        "passk": {
            "header": ["seed", "pass@1", f"pass@{PASSK_N}", "lead at 1", f"lead at {PASSK_N}", "rise on solved sums"],
            "rows": [
                [
                    s,
                    f"{p['before'][0]:.2f}{ARROW}{p['after'][0]:.2f}",
                    f"{p['before'][-1]:.2f}{ARROW}{p['after'][-1]:.2f}",
                    f"{p['gap'][0]:+.2f}",
                    f"{p['gap'][-1]:+.2f}",
                    f"{p['on_solved']:.0%}",
                ]
                for s, p in pk.items()
            ],
        },
        "sums": {
            "header": ["seed", "never solved by base", "of those, solved by main", "solved by base, not main"],
            "rows": [[s, p["never_before"], p["widened"], p["narrowed"]] for s, p in pk.items()],
        },
        "own": {
            "header": [
                "seed",
                "own format, sampled: pretrained → SFT → RL",
                "own format, greedy: pretrained → SFT → RL",
                "chat, before → after RL",
            ],
            "rows": [
                [
                    s,
                    ARROW.join(f"{o[k]:.2f}" for k in ("own", "own_sft", "own_after")),
                    ARROW.join(f"{o[k]:.2f}" for k in ("greedy", "greedy_sft", "greedy_after")),
                    f"{o['before']:.2f}{ARROW}{o['after']:.2f}",
                ]
                for s in seeds
                for o in [by_seed[s]["own"]]
            ],
        },
        "stale": {
            "header": ["seed", "tokens clipped, stale", "tokens clipped, main", "held-out, stale", "held-out, main"],
            "rows": [
                [
                    s,
                    f"{np.nanmean(np.array(c['stale']['clip'][lag:], dtype=float)):.1%}",
                    f"{np.nanmean(np.array(c['main']['clip'][lag:], dtype=float)):.1%}",
                    f"{c['stale']['heldout'][-1]:.2f}",
                    f"{c['main']['heldout'][-1]:.2f}",
                ]
                for s, c in col.items()
            ],
        },
        "selection": {
            "header": [
                "seed",
                "kept of generated",
                "dropped: " + " / ".join(words[d] for d in dropped),
                "held-out, kept only",
                "held-out, main",
            ],
            "rows": [
                [
                    s,
                    f"{k['kept']:,}\u00a0of\u00a0{k['generated']:,}",
                    " / ".join(f"{k.get(f'dropped_{d}', 0):,}" for d in dropped),
                    f"{c['accepted-only']['heldout'][-1]:.2f}",
                    f"{c['main']['heldout'][-1]:.2f}",
                ]
                for s, c in col.items()
                for k in [c["counts"]["accepted-only"]]
            ],
        },
    }


def _below(below: list[int], seeds: tuple[int, ...]) -> str:
    """Where RL's chat answers ended against the pretrained policy's own-format mark, as a clause."""
    above = [s for s in seeds if s not in below]
    if not above:
        return f"they end below it on {phrasing.seeds(below, seeds)}"
    if not below:
        return f"they end above it on {phrasing.seeds(above, seeds)}"
    return f"they end below it on {phrasing.seeds(below, seeds)} and above it on {phrasing.seeds(above, seeds)}"


def _versus(final: dict[str, list[float]], a: str, b: str) -> str:
    """Run ``a``'s final held-out reward against ``b``'s over seeds, as a sentence: which ended above."""
    fa, fb = np.asarray(final[a]), np.asarray(final[b])
    if fa.min() > fb.max():
        return f"every seed of `{a}` ended above every seed of `{b}`."
    if fa.max() < fb.min():
        return f"every seed of `{a}` ended below every seed of `{b}`."
    return f"the seeds of `{a}` and `{b}` ended in overlapping ranges, so this comparison does not order them."


def _phrases(by_seed: dict, seeds: tuple[int, ...], lag: int) -> dict:
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
        "mixed_one": _range([t[1.0]["mixed"][list(t[1.0]["ks"]).index(MAIN.group_size)] for t in sparse], ".0%"),
        "junk_hot": _range([c[-1]["malformed"] + c[-1]["budget-stopped"] for c in cov], ".0%"),
        "repeat_part": _range([t["repeat_gain"] / t["reward_gain"] for t in trend], ".0%"),
        "pass1_before": _range([p["before"][0] for p in pk]),
        "pass1_after": _range([p["after"][0] for p in pk]),
        "gap_last": _range([p["gap"][-1] for p in pk]),
        "on_solved": _range([p["on_solved"] for p in pk], ".0%"),
        "groups_right_first": _range([by_seed[s]["main"]["groups_right"]["first"] for s in seeds], ".0%"),
        "groups_right_late": _range([by_seed[s]["main"]["groups_right"]["late"] for s in seeds], ".0%"),
        "new_room": Num(max((1 - by_seed[s]["main"]["groups_right"]["first"]) / MAIN.group_size for s in seeds), ".3f"),
        "widened": _widened(pk, seeds, n_heldout),
        "rate_bound": Num(3 / PASSK_N, ".1%"),
        "own": _range([o["own"] for o in own], ".0%"),
        "greedy": _greedy(own, n_heldout),
        "closed": _range(closed, ".0%"),
        "below": _below(below, seeds),
        "stale_clip": Num(clip["stale"], ".1%"),
        "main_clip": Num(clip["main"], ".3%"),
        "stale_versus": _versus(final, "stale", "main"),
        "kept": _range([k["kept"] / k["generated"] for k in kept], ".0%"),
        "rft_rise": _range([c["accepted-only"]["heldout"][-1] - c["accepted-only"]["heldout"][0] for c in col]),
        "rft_versus": _rft_versus(final["accepted-only"], final["main"], seeds),
        "rft_gap": Num(max(abs(a - m) for a, m in zip(final["accepted-only"], final["main"])), ".2f"),
        "own_stages": _own_stages(by_seed[shown_seed(seeds)]["own"], shown_seed(seeds)),
        "own_lost": _own_lost(own, seeds),
    }


def _rft_versus(picky: list[float], main: list[float], seeds: tuple[int, ...]) -> str:
    """Where ``accepted-only`` ended against ``main``, seed by seed, as the tables print both (two decimals)."""
    a, m = [round(x, 2) for x in picky], [round(x, 2) for x in main]
    values = (
        f"at {phrasing.in_order([f'{x:.2f}' for x in a])} against `main`'s {phrasing.in_order([f'{x:.2f}' for x in m])}"
    )
    where = f"seed {seeds[0]}" if len(seeds) == 1 else f"seeds {phrasing.listing(seeds)}"
    sides = phrasing.by_side(a, m, seeds, "above `main`", "below it", "level with it", joiner=" and ")
    return f"{values} on {where}: {sides}"


def _own_stages(own: dict, seed: int) -> str:
    """What each stage did to the pretraining format on the shown seed: sampled and greedy accuracy, as a sentence."""
    return (
        f"On seed {seed}, SFT took the sampled accuracy in that format from {own['own']:.2f} to {own['own_sft']:.2f} "
        f"and the greedy one from {own['greedy']:.2f} to {own['greedy_sft']:.2f}; RL took them on to "
        f"{own['own_after']:.2f} and {own['greedy_after']:.2f}."
    )


def _own_lost(own: list[dict], seeds: tuple[int, ...]) -> str:
    """Which stage lost more of the pretraining format's sampled accuracy, seed by seed, in words."""
    rl = [o["own_sft"] - o["own_after"] for o in own]
    sft = [o["own"] - o["own_sft"] for o in own]
    return phrasing.by_side(
        rl, sft, seeds, "RL lost more than SFT", "SFT lost more than RL", "the two lost the same", joiner="; "
    )


def _every(check):
    """A check that ``check(seed facts)`` holds on every seed."""
    return every(check)


def _at(rows, temperature):
    return next(r for r in rows if r.temperature == temperature)


def _gi(F) -> int:
    return list(F.ks).index(F.group)


CLAIMS = (
    Claim(
        "cool-first-sample",
        "a cool first sample is right more often than a hot one, every seed",
        _every(lambda s: s.sparse[0].pass_at_k[0] > s.sparse[-1].pass_at_k[0]),
        kind="law",
    ),
    Claim(
        "cool-leaves-more-unsolved",
        "the cool policy leaves at least as many held-out sums unsolved as T = 1",
        _every(lambda s: _at(s.sparse, 1.0).never <= s.sparse[0].never),
        lambda F: [[r.never for r in F.by_seed[s].sparse] for s in F.seeds],
        kind="law",
    ),
    Claim(
        "coolest-worst-at-64",
        "the coolest temperature has the lowest pass@64, every seed",
        _every(lambda s: s.sparse[0].pass_at_k[-1] == min(r.pass_at_k[-1] for r in s.sparse)),
        kind="law",
    ),
    Claim(
        "coolest-fewest-mixed",
        "the coolest temperature mixes the fewest groups of 16, every seed",
        lambda F: all(
            F.by_seed[s].sparse[0].mixed[_gi(F)] == min(r.mixed[_gi(F)] for r in F.by_seed[s].sparse) for s in F.seeds
        ),
        kind="law",
    ),
    Claim(
        "hot-writes-longer",
        "hotter sampling writes longer answers, every seed",
        _every(lambda s: s.sparse[-1].tokens > s.sparse[0].tokens),
        kind="law",
    ),
    Claim(
        "cool-batches-repeat",
        "cool batches are mostly repeats, hot ones less so, every seed",
        _every(lambda s: s.coverage[0].duplicate > 0.5 and s.coverage[0].duplicate > s.coverage[-1].duplicate),
        kind="law",
    ),
    Claim(
        "cool-round-stale",
        "almost nothing in a second cool round is new (under a tenth), every seed",
        _every(lambda s: s.coverage[0].novel_share < 0.1),
        kind="law",
    ),
    Claim(
        "hot-adds-junk",
        "hot sampling adds malformed and cut-off answers, every seed",
        _every(
            lambda s: (
                s.coverage[-1].malformed + s.coverage[-1]["budget-stopped"]
                > s.coverage[0].malformed + s.coverage[0]["budget-stopped"]
            )
        ),
        kind="law",
    ),
    Claim(
        "hot-is-novel",
        "hot sampling gives more novel answers in a second round, every seed",
        _every(lambda s: s.coverage[0].novel_share < s.coverage[-1].novel_share),
        kind="law",
    ),
    Claim(
        "one-right-per-group",
        "a group holds at most one distinct right answer",
        lambda F: (
            all(r.accepted <= 1 / F.group + 1e-12 for s in F.seeds for r in F.by_seed[s].coverage)
            and all(a <= 1 / F.group + 1e-12 for s in F.seeds for a in F.by_seed[s].main.flow.accepted)
        ),
        kind="law",
    ),
    Claim(
        "gain-is-repeats",
        "most of main's reward gain is repeats of right answers, every seed",
        _every(lambda s: s.main.trend.reward_gain > 0 and s.main.trend.repeat_gain > 0.5 * s.main.trend.reward_gain),
        lambda F: [F.by_seed[s].main.trend for s in F.seeds],
        kind="law",
    ),
    Claim(
        "novelty-falls",
        "main's novel share falls from its first steps to its last, every seed",
        _every(lambda s: s.main.trend.novel_late < s.main.trend.novel_early),
        kind="law",
    ),
    Claim(
        "rl-raises-pass-1",
        "RL raises pass@1 on the held-out sums by more than 0.1, every seed",
        _every(lambda s: s.passk.gap[0] > 0.1),
        lambda F: [F.by_seed[s].passk.gap[0] for s in F.seeds],
        kind="law",
    ),
    Claim(
        "lead-shrinks",
        "main's lead over base is smaller at k = 256 than at k = 1, every seed",
        _every(lambda s: s.passk.gap[-1] < s.passk.gap[0]),
        lambda F: [(F.by_seed[s].passk.gap[0], F.by_seed[s].passk.gap[-1]) for s in F.seeds],
        kind="law",
    ),
    Claim(
        "rise-on-solved",
        "more than half the rise in pass@1 lies on sums base solved at least once, every seed",
        _every(lambda s: s.passk.on_solved > 0.5),
        lambda F: [F.by_seed[s].passk.on_solved for s in F.seeds],
        kind="law",
    ),
    Claim(
        "chat-below-own-format",
        "the chat answers start below what the pretrained policy knew, and RL raises them, every seed",
        _every(lambda s: s.own.before < s.own.own and s.own.after > s.own.before),
        lambda F: [F.by_seed[s].own for s in F.seeds],
        kind="law",
    ),
    Claim(
        "own-format-forgotten",
        "after RL the pretraining format is right less often than before, every seed",
        _every(lambda s: s.own.own_after < s.own.own),
        kind="law",
    ),
    Claim(
        "stale-is-clipped",
        "stale rollouts are clipped, on-policy ones almost never",
        lambda F: F.phrases.stale_clip > F.phrases.main_clip and F.phrases.main_clip < F.clip_bound,
        lambda F: (F.phrases.stale_clip, F.phrases.main_clip),
        kind="law",
    ),
    Claim(
        "record-names-selection",
        "the record names the selection rule and keeps both counts, every seed",
        _every(
            lambda s: (
                s.collection.record.selection_rule == "keep accepted"
                and s.collection.record.rollouts_used < s.collection.record.rollouts_before_filtering
                and s.collection.record.rollouts_before_filtering == s.collection.selection_total.generated
            )
        ),
        kind="law",
    ),
    Claim(
        "rft-learns",
        "keeping the accepted rollouts raises held-out reward by more than 0.1 by the last step compared, every seed",
        _every(lambda s: s.collection["accepted-only"].heldout[-1] - s.collection["accepted-only"].heldout[0] > 0.1),
        kind="law",
    ),
    Claim(
        "rft-versus-main",
        "accepted-only ends level with or above main at the last step compared (as printed), seed by seed",
        _every(
            lambda s: round(s.collection["accepted-only"].heldout[-1], 2) >= round(s.collection.main.heldout[-1], 2)
        ),
        kind="finding",
    ),
    Claim(
        "rl-forgets-more",
        "RL lowers the pretraining format's sampled accuracy more than SFT did, seed by seed",
        _every(lambda s: s.own.own_sft - s.own.own_after > s.own.own - s.own.own_sft),
        lambda F: [(F.by_seed[s].own.own, F.by_seed[s].own.own_sft, F.by_seed[s].own.own_after) for s in F.seeds],
        kind="finding",
    ),
    Claim(
        "rft-near-main",
        "accepted-only ends within 0.1 of main there, every seed",
        _every(lambda s: abs(s.collection["accepted-only"].heldout[-1] - s.collection.main.heldout[-1]) < NEAR),
        lambda F: [
            (F.by_seed[s].collection["accepted-only"].heldout[-1], F.by_seed[s].collection.main.heldout[-1])
            for s in F.seeds
        ],
        kind="law",
    ),
)
