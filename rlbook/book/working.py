"""Chapter 7's facts (chapters/07-written-working.qmd): written working under an outcome-only reward.

Every number, range and outcome-dependent phrase of the chapter, and the data
its figures and tables draw, computed on every seed from the worked world's
runs (:mod:`rlbook.analysis.working`): ``worked`` (RL from ``worked-base``,
whose SFT showed both answer styles), the control ``worked-direct`` (SFT on
direct answers, a budget too short for any working) and ``worked-rediscover``
(direct-only SFT, with room for the working).

The claims are those that held on seeds 0 to 2 on three numerical draws
(this machine's AVX-512 kernels, ``ATEN_CPU_CAPABILITY=avx2`` and
``default``; README, "Checking the claims on other machines"): the share of
worked answers and the answer length rise, the style choice collapses, a
worked answer is right more often than a direct one before RL, so the switch
of style adds to accuracy, and held-out accuracy rises and ends above the
control. With the first pretraining of 1,500 steps accuracy did not rise on
the AVX2 draw, which is why the pretraining is 2,000 steps
(:mod:`rlbook.runs.catalogue`). How far it rose, how far ``worked`` ended
above the control and what execution within a style added are worded from
the facts (:func:`accuracy_change`, :func:`ahead`, :func:`part`), as is
``worked-rediscover``, whose seeds can part ways (:func:`rediscovery`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from rlbook.analysis.audit import VERDICT_WORDS
from rlbook.analysis.working import WORKED_RUNS, checkpoint_curve, seed_rows
from rlbook.book import phrasing
from rlbook.book._shown import SHOWN, shown_seed
from rlbook.book.claims import Claim, every
from rlbook.book.facts import Num
from rlbook.book.needs import Need, on_seeds
from rlbook.core import rewards, world
from rlbook.core.policy import Policy, PolicyConfig
from rlbook.core.sampling import sample
from rlbook.runs import load, spec

PAGE = "chapters/07-written-working.qmd"
BASES = ("worked-base", "worked-direct-base")
RUNS = BASES + WORKED_RUNS

GROUP = 16
"""Answers sampled for the shown sum, before and after RL: one group of the training size."""
SAMPLE_SEED = 7
"""The sampler seed of the shown answers (fixed, so the page shows the same answers on every build)."""
TAKEOVER = 0.5
"""The held-out share of worked answers at or above which the chapter says they became a run's majority."""
CURVE_FIELDS = ("step", "share", "length", "accuracy", "style_entropy", "p_worked")
"""What each checkpoint of a run contributes to the chapter's figures."""
TABLE_DASH = "\u2060–\u2060"
ARROW = "\u00a0→\u00a0"
"""A range's dash and a before-to-after arrow in a table cell, joined to their ends so a narrow column keeps them."""


def needs(seeds: tuple[int, ...]) -> tuple[Need, ...]:
    return on_seeds(RUNS, seeds)


def _curve(name: str, seed: int) -> dict:
    """One run's held-out measurements at every checkpoint, field by field (:data:`CURVE_FIELDS`)."""
    points = checkpoint_curve(load(name, seed))
    return {field: [getattr(p, field) for p in points] for field in CURVE_FIELDS}


def shown_task() -> world.WorkedTask:
    """The held-out sum whose answers the chapter shows: the first held-out pair whose units column carries."""
    task = next(t for t in world.split("heldout", "worked") if sum(x % 10 for x in t.operands) >= 10)
    assert isinstance(task, world.WorkedTask)  # the worked world's split holds WorkedTasks
    return task


def _answers(policy: Policy, task: world.Task, seed: int) -> list[dict]:
    """The distinct answers among :data:`GROUP` samples of ``policy`` for ``task``, most frequent first."""
    rollouts = sample(
        policy,
        [task.prompt],
        n=GROUP,
        budget=world.WORKED_BUDGET,
        generator=torch.Generator().manual_seed(SAMPLE_SEED + seed),
    )
    texts = rollouts.completions()
    verify = rewards.get_verifier("exact")
    seen: dict[str, int] = {}
    for text in texts:
        seen[text] = seen.get(text, 0) + 1
    return [
        {"text": text, "count": count, "status": verify(task.prompt, text).status}
        for text, count in sorted(seen.items(), key=lambda item: -item[1])
    ]


def _samples(seed: int) -> dict:
    """What ``worked-base`` and ``worked``'s last checkpoint write for :func:`shown_task`, one group each, and
    how many answers of each group are worked, in words."""
    task = shown_task()
    run = load("worked", seed)
    out: dict[str, Any] = {
        "prompt": task.prompt,
        "answer": task.answer,
        "step": run.steps[-1],
        "before": _answers(load("worked-base", seed).policy(), task, seed),
        "after": _answers(run.policy(), task, seed),
    }
    for when in ("before", "after"):
        worked = sum(a["count"] for a in out[when] if world.answer_style(a["text"]) == "worked")
        out[f"worked_{when}"] = phrasing.share(worked, GROUP)
    return out


def _world() -> dict:
    """The worked world and its recipe, read from the task, the catalogue and a policy of each world."""
    task = world.WorkedTask((47, 38), style="worked")
    pretrain, sft, rl = spec("worked-base").pretrain, spec("worked-base").sft, spec("worked").rl
    control = spec("worked-direct").rl
    assert pretrain is not None and sft is not None and rl is not None and control is not None  # the catalogue's runs
    worked = load("worked-base", SHOWN).policy()
    chat = Policy(PolicyConfig())
    heldout, every = world.split("heldout", "worked"), world.split("all", "worked")
    return {
        "low": min(min(t.operands) for t in every),
        "high": max(max(t.operands) for t in every),
        "pairs": Num(len(every), ",.0f"),
        "heldout": len(heldout),
        "train": len(world.split("train", "worked")),
        "sft": len(world.split("sft", "worked")),
        "prompt": task.prompt,
        "direct": f"{task.answer}{world.EOT}",
        "worked": task.completion,
        "working": task.working,
        "budget": rl.budget,
        "control_budget": control.budget,
        "params": Num(worked.num_parameters(), ",.0f"),
        "chat_params": Num(chat.num_parameters(), ",.0f"),
        "width": worked.cfg.d_model,
        "chat_width": chat.cfg.d_model,
        "layers": worked.cfg.n_layer,
        "heads": worked.cfg.n_head,
        "context": worked.cfg.block_size,
        "pretrain_steps": Num(pretrain.steps, ",.0f"),
        "sft_steps": sft.steps,
        "rl_steps": rl.steps,
        "prompts": rl.prompts_per_step,
        "group": rl.group_size,
        "every": rl.checkpoint_every,
        "eval_n": rl.eval_n,
        "lr": rl.lr,
        "column_share": Num(world.COLUMN_SHARE, ".0%"),
        "two_digit_share": Num((1 - world.COLUMN_SHARE) / 2, ".0%"),
    }


def _seed(seed: int) -> dict:
    """Everything the chapter measures on one seed: each RL run's before-and-after row and its curves."""
    rows = seed_rows([load(name, seed) for name in WORKED_RUNS])
    return {"rows": {row["run"]: row for row in rows}, "curves": {name: _curve(name, seed) for name in WORKED_RUNS}}


def compute(seeds: tuple[int, ...]) -> dict:
    """Every fact of chapter 7 on ``seeds`` (the answers of :data:`SHOWN` shown one by one)."""
    by_seed = {s: _seed(s) for s in seeds}
    return {
        "seeds": list(seeds),
        "shown": shown_seed(seeds),
        "group": GROUP,
        "takeover": TAKEOVER,
        "world": _world(),
        "by_seed": by_seed,
        "samples": _samples(shown_seed(seeds)),
        "phrases": _phrases(by_seed, seeds),
        "tables": _tables(by_seed, seeds),
        "figures": {name: {s: by_seed[s]["curves"][name] for s in seeds} for name in WORKED_RUNS},
        "exercise": {"split": [_reader_split(by_seed[s]["rows"]["worked"]) for s in seeds]},
    }


def _reader_split(row: dict) -> list[dict]:
    """``worked``'s shares and accuracies before and after RL, as Exercise 7.2 hands them to the reader's function
    (each style's accuracy 0.0 where that style was not written)."""
    return [
        {
            "share": row[f"share_{when}"],
            "worked": row[f"accuracy_worked_{when}"] or 0.0,
            "direct": row[f"accuracy_direct_{when}"] or 0.0,
        }
        for when in ("before", "after")
    ]


# ---------------------------------------------------------------- wording


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


def _rows(by_seed: dict, seeds: tuple[int, ...], name: str) -> list[dict]:
    return [by_seed[s]["rows"][name] for s in seeds]


def _phrases(by_seed: dict, seeds: tuple[int, ...]) -> dict:
    """The outcome-dependent numbers and words of the prose."""
    worked, control = _rows(by_seed, seeds, "worked"), _rows(by_seed, seeds, "worked-direct")
    again = _rows(by_seed, seeds, "worked-rediscover")
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


def _tables(by_seed: dict, seeds: tuple[int, ...]) -> dict:
    """The rows of the chapter's tables, formatted; each table a ``header`` and its ``rows``."""

    def move(row: dict, key: str, fmt: str) -> str:
        return f"{format(row[key + '_before'], fmt)}{ARROW}{format(row[key + '_after'], fmt)}"

    worked = dict(zip(seeds, _rows(by_seed, seeds, "worked")))
    control = dict(zip(seeds, _rows(by_seed, seeds, "worked-direct")))
    again = dict(zip(seeds, _rows(by_seed, seeds, "worked-rediscover")))
    return {
        "runs": {
            "header": ["seed", "worked share", "mean length", "accuracy", "control's accuracy", "style-choice entropy"],
            "rows": [
                [
                    s,
                    move(r, "share", ".0%"),
                    move(r, "length", ".1f"),
                    move(r, "accuracy", ".2f"),
                    move(control[s], "accuracy", ".2f"),
                    move(r, "style_entropy", ".2f"),
                ]
                for s, r in worked.items()
            ],
        },
        "split": {
            "header": ["seed", "change in accuracy", "from the switch of style", "from execution"],
            "rows": [
                [
                    s,
                    f"{r['accuracy_after'] - r['accuracy_before']:+.2f}",
                    f"{r['gain_from_switch']:+.2f}",
                    f"{r['gain_from_execution']:+.2f}",
                ]
                for s, r in worked.items()
            ],
        },
        "again": {
            "header": ["seed", "worked share", "accuracy", "style-choice entropy", "edge before RL (`worked`)"],
            "rows": [
                [
                    s,
                    move(r, "share", ".1%"),
                    move(r, "accuracy", ".2f"),
                    move(r, "style_entropy", ".2f"),
                    f"{r['working_pays_before']:+.2f} ({worked[s]['working_pays_before']:+.2f})",
                ]
                for s, r in again.items()
            ],
        },
    }


def samples_table(samples) -> dict:
    """The shown answers as a table: the policy, each distinct answer, how often it was written, its verdict."""
    rows = []
    for when, label in (("before", "before RL"), ("after", f"after RL (step {samples['step']})")):
        for answer in samples[when]:
            rows.append([label, f"`{answer['text']}`", answer["count"], VERDICT_WORDS[answer["status"]]])
    return {
        "header": ["policy", "answer", f"times in {sum(a['count'] for a in samples['before'])}", "verdict"],
        "rows": rows,
    }


# ---------------------------------------------------------------- claims


def _every(check):
    """A check that ``check(rows of seed)`` holds on every seed."""
    return every(lambda s: check(s.rows))


def _show(name: str, *keys: str):
    return lambda F: [[F.by_seed[s].rows[name][k] for k in keys] for s in F.seeds]


CLAIMS = (
    Claim(
        "share-rises",
        "under worked the share of worked answers rises by more than 0.3, every seed",
        _every(lambda r: r.worked.share_after - r.worked.share_before > 0.3),
        _show("worked", "share_before", "share_after"),
        kind="law",
    ),
    Claim(
        "length-rises",
        "under worked the mean answer length rises by more than 3 characters, every seed",
        _every(lambda r: r.worked.length_after - r.worked.length_before > 3),
        _show("worked", "length_before", "length_after"),
        kind="law",
    ),
    Claim(
        "choice-collapses",
        "under worked the style choice's entropy falls to under half its start, every seed",
        _every(lambda r: r.worked.style_entropy_after < 0.5 * r.worked.style_entropy_before),
        _show("worked", "style_entropy_before", "style_entropy_after"),
        kind="law",
    ),
    Claim(
        "working-pays",
        "before RL a worked answer is right more often than a direct one, every seed",
        _every(lambda r: r.worked.accuracy_worked_before > r.worked.accuracy_direct_before),
        _show("worked", "accuracy_worked_before", "accuracy_direct_before"),
        kind="law",
    ),
    Claim(
        "switch-adds",
        "the switch of style adds to worked's accuracy, every seed (it follows from the two above)",
        _every(lambda r: r.worked.gain_from_switch > 0),
        _show("worked", "gain_from_switch"),
        kind="law",
    ),
    Claim(
        "execution-outweighs-switch",
        "under worked execution adds more to held-out accuracy than the switch of style, seed by seed",
        _every(lambda r: r.worked.gain_from_execution > r.worked.gain_from_switch),
        _show("worked", "gain_from_switch", "gain_from_execution"),
        kind="finding",
    ),
    Claim(
        "accuracy-rises",
        "under worked held-out accuracy rises by more than 0.1, every seed",
        _every(lambda r: r.worked.accuracy_after - r.worked.accuracy_before > 0.1),
        _show("worked", "accuracy_before", "accuracy_after"),
        kind="law",
    ),
    Claim(
        "beats-control",
        "worked ends more than 0.1 above the control worked-direct in held-out accuracy, every seed",
        _every(lambda r: r.worked.accuracy_after > r["worked-direct"].accuracy_after + 0.1),
        lambda F: [
            (F.by_seed[s].rows.worked.accuracy_after, F.by_seed[s].rows["worked-direct"].accuracy_after)
            for s in F.seeds
        ],
        kind="law",
    ),
    Claim(
        "control-direct",
        "the control never has a worked answer accepted at its last checkpoint, every seed",
        _every(lambda r: r["worked-direct"].accuracy_worked_after in (None, 0.0)),
        kind="law",
    ),
    Claim(
        "control-turns-direct",
        "the control's share of worked answers, which its budget always cuts off, falls, "
        "and so does its style choice's entropy, every seed",
        _every(
            lambda r: (
                r["worked-direct"].share_after < r["worked-direct"].share_before
                and r["worked-direct"].style_entropy_after < r["worked-direct"].style_entropy_before
            )
        ),
        _show("worked-direct", "share_before", "share_after", "style_entropy_before", "style_entropy_after"),
        kind="law",
    ),
    Claim(
        "direct-sft-fewer",
        "direct-only SFT leaves fewer worked answers than SFT on both styles, every seed",
        _every(lambda r: r["worked-rediscover"].share_before < r.worked.share_before),
        lambda F: [
            (F.by_seed[s].rows["worked-rediscover"].share_before, F.by_seed[s].rows.worked.share_before)
            for s in F.seeds
        ],
        kind="law",
    ),
)
