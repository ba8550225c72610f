"""Chapter 2's facts (chapters/02-outcome-process-rewards.qmd): the reward as a specification, its verdicts
broken down, outcome against process verdicts on real rollouts, and RL with and without the step score.

Every number and range of the chapter, the choices of its sentences whose
form follows the runs, and the data its figures and tables draw, computed from the runs ``base``,
``process-base``, ``process-outcome`` and ``process-shaped`` on every seed.
The chapter shows seed 0's samples; its claims are checked on every seed
where the prose makes them of every seed, and on the shown seed where the
prose speaks of the rollouts it shows.

Its outcome-dependent choices live in :mod:`rlbook.book._rewards_words`
(the page words each case) and its claims in
:mod:`rlbook.book._rewards_claims`.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from rlbook.analysis import disagreement as d
from rlbook.analysis import reward_spec
from rlbook.analysis.selection import plain_equation_accuracy
from rlbook.book import _rewards_words as words
from rlbook.book import phrasing
from rlbook.book._rewards_claims import CLAIMS  # noqa: F401  (rlbook.book reads CLAIMS here)
from rlbook.book._shown import shown_seed
from rlbook.book.facts import Num
from rlbook.book.needs import Need, on_seeds
from rlbook.core import rewards as rw
from rlbook.core import world
from rlbook.runs import MAIN, MULTI, load, spec

PAGE = "chapters/02-outcome-process-rewards.qmd"

RUNS = {"process-outcome": "outcome only", "process-shaped": "outcome + 0.5 × process"}
"""The two multi-step RL runs the chapter compares, with what the reader calls their rewards."""
EVERY = 4
"""The chapter reads every 4th training batch of the RL runs' rollout logs."""
LATE = 3
"""How many of the last batches read make up "the end of training"."""
BOUNDED = 5
"""At most this many distinct rollouts are shown from a cell of the disagreement matrix."""
BLOCK = 12
"""How many consecutive rollouts Exercise 2.3 lists."""
EXAMPLES = 2
"""How many of the pretrained policy's commonest continuations the prose quotes."""


def needs(seeds: tuple[int, ...]) -> tuple[Need, ...]:
    return on_seeds(("base", "process-base", *RUNS), seeds)


def _plain(j: d.Judged) -> dict:
    """A judged rollout as plain data (its fields, and its cell)."""
    return {**dataclasses.asdict(j), "kind": j.kind}


def _single_step(seed: int) -> dict:
    """The single-step verdict breakdown of base's two checkpoints, and what the pretrained one writes."""
    base = load("base", seed)
    results, rows = d.checkpoint_breakdowns(base, world.split("heldout"), n=MAIN.eval_n, budget=MAIN.budget, seed=seed)
    first = results["pretrained"]
    return {
        "breakdown": rows,
        "format_share": {k: d.format_share(r) for k, r in rows.items()},
        "first_prompt": first.tasks[0].prompt,
        "continuations": [text for text, _, _ in first.answers(0)[:EXAMPLES]],
        "plain_known": plain_equation_accuracy(base.policy(0)),
    }


def _multi_step(seed: int) -> dict:
    """process-base's fresh sample judged twice: the matrix, its cells, what they hold and what is shown."""
    policy = load("process-base", seed).policy()
    judged = d.judge_rollouts(
        d.sample_rollouts(policy, world.split("heldout", "multi"), n=MULTI.eval_n, seed=seed, budget=MULTI.budget)
    )
    cells, rows, columns = d.matrix(judged)
    accepted = [j for j in judged if j.outcome_pass]
    pair = d.figure_rollouts(judged)
    block = d.exercise_rows(judged, BLOCK, avoid=frozenset(j.prompt for j in pair))
    change = d.rule_change(judged)
    return {
        "n": len(judged),
        "outcome_rate": float(np.mean([j.outcome_pass for j in judged])),
        "process_mean": float(np.mean([j.process for j in judged])),
        "matrix": {"rows": rows, "columns": columns, "counts": cells.tolist()},
        "incorrect_all_valid": int(cells[rows.index("incorrect"), columns.index(1.0)]),
        "counts": d.kind_counts(judged),
        "disagree": sum(j.disagrees for j in judged),
        "right_invalid": d.right_invalid_summary(judged),
        "partial": d.partial_credit_summary(judged),
        "valid_end": d.valid_end_summary(judged),
        "malformed_credit": sum(j.status == "malformed" and j.process > 0 for j in judged),
        "valid_share": float(np.mean([j.process_pass for j in accepted])),
        "pair": [{**_plain(j), "notes": d.step_notes(j)} for j in pair],
        "block": [_plain(j) for j in block],
        "bounded": {
            kind: [_plain(j) for j in d.bounded_sample(judged, kind, BOUNDED, seed=seed)]
            for kind in (d.RIGHT_INVALID, d.PARTIAL_CREDIT)
        },
        "rule_change": {"gained": change["gained"], "lost": change["lost"]},
        "sample": {"prompts": [j.prompt for j in judged], "completions": [j.completion for j in judged]},
    }


def _rl(seed: int) -> dict:
    """Both RL runs of one seed: first and last held-out evaluations, curves, right-through-invalid shares."""
    out = {}
    for name in RUNS:
        run = load(name, seed)
        steps, rates = d.kind_rate_over_training(run, d.RIGHT_INVALID, every=EVERY)
        out[name] = {
            **d.final_eval(run),
            "eval_steps": [e["step"] for e in run.evals],
            "accuracy": d.eval_curve(run, "heldout_expected_reward")[1],
            "validity": d.eval_curve(run, "heldout_step_validity")[1],
            "batch_steps": steps,
            "invalid_share": rates,
            "first_share": rates[0],
            "late_share": float(np.mean(rates[-LATE:])),
        }
    return out


def _seed(seed: int) -> dict:
    return {**_single_step(seed), **_multi_step(seed), "rl": _rl(seed)}


def _comparison(by_seed: dict, seeds: tuple[int, ...]) -> dict:
    """The RL comparison over seeds: the table, the figure's curves and the prose's ranges and choices."""
    table = {
        name: [
            {
                k: by_seed[s]["rl"][name][k]
                for k in ("seed", "start_accuracy", "end_accuracy", "start_validity", "end_validity")
            }
            for s in seeds
        ]
        for name in RUNS
    }
    c = d.comparison_claims(table)
    outcome, shaped = ([by_seed[s]["rl"][name] for s in seeds] for name in RUNS)
    gaps = [b["end_validity"] - a["end_validity"] for a, b in zip(outcome, shaped)]
    acc_gaps = [b["end_accuracy"] - a["end_accuracy"] for a, b in zip(outcome, shaped)]
    late_gap = [a["late_share"] - b["late_share"] for a, b in zip(outcome, shaped)]
    return {
        "table": table,
        "labels": RUNS,
        "curves": {
            name: [
                {
                    k: by_seed[s]["rl"][name][k]
                    for k in ("seed", "eval_steps", "accuracy", "validity", "batch_steps", "invalid_share")
                }
                for s in seeds
            ]
            for name in RUNS
        },
        "outcome_start_accuracy": Num(c["outcome_start_accuracy"]),
        "shaped_start_accuracy": Num(c["shaped_start_accuracy"]),
        "outcome_end_accuracy": Num(c["outcome_end_accuracy"]),
        "shaped_end_accuracy": Num(c["shaped_end_accuracy"]),
        "outcome_start_validity": Num(c["outcome_start_validity"]),
        "outcome_end_validity": Num(c["outcome_end_validity"]),
        "shaped_end_validity": Num(c["shaped_end_validity"]),
        "validity_gap": Num(c["validity_gap"], ".3f"),
        "validity_gap_min": min(gaps),
        "accuracy_gap_min": min(acc_gaps),
        "late_gap_min": min(late_gap),
        "outcome_rose": phrasing.seeds([r["seed"] for r in outcome if r["end_accuracy"] > r["start_accuracy"]], seeds),
        "shaped_rose": phrasing.seeds([r["seed"] for r in shaped if r["end_accuracy"] > r["start_accuracy"]], seeds),
        "shaped_validity_wins": phrasing.seeds([s for s, g in zip(seeds, gaps) if g > 0], seeds),
        "accuracy_gaps": phrasing.span(acc_gaps, "+.3f", " to "),
        "validity_gaps": phrasing.span(gaps, "+.3f", " to "),
        "outcome_accuracy_span": phrasing.span([r["end_accuracy"] for r in outcome]),
        "outcome_move": words.move(c["outcome_start_validity"], c["outcome_end_validity"]),
        "outcome_drift": words.directions(
            [r["start_validity"] for r in outcome], [r["end_validity"] for r in outcome], seeds
        ),
        "first_share": phrasing.span([r["first_share"] for r in outcome], ".0%"),
        "late_share": phrasing.span([r["late_share"] for r in outcome], ".0%"),
        "shaped_late_share": phrasing.span([r["late_share"] for r in shaped], ".0%"),
        "growth": {r["seed"]: Num(r["late_share"] / r["first_share"], ".2f") for r in outcome},
        "peak_share": Num(max(max(r["invalid_share"]) for r in outcome + shaped), ".0%"),
        "coin_odds": phrasing.number_word(2 ** len(seeds)),
    }


def _shaped() -> dict:
    """What the shaped reward pays, read off the verifier itself on a right answer and on a half-right one."""
    verify, task = rw.ShapedVerifier(), world.Task((3, 4, 5))
    s1, s2 = task.steps
    return {
        "weight": Num(verify.weight, "g"),
        "best": Num(verify(task.prompt, task.completion).reward, "g"),
        "half_right": Num(verify(task.prompt, f"{s1},{s2 + 1}{world.EOT}").reward, "g"),
    }


def compute(seeds: tuple[int, ...]) -> dict:
    """Every fact of chapter 2 on ``seeds`` (the samples of each seed; those of :data:`SHOWN` are shown)."""
    by_seed = {seed: _seed(seed) for seed in seeds}
    shown = by_seed[shown_seed(seeds)]
    pre, sft = shown["breakdown"]["pretrained"], shown["breakdown"]["after SFT"]
    counts = shown["counts"]
    pbase = spec("process-base")
    return {
        "seeds": list(seeds),
        "shown": shown_seed(seeds),
        "by_seed": by_seed,
        "spec": reward_spec.spec_table(rw.ExactVerifier()),
        "shortcuts": reward_spec.shortcut_rows(),
        "mismatches": [r["case"] for r in reward_spec.shortcut_mismatches()],
        "n_cases": len(reward_spec.SHORTCUT_CASES),
        "statuses": rw.STATUSES,
        "n_heldout": len(world.split("heldout")),
        "eval_n": MAIN.eval_n,
        "budget": MAIN.budget,
        "breakdown": shown["breakdown"],
        "pre": {
            **words.pretrained_reward(pre),
            "format": words.how_many(shown["format_share"]["pretrained"]),
            "right_first": pre["right_number_rejected"],
            "samples": pre["samples"],
            "prompt": f"`{shown['first_prompt']}`",
            "continuations": phrasing.listing([f"`{t}`" for t in shown["continuations"]]),
        },
        "sft": {"reward": Num(sft["expected_reward"]), "format_share": Num(shown["format_share"]["after SFT"], ".0%")},
        "plain_known": words.how_many(min(by_seed[s]["plain_known"] for s in seeds)),
        "process_parent": pbase.parent,
        "multi": {
            "n_heldout": len(world.split("heldout", "multi")),
            "eval_n": MULTI.eval_n,
            "budget": MULTI.budget,
            "n_sft": len(world.split("sft", "multi")),
            "n": shown["n"],
            "outcome_rate": Num(shown["outcome_rate"], ".0%"),
            "process_mean": Num(shown["process_mean"]),
        },
        "pair": shown["pair"],
        "matrix": shown["matrix"],
        "right_invalid": {
            "n": counts[d.RIGHT_INVALID],
            "share": Num(counts[d.RIGHT_INVALID] / shown["n"], ".0%"),
            "off_by_one": shown["right_invalid"]["off_by_one"],
        },
        "partial": {
            "n": counts[d.PARTIAL_CREDIT],
            "share": Num(counts[d.PARTIAL_CREDIT] / shown["n"], ".0%"),
            **{k: shown["partial"][k] for k in ("first_valid", "second_valid")},
        },
        "valid_end": words.valid_end(by_seed, seeds),
        "broken_end": words.broken_end(by_seed, seeds),
        "refuse_malformed": words.refuse_malformed(shown["malformed_credit"]),
        "disagree": shown["disagree"],
        "valid_share": Num(shown["valid_share"], ".0%"),
        "bounded": {"right_invalid": shown["bounded"][d.RIGHT_INVALID], "partial": shown["bounded"][d.PARTIAL_CREDIT]},
        "rl": {
            "steps": MULTI.steps,
            "group": MULTI.group_size,
            "prompts": MULTI.prompts_per_step,
            "checkpoint_every": MULTI.checkpoint_every,
            "every": EVERY,
            "late": phrasing.number_word(LATE),
        },
        "shaped": _shaped(),
        "comparison": _comparison(by_seed, seeds),
        "sample": shown["sample"],
        "block": {
            "rows": shown["block"],
            "prompts": [j["prompt"] for j in shown["block"]],
            "completions": [j["completion"] for j in shown["block"]],
        },
    }
