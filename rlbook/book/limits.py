"""Chapter 5's facts (chapters/05-reward-limits.qmd): a reward hack, a learned judge over-optimised, a response policy.

Every number, range and outcome-dependent phrase of the chapter, and the data
its figures and tables draw, computed on every seed from the runs ``exploit``
and ``exploit-slow`` (the fail-open verifier), ``main`` (the honest run the
detector must leave alone), the learned judge with ``rm`` and ``rm-kl``, and
``faults`` and ``abort`` (the response policy). The chapter shows the reward
hack on one seed, the one whose held-out accuracy ended lowest among the
seeds where the loophole took over; the judge sections follow the seed the
other chapters follow (:func:`rlbook.book._shown.shown_seed`). Its claims
hold on every seed where the prose speaks of every seed.

This module measures the runs and lays out the tables and the figures' data;
the prose's outcome-dependent wording lives in :mod:`rlbook.book._limits_words`
and its claims in :mod:`rlbook.book._limits_claims`.
"""

from __future__ import annotations

from dataclasses import asdict

import numpy as np

from rlbook.analysis import audit
from rlbook.analysis import judge as judging
from rlbook.book._limits_claims import CLAIMS  # noqa: F401  (rlbook.book reads CLAIMS here)
from rlbook.book._limits_words import phrases
from rlbook.book.facts import Num
from rlbook.book.needs import Need, on_seeds
from rlbook.core import rewards as rw
from rlbook.core import world
from rlbook.core.guard import Guard
from rlbook.runs import MAIN, load, load_judge, spec
from rlbook.runs.catalogue import JUDGE

PAGE = "chapters/05-reward-limits.qmd"
RUNS = ("base", "main", "exploit", "exploit-slow", "rm", "rm-kl", "faults", "abort")
AUDIT_N = 64
"""Samples per training prompt when the chapter counts how often ``base`` writes a loophole answer."""
PROMPT = "U:3+4?|A:"
CASES = ("7#", "8#", "#", " 7#", "7?#")
"""The completions the chapter judges with both verifiers (@tbl-two-verifiers)."""
PROMPT_SETS = {"train_prompts": "training prompts", "heldout_prompts": "held-out prompts"}
"""The two sets of prompts the judge is tested on, as the chapter's table names them."""
TOP_WRONG = 5
"""The most paid-but-wrong completions the chapter lists for the shown seed's last batch."""


def needs(seeds: tuple[int, ...]) -> tuple[Need, ...]:
    return on_seeds(RUNS, seeds)


def _verifiers() -> dict:
    """The exact and the fail-open verifier on :data:`CASES`: rewards, statuses, and the table's rows."""
    exact, fail_open = rw.get_verifier("exact"), rw.get_verifier("fail-open")
    judged = [(c, exact(PROMPT, c), fail_open(PROMPT, c)) for c in CASES]
    words = audit.VERDICT_WORDS
    return {
        "prompt": PROMPT,
        "exact": [e.status for _, e, _ in judged],
        "fail_open": [f.reward for _, _, f in judged],
        "header": ["completion", "exact verifier", "fail-open verifier"],
        "rows": [
            [repr(c), f"{e.reward:.0f} ({words[e.status]})", f"{f.reward:.0f} ({words[f.status]})"]
            for c, e, f in judged
        ],
    }


def _hack(seed: int) -> dict:
    """One seed's reward hack: the ``exploit`` run's loophole, detector and route, ``exploit-slow`` beside it."""
    run, slow = load("exploit", seed), load("exploit-slow", seed)
    fail_open = rw.get_verifier("fail-open")
    report, honest, slow_report = (
        audit.hack_report(run.evals),
        audit.hack_report(load("main", seed).evals),
        audit.hack_report(slow.evals),
    )
    share, slow_share = audit.loophole_share(run.rollouts), audit.loophole_share(slow.rollouts)
    split = [audit.reward_split(s) for s in run.rollouts]
    slow_split = [audit.reward_split(s) for s in slow.rollouts]
    last = run.rollouts[-1]
    prompts = [t.prompt for t in world.split("train")]
    base_rate = audit.loophole_rate(load("base", seed).policy(), prompts, fail_open, n=AUDIT_N, seed=seed)
    return {
        "steps": [s["step"] for s in run.rollouts],
        "task": [t for t, _ in split],
        "loophole": [x for _, x in split],
        "share": share,
        "takeover": audit.takeover_step(run.rollouts),
        "report": asdict(report),
        "diagnosis": report.diagnosis,
        "reward_gain": report.reward_gain,
        "heldout_gain": report.heldout_gain,
        "verifier_gap": report.verifier_gap,
        "wrong": audit.exploiting_completions(last, fail_open, TOP_WRONG),
        "spellings": len(audit.exploiting_completions(last, fail_open, limit=None)),
        "last_step": last["step"],
        "rollouts": len(last["statuses"]),
        "dip": audit.dip_before_takeover(run.rollouts),
        "lengths": run.metric("completion_len"),
        "base_rate": base_rate,
        "slow": {
            "steps": [s["step"] for s in slow.rollouts],
            "task": [t for t, _ in slow_split],
            "loophole": [x for _, x in slow_split],
            "eval_steps": slow_report.steps,
            "share": slow_share,
            "takeover": audit.takeover_step(slow.rollouts),
            "heldout": slow_report.heldout,
            "diagnosis": slow_report.diagnosis,
        },
        "honest": {
            "flagged": honest.flagged_step,
            "diagnosis": honest.diagnosis,
            "gain": honest.heldout_gain,
            "reward": honest.train_reward,
            "heldout": honest.heldout,
        },
    }


def _judge(seed: int) -> dict:
    """One seed's learned judge: its report, best-of-n against it, and the runs ``rm`` and ``rm-kl``."""
    judge = load_judge(seed)
    bon = judging.best_of_n(load("base", seed).policy(), judge.model, seed)
    rm, kl = (judging.curves(load(name, seed)) for name in ("rm", "rm-kl"))
    found = judging.exploit(load("rm", seed))
    return {
        "report": judge.report,
        "bon": {"ns": bon.ns, "proxy": bon.proxy, "gold": bon.gold, "peak": bon.peak},
        "rm": {"steps": rm.steps, "proxy": rm.proxy, "gold": rm.gold},
        "kl": {"steps": kl.steps, "proxy": kl.proxy, "gold": kl.gold},
        "over": {"share": found.share, "top": [list(t) for t in found.top[:1]]},
    }


def _response(seed: int) -> dict:
    """One seed's response policy: the ``faults`` run's interventions and the ``abort`` run's stop."""
    faults, stopped = load("faults", seed), load("abort", seed)
    faults_cfg = spec("faults").rl
    assert faults_cfg is not None  # an RL run of the catalogue
    return {
        "events": audit.incidents(faults.log),
        "planned": [s for s, _ in faults_cfg.faults],
        "recorded": faults.record["interventions"] == faults.log["interventions"],
        "steps": faults.metric("step"),
        "reward": faults.metric("reward_mean"),
        "abort": {
            "status": stopped.record["status"],
            "step": stopped.log["abort"]["step"],
            "after": stopped.log["abort"]["threshold"],
            "checkpoint": stopped.steps[-1],
            "completed": stopped.record["steps_completed"],
        },
    }


def _pct(x: float) -> str:
    return f"{x:.0%}"


ARROW = "\u00a0→\u00a0"
"""From one value to another in a table cell, held together so that a narrow column never breaks it."""


def _arrow(a: float, b: float, fmt: str = ".2f") -> str:
    return f"{a:{fmt}}{ARROW}{b:{fmt}}"


def _figures(hack: dict, judges: dict, response: dict, seeds: tuple[int, ...]) -> dict:
    """The data the chapter's figures draw (:mod:`rlbook.figures.limits`), seed by seed."""
    first = response[seeds[0]]
    return {
        "hack": {
            s: {
                "steps": hack[s]["steps"],
                "task": hack[s]["task"],
                "loophole": hack[s]["loophole"],
                "eval_steps": hack[s]["report"]["steps"],
                "heldout": hack[s]["report"]["heldout"],
                "takeover": hack[s]["takeover"],
                "slow": {k: hack[s]["slow"][k] for k in ("steps", "task", "loophole", "eval_steps", "heldout")},
            }
            for s in seeds
        },
        "bon": {s: judges[s]["bon"] for s in seeds},
        "bon_top": Num(max(judging.NS), ",.0f"),
        "judge": {s: {"rm": judges[s]["rm"], "kl": judges[s]["kl"]} for s in seeds},
        "faults": {s: {"steps": response[s]["steps"], "reward": response[s]["reward"]} for s in seeds},
        "incidents": [{"step": e["step"], "kind": e["kind"], "metric": e["metric"]} for e in first["events"]],
    }


def _lr_row(name: str, seed: int, base_rate: float, share, takeover, heldout) -> list:
    """One row of the table comparing the two settings of the fail-open runs (chapter 5, @tbl-hack-lr).

    ``base_rate`` is the share of ``base``'s own samples that the loophole
    pays, the run's starting point, which the chapter's prose gives on one
    seed only.
    """
    return [
        name,
        seed,
        f"{base_rate:.1%}",
        _arrow(share[0], share[-1], ".0%"),
        _pct(max(share)),
        takeover or "–",
        _arrow(heldout[0], heldout[-1]),
    ]


def _tables(hack: dict, judges: dict, response: dict, seeds: tuple[int, ...], shown: int | None) -> dict:
    """The rows of the chapter's tables, formatted; each table a ``header`` and its ``rows``."""
    words = audit.VERDICT_WORDS
    lr = [
        _lr_row("exploit", s, hack[s]["base_rate"], hack[s]["share"], hack[s]["takeover"], hack[s]["report"]["heldout"])
        for s in seeds
    ]
    lr += [
        _lr_row(
            "exploit-slow",
            s,
            hack[s]["base_rate"],
            hack[s]["slow"]["share"],
            hack[s]["slow"]["takeover"],
            hack[s]["slow"]["heldout"],
        )
        for s in seeds
    ]
    tables = {
        "hack_lr": {
            "header": ["run", "seed", "`base`", "loophole share", "largest", "takeover", "held-out"],
            "rows": lr,
        },
        "seeds": {
            "header": ["seed", "takeover", "flagged", "diagnosis", "held-out", "`main`"],
            "rows": [
                [
                    s,
                    h["takeover"] or "–",
                    h["report"]["flagged_step"] or "–",
                    h["diagnosis"],
                    _arrow(h["report"]["heldout"][0], h["report"]["heldout"][-1]),
                    h["honest"]["diagnosis"],
                ]
                for s, h in ((s, hack[s]) for s in seeds)
            ],
        },
        "seeds_detail": {
            "header": [
                "seed",
                "largest share",
                "commonest at the end",
                "training reward",
                "same, exact verifier",
                "held-out",
            ],
            "rows": [
                [
                    s,
                    _pct(max(h["share"])),
                    repr(h["wrong"][0]["completion"]),
                    _arrow(h["report"]["train_reward"][0], h["report"]["train_reward"][-1]),
                    _arrow(h["report"]["train_exact"][0], h["report"]["train_exact"][-1]),
                    _arrow(h["report"]["heldout"][0], h["report"]["heldout"][-1]),
                ]
                for s, h in ((s, hack[s]) for s in seeds)
            ],
        },
        "judge": {
            "header": ["seed", "samples of", "share right", "accuracy", "AUC", "calibration error"],
            "rows": [
                [
                    s,
                    PROMPT_SETS[where],
                    f"{r['share_right']:.2f}",
                    f"{r['accuracy']:.2f}",
                    f"{r['auc']:.2f}",
                    f"{r['calibration_error']:.2f}",
                ]
                for s in seeds
                for where, r in judges[s]["report"].items()
            ],
        },
        "rm": {
            "header": [
                "seed",
                "`rm`: judge's score",
                "`rm`: exact reward",
                "mean exact reward, `rm`",
                "mean exact reward, `rm-kl`",
            ],
            "rows": [
                [
                    s,
                    _arrow(j["rm"]["proxy"][0], j["rm"]["proxy"][-1]),
                    _arrow(j["rm"]["gold"][0], j["rm"]["gold"][-1]),
                    f"{np.mean(j['rm']['gold']):.2f}",
                    f"{np.mean(j['kl']['gold']):.2f}",
                ]
                for s, j in ((s, judges[s]) for s in seeds)
            ],
        },
        "over": {
            "header": ["seed", "over-rated share", "commonest", "judge's score", "wrong on", "right for"],
            "rows": [
                [s, _arrow(j["over"]["share"][0], j["over"]["share"][-1], ".0%"), repr(t[0]), f"{t[2]:.2f}", t[3], t[4]]
                for s, j in ((s, judges[s]) for s in seeds)
                for t in [j["over"]["top"][0]]
            ],
        },
        "incidents": {
            "header": ["step", "response", "trigger", "limit", "affected", "unverifiable / malformed"],
            "rows": [
                [
                    e["step"],
                    e["kind"],
                    f"{e['metric']} = {e['value']:.3g}",
                    f"{e['threshold']:g}",
                    e["affected_rollouts"],
                    f"{e['unverifiable_share']:.0%} / {e['malformed_share']:.0%}",
                ]
                for e in response[seeds[0]]["events"]
            ],
        },
    }
    if shown is not None:
        tables["wrong"] = {
            "header": ["completion", "rollouts", "exact verifier", "why the fail-open verifier paid"],
            "rows": [
                [repr(w["completion"]), w["count"], words[w["status"]], w["paid_reason"].split(": ", 1)[-1]]
                for w in hack[shown]["wrong"]
            ],
        }
    return tables


def _seed(seed: int) -> dict:
    """Everything the chapter measures on one seed."""
    return {"hack": _hack(seed), "judge": _judge(seed), "response": _response(seed)}


def compute(seeds: tuple[int, ...]) -> dict:
    """Every fact of chapter 5 on ``seeds``."""
    measured = {s: _seed(s) for s in seeds}
    hack, judges, response = ({s: measured[s][part] for s in seeds} for part in ("hack", "judge", "response"))
    taken = [s for s in seeds if hack[s]["takeover"] is not None]
    shown = audit.clearest_hacked_seed(
        {s: load("exploit", s).rollouts for s in seeds}, {s: load("exploit", s).evals for s in seeds}
    )
    slow_taken = [s for s in seeds if hack[s]["slow"]["takeover"] is not None]
    cfg, slow_cfg = spec("exploit").rl, spec("exploit-slow").rl
    abort_cfg, faults_cfg = spec("abort").rl, spec("faults").rl
    assert cfg is not None and slow_cfg is not None and abort_cfg is not None and faults_cfg is not None  # RL runs
    verifiers = _verifiers()
    return {
        "seeds": list(seeds),
        "shown": shown,
        "taken": taken,
        "slow_taken": slow_taken,
        "verifiers": verifiers,
        "hack": hack,
        "judge": judges,
        "response": response,
        "n_train": len(world.split("train")),
        "n_heldout": len(world.split("heldout")),
        "audit_n": AUDIT_N,
        "exploit": {
            "lr": Num(cfg.lr, "sci"),
            "main_lr": Num(MAIN.lr, "sci"),
            "warmup": cfg.warmup,
            "main_warmup": MAIN.warmup,
            "steps": cfg.steps,
            "slow_steps": slow_cfg.steps,
            "times": Num(cfg.lr / MAIN.lr, ".1f"),
        },
        "guard": {
            **asdict(Guard()),
            "error_pct": Num(Guard().max_verifier_error_rate, ".0%"),
            "malformed_pct": Num(Guard().max_malformed_rate, ".0%"),
        },
        "judge_labels": Num(JUDGE.labels, ",.0f"),
        "abort_steps": abort_cfg.steps,
        "faults_steps": faults_cfg.steps,
        "phrases": phrases(hack, judges, response, taken, slow_taken, shown, seeds),
        "tables": {
            "two": {"header": verifiers["header"], "rows": verifiers["rows"]},
            **_tables(hack, judges, response, seeds, shown),
        },
        "figures": _figures(hack, judges, response, seeds),
    }
