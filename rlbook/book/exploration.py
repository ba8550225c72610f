"""Chapter 6's facts (chapters/06-exploration-rollouts.qmd): what sampling shows the reward, and rollouts as data.

Every number and range of the chapter, the choices of its sentences whose
form follows the runs, and the data its figures and tables draw, computed on
every seed: ``base`` sampled at
several temperatures (pass@k, mixed groups, the exploration audit), the
batches ``main`` trained on, pass@k before and after RL at equal budgets,
what the pretrained policy knew in its own format, and the runs ``stale`` and
``accepted-only`` (how rollouts are collected). The chapter draws the batch
audit of :data:`SHOWN`; its claims hold on every seed.

This module measures the runs and lays out the tables and the figures' data;
the prose's outcome-dependent numbers and choices (the page words each case)
live in :mod:`rlbook.book._exploration_words` and its claims in
:mod:`rlbook.book._exploration_claims`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rlbook.analysis import audit, passk
from rlbook.book._exploration_claims import CLAIMS, NEAR, PASS1_RISE  # noqa: F401  (rlbook.book reads CLAIMS here)
from rlbook.book._exploration_words import CLIP_FORMAT, clipped, main_clip, phrases, seed_range
from rlbook.book._shown import shown_seed
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
        "pass1_rise": Num(PASS1_RISE, ".1f"),
        "phrases": phrases(by_seed, seeds, lag),
        "tables": _tables(by_seed, seeds, lag),
        "figures": {
            "novel": {s: by_seed[s]["main"]["flow"]["novel_share"] for s in seeds},
            "steps": by_seed[shown_seed(seeds)]["main"]["flow"]["step"],
            "before_after": {s: {k: by_seed[s]["passk"][k] for k in ("before", "after", "gap")} for s in seeds},
            "stale": {s: {n: by_seed[s]["collection"][n] for n in ("main", "stale")} for s in seeds},
        },
    }


def _stale_table(col: dict, seeds: tuple[int, ...], lag: int) -> dict:
    """Chapter 6's table of ``stale`` against ``main``, seed by seed: clipped shares and held-out reward at the end.

    ``main``'s clipped share gets a column only where its seeds print
    differently (:func:`rlbook.book._exploration_words.main_clip`); the
    prose gives it either way.
    """
    cols = [col[s] for s in seeds]
    shares = {name: clipped(cols, name, lag) for name in ("stale", "main")}
    clips = {name: [format(v, CLIP_FORMAT) for v in values] for name, values in shares.items()}
    names = ("stale", "main") if main_clip(shares["main"], seeds)["case"] == "differs" else ("stale",)
    return {
        "header": ["seed", *(f"tokens clipped, {n}" for n in names), "held-out, stale", "held-out, main"],
        "rows": [
            [s, *(clips[n][i] for n in names), f"{c['stale']['heldout'][-1]:.2f}", f"{c['main']['heldout'][-1]:.2f}"]
            for i, (s, c) in enumerate(zip(seeds, cols, strict=True))
        ],
    }


TABLE_DASH = "\u2060–\u2060"
"""The dash of a range in a table cell, joined to its ends so that a narrow column never breaks the range."""
ARROW = "\u00a0→\u00a0"
"""From one value to another in a table cell, held together in the same way."""


def _tables(by_seed: dict, seeds: tuple[int, ...], lag: int) -> dict:
    """The rows of the chapter's tables, formatted; each table a ``header`` and its ``rows``."""

    def span(values, fmt=".2f"):
        return seed_range(values, fmt, TABLE_DASH)

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
        "stale": _stale_table(col, seeds, lag),
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
