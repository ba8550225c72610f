"""Chapter 5's facts (chapters/05-reward-limits.qmd): a reward hack, a learned judge over-optimised, a response policy.

Every number, range and outcome-dependent phrase of the chapter, and the data
its figures and tables draw, computed on every seed from the runs ``exploit``
and ``exploit-slow`` (the fail-open verifier), ``main`` (the honest run the
detector must leave alone), the learned judge with ``rm`` and ``rm-kl``, and
``faults`` and ``abort`` (the response policy). The chapter shows the reward
hack on one seed, the one whose held-out accuracy ended lowest among the
seeds where the loophole took over; its claims hold on every seed where the
prose speaks of every seed.
"""

from __future__ import annotations

from dataclasses import asdict

import numpy as np

from rlbook.analysis import audit
from rlbook.analysis import judge as judging
from rlbook.book import phrasing
from rlbook.book.claims import Claim
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


def _favourites(hack: dict, taken: list[int], seeds: tuple[int, ...]) -> str:
    """The commonest paid-but-wrong answer at the last step, seed by seed, without repeating an answer.

    "`'#'` on every seed", or "`'#'` on seeds 0 and 2 and `' 3#'` on seed 1".
    """
    by_answer: dict[str, list[int]] = {}
    for s in taken:
        by_answer.setdefault(hack[s]["wrong"][0]["completion"], []).append(s)
    return phrasing.listing([f"`{a!r}` on {phrasing.seeds(where, seeds)}" for a, where in by_answer.items()])


def _takeover_sentence(hack: dict, taken: list[int], seeds: tuple[int, ...]) -> str:
    """Where the loophole took over, as one finding; what the other seeds did, when there are any."""
    found = f"The loophole took over on {phrasing.seeds(taken, seeds)}"
    others = [s for s in seeds if s not in taken]
    if not others:
        return found + "."
    peak = phrasing.span([max(hack[s]["share"]) for s in others], ".0%")
    return (
        f"{found}; on {phrasing.seeds(others, seeds)} the policy kept writing sums, the loophole paid for at "
        f"most {peak} of a batch, and the detector below found no exploit."
    )


def heldout_fall(steps: list[int], heldout: list[float]) -> str:
    """What held-out accuracy did after the start of a run the loophole took over, as the end of a sentence.

    Where it reached 0.00 (as printed) and stayed there, says from which
    checkpoint; otherwise gives its best later checkpoint and where it
    ended. It never offers a bound of 0.00 as evidence.
    """
    start, shown = heldout[0], [f"{v:.2f}" for v in heldout]
    zero_from = next((i for i in range(1, len(heldout)) if all(v == "0.00" for v in shown[i:])), None)
    if zero_from is not None:
        if zero_from == len(heldout) - 1:
            return f"fell from {start:.2f} at the start to 0.00 at the last checkpoint, step {steps[-1]}"
        return (
            f"fell from {start:.2f} at the start to 0.00 by step {steps[zero_from]} and stayed there to the last "
            f"checkpoint, step {steps[-1]}"
        )
    best = int(np.argmax(heldout[1:])) + 1
    return (
        f"fell from {start:.2f} at the start and never came back: its best later checkpoint was "
        f"{heldout[best]:.2f}, at step {steps[best]}, and it ended at {heldout[-1]:.2f}"
    )


def slow_versus(taken: list[int], slow_taken: list[int], seeds: tuple[int, ...]) -> str:
    """Where the loophole took over at ``main``'s settings, against where it did in ``exploit``: the seeds of each,
    never a comparative that a count of zero would make empty ("fewer", "none")."""
    return f"the loophole took over on {phrasing.seeds(slow_taken, seeds)}, against {phrasing.seeds(taken, seeds)} in `exploit`"


def _grew(share: list[float], ends: int = 5) -> bool:
    """Whether a loophole share rose over a run: its mean over the last ``ends`` steps above that over the first."""
    return float(np.mean(share[-ends:])) > float(np.mean(share[:ends]))


def slow_growth(shares: dict[int, list[float]], seeds: tuple[int, ...]) -> str:
    """What the loophole's share of a batch did at ``main``'s settings (chapter 5, the ``exploit-slow`` run).

    Names the seeds where the share grew (:func:`_grew`) with its largest
    value there, and the seeds where it shrank with their first and last
    five steps' means; ValueError when it grew on no seed, where the
    section's warning would rest on nothing.
    """
    grew = [s for s in seeds if _grew(shares[s])]
    if not grew:
        raise ValueError("the loophole's share grew on no seed at main's settings")
    text = (
        f"its share of a batch still grew on {phrasing.seeds(grew, seeds)}, to a largest share of "
        f"{phrasing.span([max(shares[s]) for s in grew], '.0%')}"
    )
    shrank = [s for s in seeds if s not in grew]
    if shrank:
        first = phrasing.span([float(np.mean(shares[s][:5])) for s in shrank], ".1%")
        last = phrasing.span([float(np.mean(shares[s][-5:])) for s in shrank], ".1%")
        text += f"; on {phrasing.seeds(shrank, seeds)} it shrank, from {first} to {last} of a batch"
    return text + "."


TRUSTED = 2
"""How many training prompts an over-rated answer must be right for to say the judge saw it labelled right often."""


def trusted_sentence(right_for: dict[int, int], seeds: tuple[int, ...]) -> str:
    """Why the judge trusts ``rm``'s commonest over-rated answer (chapter 5): on how many training prompts it is right.

    Where it is the right answer of at least :data:`TRUSTED` training prompts
    the judge saw it labelled right again and again; the seeds where it is
    not are named with what that leaves. ValueError when it holds on no seed.
    """
    often = [s for s in seeds if right_for[s] >= TRUSTED]
    if not often:
        raise ValueError(f"the over-rated answer is right for fewer than {TRUSTED} training prompts on every seed")
    text = (
        f"It is also the right answer of {phrasing.span([right_for[s] for s in often], 'd')} training prompts"
        f"{'' if len(often) == len(seeds) else ' on ' + phrasing.seeds(often, seeds)}, so the judge saw it "
        "labelled right again and again, and learned to trust the answer instead of checking it against the sum."
    )
    rare = [s for s in seeds if s not in often]
    if rare:
        counts = {right_for[s] for s in rare}
        said = "no training prompt" if counts == {0} else f"{phrasing.span(sorted(counts), 'd')} at most"
        text += (
            f" On {phrasing.seeds(rare, seeds)} it is the right answer of {said}: a judge also over-rates "
            "answers it was seldom shown labelled right."
        )
    return text


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
            }
            for s in seeds
        },
        "bon": {s: judges[s]["bon"] for s in seeds},
        "bon_top": Num(max(judging.NS), ",.0f"),
        "judge": {s: {"rm": judges[s]["rm"], "kl": judges[s]["kl"]} for s in seeds},
        "faults": {s: {"steps": response[s]["steps"], "reward": response[s]["reward"]} for s in seeds},
        "incidents": [{"step": e["step"], "kind": e["kind"], "metric": e["metric"]} for e in first["events"]],
    }


def _lr_row(name: str, seed: int, share, takeover, heldout) -> list:
    """One row of the table comparing the two settings of the fail-open runs."""
    return [
        name,
        seed,
        _arrow(share[0], share[-1], ".0%"),
        _pct(max(share)),
        takeover or "–",
        _arrow(heldout[0], heldout[-1]),
    ]


def _tables(hack: dict, judges: dict, response: dict, seeds: tuple[int, ...], shown: int | None) -> dict:
    """The rows of the chapter's tables, formatted; each table a ``header`` and its ``rows``."""
    words = audit.VERDICT_WORDS
    lr = [_lr_row("exploit", s, hack[s]["share"], hack[s]["takeover"], hack[s]["report"]["heldout"]) for s in seeds]
    lr += [
        _lr_row("exploit-slow", s, hack[s]["slow"]["share"], hack[s]["slow"]["takeover"], hack[s]["slow"]["heldout"])
        for s in seeds
    ]
    tables = {
        "hack_lr": {"header": ["run", "seed", "loophole share", "largest", "takeover", "held-out"], "rows": lr},
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
        "phrases": _phrases(hack, judges, response, taken, slow_taken, shown, seeds),
        "tables": {
            "two": {"header": verifiers["header"], "rows": verifiers["rows"]},
            **_tables(hack, judges, response, seeds, shown),
        },
        "figures": _figures(hack, judges, response, seeds),
    }


def _by_value(values: dict[int, object], seeds: tuple[int, ...], show=str) -> str:
    """Values seed by seed, each value once: "16 on seed 0 and 4 on seeds 1 and 2", or "4 on every seed"."""
    where: dict[str, list[int]] = {}
    for s, v in values.items():
        where.setdefault(show(v), []).append(s)
    return phrasing.listing([f"{v} on {phrasing.seeds(w, seeds)}" for v, w in where.items()])


def _judge_phrases(judges: dict, seeds: tuple[int, ...]) -> dict:
    """The judge sections' outcome-dependent words and numbers."""

    def span(values, fmt=".2f"):
        return phrasing.span([int(v) if fmt == "d" else float(v) for v in values], fmt)

    j = [judges[s] for s in seeds]
    fell = [s for s in seeds if judges[s]["rm"]["gold"][-1] < judges[s]["rm"]["gold"][0]]
    return {
        "auc_seen": span([x["report"]["train_prompts"]["auc"] for x in j]),
        "auc_unseen": span([x["report"]["heldout_prompts"]["auc"] for x in j]),
        "proxy_top": span([x["bon"]["proxy"][-1] for x in j]),
        "gold_one": span([x["bon"]["gold"][0] for x in j]),
        "gold_top": span([x["bon"]["gold"][-1] for x in j]),
        "peaks": _by_value({s: judges[s]["bon"]["peak"] for s in seeds}, seeds, lambda n: f"n = {n:,}"),
        "rm_proxy": (span([x["rm"]["proxy"][0] for x in j]), span([x["rm"]["proxy"][-1] for x in j])),
        "rm_gold": (span([x["rm"]["gold"][0] for x in j]), span([x["rm"]["gold"][-1] for x in j])),
        "rm_fell": phrasing.seeds(fell, seeds),
        "mean_gold": (span([np.mean(x["rm"]["gold"]) for x in j]), span([np.mean(x["kl"]["gold"]) for x in j])),
        "over": (span([x["over"]["share"][0] for x in j], ".0%"), span([x["over"]["share"][-1] for x in j], ".0%")),
        "trusted": trusted_sentence({s: judges[s]["over"]["top"][0][4] for s in seeds}, seeds),
    }


def _phrases(hack, judges, response, taken, slow_taken, shown, seeds) -> dict:
    """The outcome-dependent words and numbers of the prose (each a :class:`Num` or a phrase)."""
    out: dict = {
        **_judge_phrases(judges, seeds),
        "takeover": _takeover_sentence(hack, taken, seeds),
        "slow_versus": slow_versus(taken, slow_taken, seeds),
        "base_rate": phrasing.span([hack[s]["base_rate"] for s in seeds], ".1%"),
        "slow_growth": slow_growth({s: hack[s]["slow"]["share"] for s in seeds}, seeds),
    }
    first = response[seeds[0]]
    out.update(
        {
            "abort_step": phrasing.span([response[s]["abort"]["step"] for s in seeds], "d"),
            "abort_checkpoint": phrasing.span([response[s]["abort"]["checkpoint"] for s in seeds], "d"),
            "abort_after": first["abort"]["after"],
        }
    )
    if shown is None:
        return out
    h = hack[shown]
    top = h["wrong"][0]
    dip = h["dip"]
    out.update(
        {
            "favourites": _favourites(hack, taken, seeds),
            "takeover_by": max(hack[s]["takeover"] for s in taken),
            "top": repr(top["completion"]),
            "top_count": top["count"],
            "spellings": h["spellings"],
            "paid": Num(h["share"][-1], ".0%"),
            "rollouts": h["rollouts"],
            "last_step": h["last_step"],
            "heldout_first": Num(h["report"]["heldout"][0]),
            "heldout_fall": heldout_fall(h["report"]["steps"], h["report"]["heldout"]),
            "dip_step": dip["step"],
            "dip_right": Num(dip["right"], ".0%"),
            "first_right": Num(dip["first_right"], ".0%"),
            "dip_share": Num(dip["share"], ".0%"),
            "len_first": Num(h["lengths"][0], ".1f"),
            "len_last": Num(h["lengths"][-1], ".1f"),
            "rise": h["report"]["rise"],
        }
    )
    return out


CLAIMS = (
    Claim(
        "fail-open-pays",
        "the fail-open verifier pays '7#', '#', ' 7#' and '7?#' on 3+4, and not '8#'",
        lambda F: list(F.verifiers.fail_open) == [1, 0, 1, 1, 1],
        lambda F: F.verifiers.fail_open,
        kind="law",
    ),
    Claim(
        "exact-refuses",
        "the exact verifier accepts '7#' only, calling '8#' wrong and the other three malformed",
        lambda F: list(F.verifiers.exact) == ["accepted", "incorrect", "malformed", "malformed", "malformed"],
        lambda F: F.verifiers.exact,
        kind="law",
    ),
    Claim(
        "hack-found",
        "the loophole took over on at least one seed, which the chapter shows",
        lambda F: F.shown is not None and F.shown in F.taken,
        lambda F: F.taken,
        kind="law",
    ),
    Claim(
        "base-rarely-exploits",
        "base writes an answer only the loophole pays in under 10 % of its samples",
        lambda F: all(F.hack[s].base_rate < 0.1 for s in F.seeds),
        lambda F: [F.hack[s].base_rate for s in F.seeds],
        kind="law",
    ),
    Claim(
        "slower-fewer-takeovers",
        "at main's learning rate and warm-up the loophole took over on fewer seeds",
        lambda F: len(F.slow_taken) < len(F.taken),
        lambda F: (F.slow_taken, F.taken),
        kind="law",
    ),
    # It grew on every seed until the README's plain draw, where seed 2's share stayed under 2 % and shrank; what
    # every draw seen supports is that it grew on some seed.
    Claim(
        "slow-share-grows",
        "at main's settings the loophole's share of a batch still grew on some seed",
        lambda F: any(_grew(F.hack[s].slow.share) for s in F.seeds),
        lambda F: [(F.hack[s].slow.share[0], F.hack[s].slow.share[-1]) for s in F.seeds],
        kind="law",
    ),
    Claim(
        "reward-rose-accuracy-fell",
        "on the shown seed the training reward rose while held-out accuracy collapsed",
        lambda F: F.hack[F.shown].reward_gain > F.phrases.rise and F.hack[F.shown].report.heldout[-1] < 0.05,
        lambda F: (F.hack[F.shown].reward_gain, F.hack[F.shown].report.heldout[-1]),
        kind="law",
    ),
    Claim(
        "knocked-off-first",
        "wherever the loophole took over, the first full-size updates first knocked the "
        "policy off its sums (under half the first batch's right answers) while the loophole paid for a minority",
        lambda F: (
            F.exploit.warmup == 0
            and all(F.hack[s].dip.right < F.hack[s].dip.first_right / 2 and F.hack[s].dip.share < 0.5 for s in F.taken)
        ),
        lambda F: [F.hack[s].dip for s in F.taken],
        kind="law",
    ),
    Claim(
        "never-recovered",
        "wherever the loophole took over, held-out accuracy never came back to its start",
        lambda F: all(max(F.hack[s].report.heldout[1:]) < F.hack[s].report.heldout[0] for s in F.taken),
        lambda F: [F.hack[s].report.heldout for s in F.taken],
        kind="law",
    ),
    Claim(
        "loophole-pays-most",
        "the loophole pays for most of the shown seed's last batch, and its commonest answer "
        "is one the exact verifier calls malformed and int cannot read",
        lambda F: (
            F.hack[F.shown].share[-1] > 0.5
            and F.hack[F.shown].wrong[0].status == "malformed"
            and F.hack[F.shown].wrong[0].paid_reason.startswith("accepted because parsing failed")
        ),
        lambda F: (F.hack[F.shown].share[-1], F.hack[F.shown].wrong[0]),
        kind="law",
    ),
    Claim(
        "split-turns-over",
        "at the shown seed's first step most of the reward is the task's, at its last the loophole's",
        lambda F: (
            F.hack[F.shown].task[0] > F.hack[F.shown].loophole[0]
            and F.hack[F.shown].loophole[-1] > F.hack[F.shown].task[-1]
        ),
        lambda F: (
            (F.hack[F.shown].task[0], F.hack[F.shown].loophole[0]),
            (F.hack[F.shown].task[-1], F.hack[F.shown].loophole[-1]),
        ),
        kind="law",
    ),
    Claim(
        "detector-names-the-exploit",
        "where the loophole took over, the detector flags an exploited verifier and held-out accuracy did not rise",
        lambda F: all(F.hack[s].diagnosis == "exploited verifier" and F.hack[s].heldout_gain <= 0 for s in F.taken),
        lambda F: [(F.hack[s].diagnosis, F.hack[s].heldout_gain) for s in F.taken],
        kind="law",
    ),
    Claim(
        "detector-blames-no-honest-seed",
        "where the loophole did not take over, it paid for under 5 % of any batch and the detector blames no verifier",
        lambda F: all(
            F.hack[s].diagnosis != "exploited verifier" and max(F.hack[s].share) < 0.05
            for s in F.seeds
            if s not in F.taken
        ),
        kind="law",
    ),
    Claim(
        "detector-silent-on-main",
        "the detector stays silent on main, whose held-out accuracy rose, every seed",
        lambda F: all(F.hack[s].honest.flagged is None and F.hack[s].honest.gain > 0 for s in F.seeds),
        lambda F: [F.hack[s].honest for s in F.seeds],
        kind="law",
    ),
    Claim(
        "judge-good-where-trained",
        "the judge's AUC and accuracy on fresh samples of its training prompts are above 0.75, every seed",
        lambda F: all(
            F.judge[s].report.train_prompts.auc > 0.75 and F.judge[s].report.train_prompts.accuracy > 0.75
            for s in F.seeds
        ),
        lambda F: [F.judge[s].report.train_prompts for s in F.seeds],
        kind="law",
    ),
    Claim(
        "judge-worse-held-out",
        "on held-out prompts the judge's AUC is more than 0.1 below, every seed",
        lambda F: all(
            F.judge[s].report.heldout_prompts.auc < F.judge[s].report.train_prompts.auc - 0.1 for s in F.seeds
        ),
        lambda F: [(F.judge[s].report.train_prompts.auc, F.judge[s].report.heldout_prompts.auc) for s in F.seeds],
        kind="law",
    ),
    Claim(
        "best-of-n-proxy-rises",
        "best-of-n's proxy never falls with n and rises by more than 0.05, every seed",
        lambda F: all(
            np.all(np.diff(F.judge[s].bon.proxy) >= 0) and F.judge[s].bon.proxy[-1] > F.judge[s].bon.proxy[0] + 0.05
            for s in F.seeds
        ),
        lambda F: [F.judge[s].bon.proxy for s in F.seeds],
        kind="law",
    ),
    Claim(
        "best-of-n-gold-falls",
        "best-of-n's gold reward peaks at n <= 64 and ends below its value at n = 1",
        lambda F: all(F.judge[s].bon.gold[-1] < F.judge[s].bon.gold[0] and F.judge[s].bon.peak <= 64 for s in F.seeds),
        lambda F: [F.judge[s].bon.gold for s in F.seeds],
        kind="law",
    ),
    # On one numerical draw rm's gold rose on seed 0, so its fall is claimed on two seeds of three.
    Claim(
        "rm-proxy-up-gold-down",
        "against the judge alone the proxy rises by more than 0.05 on every seed and the gold falls on at least two",
        lambda F: (
            all(F.judge[s].rm.proxy[-1] > F.judge[s].rm.proxy[0] + 0.05 for s in F.seeds)
            and sum(F.judge[s].rm.gold[-1] < F.judge[s].rm.gold[0] for s in F.seeds) >= 2
        ),
        lambda F: [(F.judge[s].rm.proxy[-1], F.judge[s].rm.gold[0], F.judge[s].rm.gold[-1]) for s in F.seeds],
        kind="law",
    ),
    # On another draw rm-kl collapsed at its last checkpoint on seed 1: the mean over checkpoints is claimed. On
    # the draw ATEN_CPU_CAPABILITY=default, rm's gold held up on seed 0 and rm-kl's mean led it by only 0.035:
    # the lead is claimed, not its size.
    Claim(
        "kl-holds-gold",
        "with the KL penalty the gold reward, averaged over the checkpoints, is above rm's, every seed",
        lambda F: all(np.mean(F.judge[s].kl.gold) > np.mean(F.judge[s].rm.gold) for s in F.seeds),
        lambda F: [(np.mean(F.judge[s].rm.gold), np.mean(F.judge[s].kl.gold)) for s in F.seeds],
        kind="law",
    ),
    Claim(
        "over-rated-grows",
        "the over-rated share of rm's batches grows by more than 0.05, every seed",
        lambda F: all(F.judge[s].over.share[-1] > F.judge[s].over.share[0] + 0.05 for s in F.seeds),
        lambda F: [(F.judge[s].over.share[0], F.judge[s].over.share[-1]) for s in F.seeds],
        kind="law",
    ),
    Claim(
        "over-rated-everywhere",
        "rm's favourite over-rated answer is written wrongly on at least five prompts and "
        "scored at least 0.5, every seed",
        lambda F: all(F.judge[s].over.top[0][3] >= 5 and F.judge[s].over.top[0][2] >= 0.5 for s in F.seeds),
        lambda F: [F.judge[s].over.top for s in F.seeds],
        kind="law",
    ),
    # Every seed until the README's AVX2 draw, where seed 1's answer was the right answer of no training prompt.
    Claim(
        "over-rated-is-trusted",
        "rm's favourite over-rated answer is the right answer of several training "
        "prompts on some seed, so the judge saw it labelled right again and again",
        lambda F: any(F.judge[s].over.top[0][4] >= TRUSTED for s in F.seeds),
        lambda F: [F.judge[s].over.top[0][4] for s in F.seeds],
        kind="law",
    ),
    Claim(
        "intervention-per-fault",
        "each injected fault gives one intervention, at its step, every seed",
        lambda F: all([e.step for e in F.response[s].events] == list(F.response[s].planned) for s in F.seeds),
        lambda F: [[e.step for e in F.response[s].events] for s in F.seeds],
        kind="law",
    ),
    Claim(
        "fault-batches-as-stored",
        "the outage batch is all unverifiable and the burst mostly malformed, every seed",
        lambda F: all(
            F.response[s].events[0].unverifiable_share == 1.0 and F.response[s].events[1].malformed_share > 0.5
            for s in F.seeds
        ),
        kind="law",
    ),
    Claim(
        "nan-loss-not-applied",
        "the non-finite loss was never applied, every seed",
        lambda F: all(F.response[s].events[2].aborted_update == "non-finite loss" for s in F.seeds),
        kind="law",
    ),
    Claim(
        "record-carries-interventions",
        "the run record carries the log's interventions, every seed",
        lambda F: all(F.response[s].recorded for s in F.seeds),
        kind="law",
    ),
    Claim(
        "abort-stops-early",
        "the abort run stopped before its last step and says so in its record, every seed",
        lambda F: all(
            F.response[s].abort.status == "aborted" and F.response[s].abort.step < F.abort_steps for s in F.seeds
        ),
        lambda F: [F.response[s].abort for s in F.seeds],
        kind="law",
    ),
)
