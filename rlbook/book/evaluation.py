"""Chapter 8's facts (chapters/08-checkpoints-evaluation-record.qmd): checkpoints, evaluation and the run record.

Every number and table row of the chapter, the choices of its
outcome-dependent sentences, and the data its figures draw, computed on
every seed from the runs ``base``, ``main``, ``exploit`` (trained against
the fail-open verifier), ``faults`` (``main``'s recipe with injected
failures) and ``process-base`` (the multi-step world's starting policy).
The page shows seed :data:`SHOWN`; its claims are checked on every seed.

Its choices are made in :mod:`rlbook.book._evaluation_words` (the page
words them) and its claims in :mod:`rlbook.book._evaluation_claims`.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from rlbook import record as rec
from rlbook.analysis import run_report, selection, slices, versions
from rlbook.book import _evaluation_words as words
from rlbook.book import phrasing
from rlbook.book._evaluation_claims import CLAIMS, MOST_LOST, VERSION_BOUND  # noqa: F401  (rlbook.book reads CLAIMS here)
from rlbook.book._shown import shown_seed
from rlbook.book.facts import Num
from rlbook.book.needs import Need, on_seeds
from rlbook.core import loop
from rlbook.core import rewards as rw
from rlbook.core.evaluate import evaluate
from rlbook.core.world import split
from rlbook.runs import MAIN, MULTI, load, spec

PAGE = "chapters/08-checkpoints-evaluation-record.qmd"

STOP_AFTER = 60
"""The step after which the chapter's interrupted copy of main's record stops."""
LOW_TEMPERATURE = 0.5
"""The cooler temperature of the chapter's before-and-after comparisons; the others sample at ``main``'s own."""


def needs(seeds: tuple[int, ...]) -> tuple[Need, ...]:
    return on_seeds(("base", "main", "exploit", "faults", "process-base"), seeds)


def _est(e, fmt: str = ".2f") -> dict:
    return {"value": Num(e.value, fmt), "lo": Num(e.lo, fmt), "hi": Num(e.hi, fmt)}


def _ci(e) -> str:
    return f"{e.value:.2f} [{e.lo:.2f}, {e.hi:.2f}]"


def _panel(run, scores) -> dict:
    """The reward-against-task panel of one run: batch reward, checkpoint training reward, held-out accuracy."""
    verifier = run.record["verifier"]
    return {
        "name": run.name,
        "verifier": f"{verifier['name']} {verifier['version']}",
        "steps": run.metric("step"),
        "batch": run.metric("reward_mean"),
        "checkpoints": [s.step for s in scores],
        "train": [list(s.train_reward) for s in scores],
        "heldout": [list(s.heldout) for s in scores],
        "validation": [list(s.validation) for s in scores],
        "test": [list(s.test) for s in scores],
    }


def _exploit(exploit, hack, seed: int) -> dict:
    """exploit's reward against its exact accuracy, and what its last checkpoint writes on the test prompts."""
    result = evaluate(exploit.policy(), split("test"), n=MAIN.eval_n, seed=seed)
    answers = [c for row in result.completions for c in row]
    favourite, count = Counter(answers).most_common(1)[0]
    exact, fail_open = rw.get_verifier("exact"), rw.get_verifier("fail-open")
    unreadable = [
        exact(t.prompt, c).status == "malformed"
        and fail_open(t.prompt, c).reason.startswith("accepted because parsing failed")
        for t, row in zip(result.tasks, result.completions)
        for c in row
    ]
    prompts = [t.prompt for t in split("test")]
    by_reward = selection.select_checkpoint(hack, "training reward")
    by_validation = selection.select_checkpoint(hack, "validation accuracy")
    return {
        "reward_start": Num(hack[0].train_reward.value),
        "reward_end": Num(hack[-1].train_reward.value),
        "heldout_start": Num(hack[0].heldout.value),
        "heldout_end": Num(hack[-1].heldout.value),
        "unreadable": Num(float(np.mean(unreadable)), ".0%"),
        "favourite": repr(favourite),
        "favourite_share": Num(count / len(answers), ".0%"),
        "favourite_paid": all(fail_open(p, favourite).reward == 1 for p in prompts),
        "favourite_malformed": all(exact(p, favourite).status == "malformed" for p in prompts),
        "reward_pick": by_reward.step,
        "reward_pick_heldout": Num(by_reward.heldout.value),
        "validation_pick": by_validation.step,
        "validation_pick_heldout": Num(by_validation.heldout.value),
        "validation_checkpoint": words.validation_pick(by_validation.step),
        "result": result,
    }


def _picks(scores) -> dict:
    """Which checkpoint each rule picks from main, and whether the test prompts can tell the picks apart."""
    rows = selection.selection_rows(scores)
    by_step: dict[int, list[str]] = {}
    for r in rows:
        by_step.setdefault(r["step"], []).append(r["rule"])
    tests = [r["test"].value for r in rows]
    spread, narrowest = max(tests) - min(tests), min(r["test"].hi - r["test"].lo for r in rows)
    return {
        "which": words.picks(by_step),
        "spread": Num(spread),
        "narrowest": Num(narrowest),
        "apart": spread > narrowest,
        "told_apart": words.told_apart(len(by_step), Num(spread), Num(narrowest)),
        "table": [
            [
                r["rule"],
                r["step"],
                "declared in advance" if r["criterion"] is None else f"{r['criterion'].value:.3f}",
                _ci(r["test"]),
            ]
            for r in rows
        ],
    }


def _slices(main, seed: int) -> dict:
    """main's held-out accuracy by slice, from its first to its last checkpoint, and the sums never answered right."""
    tasks = split("heldout")
    before = np.asarray(main.evals[0]["heldout_per_prompt"], dtype=float)
    after = np.asarray(main.evals[-1]["heldout_per_prompt"], dtype=float)
    rows = slices.slice_rows(tasks, before, after, seed=seed)
    stuck = slices.never_right(tasks, before, after)
    habits = {}
    if stuck:
        first, last = (evaluate(main.policy(step), stuck, n=MAIN.eval_n, seed=seed) for step in (0, main.steps[-1]))
        habits = {
            t.name: (first.answers(i)[0][0].rstrip("#"), last.answers(i)[0][0].rstrip("#")) for i, t in enumerate(stuck)
        }
    by_name = {r["slice"]: r for r in rows}
    return {
        "rows": [
            {
                "slice": r["slice"],
                "prompts": r["prompts"],
                "before": _est(r["before"]),
                "after": _est(r["after"]),
                "gain": _est(r["gain"], "+.2f"),
            }
            for r in rows
        ],
        "before": before,
        "after": after,
        "carry": [t.answer >= 10 for t in tasks],
        "step": main.evals[-1]["step"],
        "carry_start": Num(by_name["carry"]["before"].value),
        "plain_start": Num(by_name["no carry"]["before"].value),
        "small_start": Num(by_name["both operands below 5"]["before"].value),
        "small_end": Num(by_name["both operands below 5"]["after"].value),
        "gains": {name: r["gain"].value for name, r in by_name.items()},
        "stuck": len(stuck),
        "stuck_list": phrasing.listing([t.name for t in stuck]) if stuck else "",
        "never_right": words.never_right([t.name for t in stuck]),
        "habit": words.habit(habits),
    }


def _retained(base, main, scores, selected) -> dict:
    rows = selection.retained_rows(base, main)
    by_step = {r["step"]: r["accuracy"] for r in rows if r["step"] is not None}
    constrained = selection.select_with_floor(scores, {s: e.value for s, e in by_step.items()}, MOST_LOST)
    last = main.steps[-1]
    return {
        "pretrained": Num(rows[0]["accuracy"].value, ".0%"),
        "start": _est(by_step[0], ".0%"),
        "end": _est(by_step[last], ".0%"),
        "by_step": {str(s): e.value for s, e in by_step.items()},
        "steps": list(by_step),
        "heldout": [s.heldout.value for s in scores],
        "constrained": constrained.step,
        "constrained_test": Num(constrained.test.value),
        "constrained_retained": Num(by_step[constrained.step].value, ".0%"),
        "selected_test": Num(selected.test.value),
        "selected_retained": Num(by_step[selected.step].value, ".0%"),
    }


def _versions(main, exploit_result, selected, seed: int) -> dict:
    test = split("test")
    before = evaluate(main.policy(0), test, n=MAIN.eval_n, seed=seed)
    after = evaluate(main.policy(selected.step), test, n=MAIN.eval_n, seed=seed)
    v1, v2, fail_open = rw.ExactVerifier("1.0"), rw.ExactVerifier("2.0"), rw.FailOpenVerifier()
    main_rows = versions.version_rows(before, after, (v1, v2))
    hack_rows = versions.version_rows(before, exploit_result, (v1, fail_open))
    gain = {(r["before_verifier"], r["after_verifier"]): r["difference"].value for r in main_rows}
    hack = {(r["before_verifier"], r["after_verifier"]): r["difference"].value for r in hack_rows}
    flips = versions.training_flips(main, v1, v2)
    changed = versions.changed_advantages(main, v1, v2)
    shown = [("main", main_rows[0]), ("main", main_rows[1]), ("exploit", hack_rows[0]), ("exploit", hack_rows[1])]
    return {
        "main_same": Num(gain["exact@1.0", "exact@1.0"], "+.3f"),
        "main_mixed": Num(gain["exact@1.0", "exact@2.0"], "+.3f"),
        "main_reverse": Num(gain["exact@2.0", "exact@1.0"], "+.3f"),
        "main_shift": abs(gain["exact@1.0", "exact@2.0"] - gain["exact@1.0", "exact@1.0"]),
        "main_reverse_shift": abs(gain["exact@2.0", "exact@1.0"] - gain["exact@1.0", "exact@1.0"]),
        "eval_flips": versions.version_flips(before, v1, v2) + versions.version_flips(after, v1, v2),
        "eval_samples": 2 * before.rewards.size,
        "exploit_same": Num(hack["exact@1.0", "exact@1.0"], "+.2f"),
        "exploit_mixed": Num(hack["exact@1.0", "fail-open@1.0"], "+.2f"),
        "exploit_shift": Num(hack["exact@1.0", "fail-open@1.0"] - hack["exact@1.0", "exact@1.0"], "+.2f"),
        "train_flips": sum(flips.values()),
        "train_flip_steps": len(flips),
        "flip_steps": list(flips),
        "changed": changed,
        "table": [
            [
                run,
                r["before_verifier"],
                r["after_verifier"],
                f"{r['before']:.3f}",
                f"{r['after']:.3f}",
                f"{r['difference'].value:+.3f}",
            ]
            for run, r in shown
        ],
    }


def _record(main, exploit, faults, base) -> dict:
    stopped = run_report.interrupted_copy(main.record, STOP_AFTER, "main.partial/state.pt")
    rec.validate(stopped)
    try:
        rec.validate(dict(stopped, interrupted=None))
        refusal = ""
    except rec.RecordError as err:
        refusal = str(err)
    for record in (main.record, exploit.record, faults.record):
        rec.validate(record)
    diff = run_report.record_differences(main.record, exploit.record)
    incidents = [
        [
            i["step"],
            i["kind"],
            i["reason"],
            (f"{i['trigger']['metric']} = {i['trigger']['value']:.3g} (limit {i['trigger']['threshold']:.3g})"),
            i["affected_rollouts"],
        ]
        for i in faults.record["interventions"]
    ]
    incidents += [
        [a["step"], "update aborted", a["reason"], f"loss = {a['measurement']}", "none"]
        for a in faults.record["aborted_updates"]
    ]
    last_exact = [e for e in exploit.record["evaluations"] if e["metric"].startswith("expected_reward")][-1]
    return {
        "rows": run_report.record_rows(main.record),
        "diff": [[f"`{k}`", *_named(k, a, b)] for k, a, b in diff],
        "diff_keys": [k for k, _, _ in diff],
        "incidents": sorted(incidents, key=lambda r: r[0]),
        "main_quiet": (
            not main.record["interventions"]
            and not main.record["aborted_updates"]
            and main.record["interrupted"] is None
            and main.record["rollouts_used"] == main.record["rollouts_before_filtering"]
        ),
        "main_rollouts": Num(main.record["rollouts_used"], ",.0f"),
        "faults_incidents": len(faults.record["interventions"]) + len(faults.record["aborted_updates"]),
        "faults_aborted": bool(faults.record["aborted_updates"]),
        "faults_left_out": Num(faults.record["rollouts_before_filtering"] - faults.record["rollouts_used"], ",.0f"),
        "faults_generated": Num(faults.record["rollouts_before_filtering"], ",.0f"),
        "stopped_step": STOP_AFTER,
        "stopped_checkpoints": len(stopped["checkpoints"]),
        "refusal": refusal,
        "hack_accepted": Num(
            exploit.record["outcome_labels"].get("accepted", 0) / exploit.record["cost"]["rollouts"], ".0%"
        ),
        "hack_last": Num(last_exact["value"]),
        "base_hash": main.record["base_policy"]["weights_hash"] == base.record["checkpoints"][-1]["weights_hash"],
    }


def _named(key: str, *values: str) -> list[str]:
    """A record row's values as the chapter's table shows them: an implementation by its class name alone."""
    return [v.rsplit(".", 1)[-1] if key.endswith(".implementation") else v for v in values]


def _misconceptions(main, seed: int) -> dict:
    """The figures of the chapter's misconceptions. The process ones are counted on chapter 2's sample of
    ``process-base`` (drawn as :mod:`rlbook.book.rewards` draws it: the held-out multi-step prompts, ``MULTI``'s
    evaluation size, budget and this seed), so that the page can send the reader to chapter 2's matrix for them."""
    process_base = load("process-base", seed)
    multi = evaluate(process_base.policy(), split("heldout", "multi"), n=MULTI.eval_n, budget=MULTI.budget, seed=seed)
    disagree = run_report.process_disagreements(multi)
    zero, total = run_report.zero_variance_rollouts(main)
    return {
        "invalid_share": Num(disagree["right_but_invalid_step"], ".0%"),
        "invalid": Num(disagree["invalid_step"], ",.0f"),
        "accepted": Num(disagree["accepted"], ",.0f"),
        "consistent_share": Num(disagree["wrong_but_consistent"], ".0%"),
        "consistent": Num(disagree["consistent"], ",.0f"),
        "rejected": Num(disagree["rejected"], ",.0f"),
        "samples": MULTI.eval_n,
        "prompts": len(split("heldout", "multi")),
        "zero": zero,
        "total": total,
        "zero_share": Num(zero / total, ".0%"),
    }


def _seed(seed: int) -> dict:
    """Every fact of one seed."""
    base, main, exploit, faults = (load(name, seed) for name in ("base", "main", "exploit", "faults"))
    scores, hack = selection.checkpoint_scores(main), selection.checkpoint_scores(exploit)
    selected = selection.select_checkpoint(scores, "validation accuracy")
    hacked = _exploit(exploit, hack, seed)
    retained = _retained(base, main, scores, selected)
    main_cfg = spec("main").rl
    assert main_cfg is not None  # an RL run of the catalogue
    comparisons = selection.comparison_rows(
        main.policy(0), main.policy(selected.step), split("test"), seed=seed, low_temperature=LOW_TEMPERATURE
    )
    step = main.steps[-1]
    again = loop.checkpoint_eval(main.policy(step), main_cfg, seed, step)
    first, last = scores[0], scores[-1]
    report = run_report.evaluation_report(main, exploit, selected, {int(s): v for s, v in retained["by_step"].items()})
    return {
        "selected": selected.step,
        "selected_test": _est(selected.test),
        "last": step,
        "panels": [_panel(main, scores), _panel(exploit, hack)],
        "main": {
            "reward_gain": Num(last.train_reward.value - first.train_reward.value, "+.2f"),
            "heldout_gain": Num(last.heldout.value - first.heldout.value, "+.2f"),
            "reward_end": last.train_reward.value,
            "heldout_end": last.heldout.value,
            "heldout_start": first.heldout.value,
            "band": Num(last.heldout.hi - last.heldout.lo),
            "checkpoints": [s.step for s in scores],
            "repeats": again["heldout_per_prompt"] == main.eval_at(step)["heldout_per_prompt"],
        },
        "exploit": {k: v for k, v in hacked.items() if k != "result"},
        "picks": _picks(scores),
        "checkpoint_table": [
            [s.step, _ci(s.train_reward), _ci(s.validation), _ci(s.test), f"{retained['by_step'][str(s.step)]:.2f}"]
            for s in scores
        ],
        "comparisons": [
            {"label": c["comparison"], "matched": c["matched"], **_est(c["difference"], "+.2f")} for c in comparisons
        ],
        "excess": words.excess([c["difference"].value for c in comparisons], LOW_TEMPERATURE, main_cfg.temperature),
        "slices": _slices(main, seed),
        "retained": retained,
        "versions": _versions(main, hacked["result"], selected, seed),
        "record": _record(main, exploit, faults, base),
        "misconceptions": _misconceptions(main, seed),
        "report": {"header": ["what", "step 0", f"selected, step {selected.step}"], "rows": report},
        "hacks": run_report.reward_hack_count(exploit),
    }


def compute(seeds: tuple[int, ...]) -> dict:
    """Every fact of chapter 8 on ``seeds`` (each seed's facts, shown for :data:`SHOWN`)."""
    by_seed = {seed: _seed(seed) for seed in seeds}
    evaluation = spec("main").rl
    assert evaluation is not None  # an RL run of the catalogue
    return {
        "seeds": list(seeds),
        "shown": shown_seed(seeds),
        "by_seed": by_seed,
        "eval_n": evaluation.eval_n,
        "eval_temperature": f"{evaluation.temperature:g}",
        "low_temperature": f"{LOW_TEMPERATURE:g}",
        "budget": evaluation.budget,
        "steps": evaluation.steps,
        "checkpoint_every": evaluation.checkpoint_every,
        "n_heldout": len(split("heldout")),
        "n_validation": len(split("validation")),
        "n_test": len(split("test")),
        "n_train": len(split("train")),
        "n_all": len(split("all")),
        "most_lost_points": Num(100 * MOST_LOST, ".0f"),
        "version_bound": Num(VERSION_BOUND),
        "record_fields": len(rec.RUN_RECORD_FIELDS),
        "picks_finding": words.picks_finding(by_seed, seeds),
        "constraint_finding": words.constraint_finding(by_seed, seeds),
        "carry_finding": words.carry_finding(by_seed, seeds),
        "retained_curves": [
            {
                "seed": s,
                "steps": by_seed[s]["retained"]["steps"],
                "plain": list(by_seed[s]["retained"]["by_step"].values()),
                "heldout": by_seed[s]["retained"]["heldout"],
            }
            for s in seeds
        ],
    }
