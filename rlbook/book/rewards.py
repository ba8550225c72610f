"""Chapter 2's facts (chapters/02-outcome-process-rewards.qmd): the reward as a specification, its verdicts
broken down, outcome against process verdicts on real rollouts, and RL with and without the step score.

Every number, range and outcome-dependent phrase of the chapter, and the
data its figures and tables draw, computed from the runs ``base``,
``process-base``, ``process-outcome`` and ``process-shaped`` on every seed.
The chapter shows seed 0's samples; its claims are checked on every seed
where the prose makes them of every seed, and on the shown seed where the
prose speaks of the rollouts it shows.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from rlbook.analysis import disagreement as d
from rlbook.analysis import reward_spec
from rlbook.analysis.selection import plain_equation_accuracy
from rlbook.book import phrasing
from rlbook.book._shown import shown_seed
from rlbook.book.claims import Claim, every, every_seed
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


def _how_many(share: float) -> str:
    """A share as the words that open a clause: "every one", "almost every one" (rounds to 100 %), "97 %"."""
    if share == 1.0:
        return "every one"
    return "almost every one" if f"{share:.0%}" == "100%" else f"{share:.0%}"


def _each_of(clause: str, share: float) -> str:
    """``clause`` opened by how much of it: "every one of the plain sums", "97% of the plain sums"."""
    return f"{_how_many(share)} of {clause}"


def _format_clause(share: float) -> str:
    """How many of the pretrained policy's rejections fail on format, as a clause with its verb agreeing."""
    many = _how_many(share)
    if "every one" in many:
        return f"{many} of its rejections is a failure of format"
    return f"{many} of its rejections are failures of format"


def _pretrained_reward(row: dict) -> dict:
    """What the pretrained checkpoint earned, said without offering a zero as a count."""
    if row["accepted"] == 0:
        return {"earns": "nothing", "detail": f"not one of its {row['samples']:,} answers is accepted"}
    return {
        "earns": "almost nothing",
        "detail": f"{row['accepted']:,} of its {row['samples']:,} answers are "
        f"accepted, an expected reward of {row['expected_reward']:.2f}",
    }


def _valid_end(by_seed: dict, seeds: tuple[int, ...]) -> str:
    """What the book's samples put in the cell "every step valid, but no reward", seed by seed."""
    sizes = {s: by_seed[s]["valid_end"]["malformed"] + by_seed[s]["valid_end"]["incomplete"] for s in seeds}
    filled = [s for s in seeds if sizes[s]]
    if not filled:
        return (
            "In the book's samples the cell is empty on every seed: whenever this policy writes two valid "
            "steps, it also ends the answer as the format asks."
        )
    shown = by_seed[shown_seed(seeds)]["valid_end"]
    if not sizes[shown_seed(seeds)]:
        return (
            f"The shown sample leaves the cell empty, but the samples of {phrasing.seeds(filled, seeds)} "
            "do not: a policy that runs on past its answer fills it."
        )
    third = shown["extra_number"]
    tail = (
        f"; in {phrasing.share(third, sizes[shown_seed(seeds)])} of them the policy went on to write a third number, as if "
        "continuing a chain"
        if third
        else ""
    )
    return (
        f"In the shown sample {phrasing.number_word(sizes[shown_seed(seeds)])} rollouts land here "
        f"({shown['malformed']} malformed, {shown['incomplete']} stopped by the budget){tail}."
    )


def _directions(starts: list[float], ends: list[float], seeds: tuple[int, ...]) -> str:
    """Which seeds ended above their start and which below: "up on seeds 0 and 1 and down on seed 2"."""
    up = [s for s, a, b in zip(seeds, starts, ends) if b > a]
    down = [s for s, a, b in zip(seeds, starts, ends) if b < a]
    parts = [
        f"up on {phrasing.seeds(up, seeds)}" if up else "",
        f"down on {phrasing.seeds(down, seeds)}" if down else "",
    ]
    return " and ".join(p for p in parts if p) or f"level on {phrasing.seeds(seeds, seeds)}"


def _comparison(by_seed: dict, seeds: tuple[int, ...]) -> dict:
    """The RL comparison over seeds: the table, the figure's curves and the prose's ranges and phrases."""
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
        "outcome_drift": _directions(
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
            **_pretrained_reward(pre),
            "format": _format_clause(shown["format_share"]["pretrained"]),
            "right_first": pre["right_number_rejected"],
            "samples": pre["samples"],
            "prompt": f"`{shown['first_prompt']}`",
            "continuations": phrasing.listing([f"`{t}`" for t in shown["continuations"]]),
        },
        "sft": {"reward": Num(sft["expected_reward"]), "format_share": Num(shown["format_share"]["after SFT"], ".0%")},
        "plain_known": _each_of("the plain sums `a+b=`", min(by_seed[s]["plain_known"] for s in seeds)),
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
        "valid_end": _valid_end(by_seed, seeds),
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


def _every(key):
    """A check that ``key(seed facts)`` holds on every seed of the facts."""
    return every(key)


def _on_seeds(key):
    """What ``key(seed facts)`` is on each seed, for a failing claim's message."""
    return lambda F: {s: key(F.by_seed[s]) for s in F.seeds}


def _pre(s):
    return s.breakdown["pretrained"]


def _sft(s):
    return s.breakdown["after SFT"]


CLAIMS = (
    Claim(
        "cases-as-intended",
        "every known case and shortcut gets the status it was written to get",
        lambda F: not F.mismatches,
        lambda F: F.mismatches,
        kind="law",
    ),
    Claim(
        "pretrained-fails-on-format",
        "almost all the pretrained policy's rejections fail on format, on every seed",
        _every(lambda s: s.format_share["pretrained"] > 0.99),
        _on_seeds(lambda s: s.format_share["pretrained"]),
        kind="law",
    ),
    Claim(
        "pretrained-never-ends",
        "the pretrained policy almost never ends an answer, on every seed",
        _every(lambda s: _pre(s)["incomplete"] > 0.99 * _pre(s)["samples"]),
        _on_seeds(lambda s: _pre(s)["incomplete"]),
        kind="law",
    ),
    Claim(
        "pretrained-writes-right-sums",
        "some rejected pretrained answers start with the right sum, on every seed",
        _every(lambda s: _pre(s)["right_number_rejected"] > 0),
        _on_seeds(lambda s: _pre(s)["right_number_rejected"]),
        kind="law",
    ),
    Claim(
        "sft-fails-on-arithmetic",
        "after SFT most failures are wrong sums, on every seed",
        _every(lambda s: s.format_share["after SFT"] < 0.5),
        _on_seeds(lambda s: s.format_share["after SFT"]),
        kind="law",
    ),
    Claim(
        "sft-raises-reward",
        "SFT raises the expected reward above the pretrained policy's, on every seed",
        _every(lambda s: _sft(s)["expected_reward"] > _pre(s)["expected_reward"]),
        _on_seeds(lambda s: (_pre(s)["expected_reward"], _sft(s)["expected_reward"])),
        kind="law",
    ),
    Claim(
        "process-base-knows-plain-sums",
        "process-base starts from base's pretrained policy, which already writes the plain sums right",
        lambda F: F.process_parent == "base" and all(F.by_seed[s].plain_known > 0.9 for s in F.seeds),
        _on_seeds(lambda s: s.plain_known),
        kind="law",
    ),
    Claim(
        "valid-steps-imply-right-sum",
        "two valid steps force the right final sum: no wrong value has both steps valid, on every seed",
        _every(lambda s: s.incorrect_all_valid == 0),
        _on_seeds(lambda s: s.incorrect_all_valid),
        kind="law",
    ),
    Claim(
        "both-cells-filled",
        "some right answers come through an invalid step and some wrong answers earn partial credit, on every seed",
        _every(lambda s: s.counts[d.RIGHT_INVALID] > 0 and s.counts[d.PARTIAL_CREDIT] > 0),
        _on_seeds(lambda s: (s.counts[d.RIGHT_INVALID], s.counts[d.PARTIAL_CREDIT])),
        kind="law",
    ),
    Claim(
        "wrong-first-sums-mostly-off-by-one",
        "most right answers through an invalid step wrote a first sum off by one, on every seed",
        _every(lambda s: s.right_invalid["off_by_one"] > s.right_invalid["total"] / 2),
        _on_seeds(lambda s: (s.right_invalid["off_by_one"], s.right_invalid["total"])),
        kind="law",
    ),
    Claim(
        "partial-credit-both-ways",
        "partial credit comes both from a slip after a right first sum and from a "
        "wrong first sum carried forward, on every seed",
        _every(
            lambda s: (
                s.partial["first_valid"] > 0
                and s.partial["second_valid"] > 0
                and s.partial["first_valid"] + s.partial["second_valid"] == s.partial["total"]
            )
        ),
        _on_seeds(lambda s: dict(s.partial)),
        kind="law",
    ),
    Claim(
        "figure-agrees-then-disagrees",
        "the figure's two rollouts answer one prompt: the judges agree on the "
        "first and disagree on the second, on every seed",
        _every(
            lambda s: (
                len(s.pair) == 2
                and s.pair[0]["prompt"] == s.pair[1]["prompt"]
                and s.pair[0]["kind"] == d.AGREE
                and s.pair[0]["status"] == "accepted"
                and s.pair[1]["kind"] == d.RIGHT_INVALID
            )
        ),
        _on_seeds(lambda s: [(j["prompt"], j["completion"], j["kind"]) for j in s.pair]),
        kind="law",
    ),
    Claim(
        "block-holds-a-choice",
        "Exercise 2.3's block holds rollouts the judges disagree on and rollouts they "
        "agree on, none for the figure's prompt",
        _every(
            lambda s: (
                {j["kind"] in d.DISAGREEMENTS for j in s.block} == {True, False}
                and not {j["prompt"] for j in s.block} & {j["prompt"] for j in s.pair}
            )
        ),
        _on_seeds(lambda s: [j["kind"] for j in s.block]),
        kind="law",
    ),
    Claim(
        "right-answers-mostly-valid",
        "most of the fine-tuned policy's accepted answers come through valid steps, on every seed",
        _every(lambda s: s.valid_share > 0.5),
        _on_seeds(lambda s: s.valid_share),
        kind="law",
    ),
    Claim(
        "rule-change-moves-both-ways",
        "judging step 2 against the true partial sum takes credit from some "
        "rollouts and gives it to others, on every seed",
        _every(lambda s: s.rule_change["gained"] > 0 and s.rule_change["lost"] > 0),
        _on_seeds(lambda s: dict(s.rule_change)),
        kind="law",
    ),
    Claim(
        "rl-raises-accuracy",
        "both rewards raise held-out accuracy on average over the seeds",
        lambda F: (
            F.comparison.outcome_end_accuracy > F.comparison.outcome_start_accuracy
            and F.comparison.shaped_end_accuracy > F.comparison.shaped_start_accuracy
        ),
        lambda F: (
            F.comparison.outcome_start_accuracy,
            F.comparison.outcome_end_accuracy,
            F.comparison.shaped_start_accuracy,
            F.comparison.shaped_end_accuracy,
        ),
        kind="law",
    ),
    Claim(
        "outcome-only-validity-barely-moves",
        "outcome-only RL, which never looks at the steps, moves the mean step validity by less than 0.05 either way",
        lambda F: abs(F.comparison.outcome_end_validity - F.comparison.outcome_start_validity) < 0.05,
        lambda F: (F.comparison.outcome_start_validity, F.comparison.outcome_end_validity),
        kind="law",
    ),
    Claim(
        "shaped-ends-more-valid",
        "the shaped runs end with the higher step validity on average",
        lambda F: F.comparison.validity_gap > 0,
        lambda F: F.comparison.validity_gap,
        kind="law",
    ),
    Claim(
        "invalid-share-grows",
        "outcome-only RL raises the share of right answers through an invalid step to over "
        "one and a half times its first batch's",
        every_seed(lambda F, s: F.comparison.growth[s] > 1.5),
        lambda F: dict(F.comparison.growth),
        kind="finding",
    ),
    Claim(
        "outcome-only-ends-above-shaped",
        "the outcome-only run ends with the higher share of right answers through an invalid step, on every seed",
        lambda F: F.comparison.late_gap_min > 0,
        lambda F: F.comparison.late_gap_min,
        kind="law",
    ),
    Claim(
        "invalid-share-stays-small",
        "right answers through an invalid step stay well under half of every batch read",
        lambda F: F.comparison.peak_share < 0.5,
        lambda F: F.comparison.peak_share,
        kind="law",
    ),
)
