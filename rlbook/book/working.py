"""Chapter 7's facts (chapters/07-written-working.qmd): written working under an outcome-only reward.

Every number and range of the chapter, the choices of its sentences whose
form follows the runs, and the data its figures and tables draw, computed on every seed from the worked world's
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
above the control and what execution within a style added are chosen from
the facts by :mod:`rlbook.book._working_words` and worded by the page, as is
what ``worked-rediscover`` did, whose seeds can part ways.
"""

from __future__ import annotations

from typing import Any

import torch

from rlbook.analysis.audit import VERDICT_WORDS
from rlbook.analysis.working import WORKED_RUNS, checkpoint_curve, seed_rows
from rlbook.book import phrasing
from rlbook.book._shown import SHOWN, shown_seed
from rlbook.book._working_words import TAKEOVER, phrases, run_rows
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
CURVE_FIELDS = ("step", "share", "length", "accuracy", "style_entropy", "p_worked")
"""What each checkpoint of a run contributes to the chapter's figures."""
ARROW = "\u00a0→\u00a0"
"""A before-to-after arrow in a table cell, joined to its ends so that a narrow column never breaks it."""


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
        "phrases": phrases(by_seed, seeds),
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


def _tables(by_seed: dict, seeds: tuple[int, ...]) -> dict:
    """The rows of the chapter's tables, formatted; each table a ``header`` and its ``rows``."""

    def move(row: dict, key: str, fmt: str) -> str:
        return f"{format(row[key + '_before'], fmt)}{ARROW}{format(row[key + '_after'], fmt)}"

    worked = dict(zip(seeds, run_rows(by_seed, seeds, "worked")))
    control = dict(zip(seeds, run_rows(by_seed, seeds, "worked-direct")))
    again = dict(zip(seeds, run_rows(by_seed, seeds, "worked-rediscover")))
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
            "header": [
                "seed",
                "change in accuracy",
                "from the switch of style",
                "from execution",
                "worked answers right",
                "direct answers right before RL",
            ],
            "rows": [
                [
                    s,
                    f"{r['accuracy_after'] - r['accuracy_before']:+.2f}",
                    f"{r['gain_from_switch']:+.2f}",
                    f"{r['gain_from_execution']:+.2f}",
                    move(r, "accuracy_worked", ".2f"),
                    f"{r['accuracy_direct_before']:.2f}",
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
