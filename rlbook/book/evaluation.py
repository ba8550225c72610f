"""Chapter 8's facts (chapters/08-checkpoints-evaluation-record.qmd): checkpoints, evaluation and the run record.

Every number, table row and outcome-dependent phrase of the chapter, and the
data its figures draw, computed on every seed from the runs ``base``,
``main``, ``exploit`` (trained against the fail-open verifier), ``faults``
(``main``'s recipe with injected failures) and ``process-base`` (the
multi-step world's starting policy). The page shows seed :data:`SHOWN`; its
claims are checked on every seed.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from rlbook import record as rec
from rlbook.analysis import run_report, selection, slices, versions
from rlbook.book import _evaluation_words as words
from rlbook.book import phrasing
from rlbook.book._shown import shown_seed
from rlbook.book.claims import Claim, every
from rlbook.book.facts import Num
from rlbook.book.needs import Need, on_seeds
from rlbook.core import loop
from rlbook.core import rewards as rw
from rlbook.core.evaluate import evaluate
from rlbook.core.world import split
from rlbook.runs import MAIN, load, spec

PAGE = "chapters/08-checkpoints-evaluation-record.qmd"

MOST_LOST = 0.1
"""The retained-capability constraint of the chapter's constrained rule: lose at most this much plain-format accuracy."""
VERSION_BOUND = 0.01
"""How far mixing exact 1.0 and 2.0 may move main's gain for the chapter to call the effect negligible."""
STOP_AFTER = 60
"""The step after which the chapter's interrupted copy of main's record stops."""
MULTI_N = 16
"""Samples per multi-step validation prompt for the misconceptions."""


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
        "validation_pick_words": (
            f"step {by_validation.step}" if by_validation.step else "step 0, the policy RL started from"
        ),
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
        "sentence": words.pick_sentence(by_step),
        "spread": Num(spread),
        "narrowest": Num(narrowest),
        "apart": spread > narrowest,
        "apart_sentence": words.apart_sentence(len(by_step), Num(spread), Num(narrowest)),
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
        "stuck_sentence": words.stuck_sentence([t.name for t in stuck]),
        "habit": words.habit_sentence(habits),
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
    process_base = load("process-base", seed)
    multi = evaluate(process_base.policy(), split("validation", "multi"), n=MULTI_N, budget=8, seed=seed)
    disagree = run_report.process_disagreements(multi)
    zero, total = run_report.zero_variance_rollouts(main)
    return {
        "invalid_share": Num(disagree["right_but_invalid_step"], ".0%"),
        "accepted": disagree["accepted"],
        "consistent_share": Num(disagree["wrong_but_consistent"], ".0%"),
        "rejected": disagree["rejected"],
        "samples": MULTI_N,
        "prompts": len(split("validation", "multi")),
        "zero": zero,
        "total": total,
        "zero_share": Num(zero / total, ".0%"),
    }


def excess(values: list[float]) -> dict:
    """How much of each unmatched comparison's excess the unequal settings made, from the five comparisons' gains.

    ``values`` are the gains of :func:`rlbook.analysis.selection.comparison_rows`, in its order: matched at
    T = 1, best of k against one sample, matched at best of k, low temperature against T = 1, matched at the low
    temperature. The excess of an unmatched row over the first splits exactly in two: the unmatched row minus
    the matched one at the same setting (what the unequal settings made: ``attempts``, ``cooling``) and that
    matched gain minus the first (how RL's own gain differs at that setting: ``attempts_gain``,
    ``cooling_gain``). ``words`` says it in two sentences.
    """
    first, more, both_more, cooler, both_cooler = values
    parts = {
        "attempts": more - both_more,
        "attempts_gain": both_more - first,
        "cooling": cooler - both_cooler,
        "cooling_gain": both_cooler - first,
    }

    def differs(change: float, setting: str, reference: str) -> str:
        side = phrasing.direction(change, 0.0, 0.005, ("larger", "smaller", "the same"))
        if side == "the same":
            return f"the same {setting} as {reference}"
        return f"{abs(change):.2f} {side} {setting} than {reference}"

    def adds(change: float, verb: str) -> str:
        return f"{verb} {change:+.2f}" if abs(change) >= 0.005 else f"{verb} less than 0.005 either way"

    said = (
        f"With best of four, the extra attempts alone {adds(parts['attempts'], 'add')} (the unmatched row minus the "
        f"matched one at best of four), and RL's matched gain is "
        f"{differs(parts['attempts_gain'], 'with four attempts', 'with one')}. At temperature 0.5, the cooler "
        f"sampling alone {adds(parts['cooling'], 'adds')}, and RL's matched gain is "
        f"{differs(parts['cooling_gain'], 'at 0.5', 'at 1')}."
    )
    return {**{k: Num(v, "+.2f") for k, v in parts.items()}, "words": said}


def _seed(seed: int) -> dict:
    """Every fact of one seed."""
    base, main, exploit, faults = (load(name, seed) for name in ("base", "main", "exploit", "faults"))
    scores, hack = selection.checkpoint_scores(main), selection.checkpoint_scores(exploit)
    selected = selection.select_checkpoint(scores, "validation accuracy")
    hacked = _exploit(exploit, hack, seed)
    retained = _retained(base, main, scores, selected)
    comparisons = selection.comparison_rows(main.policy(0), main.policy(selected.step), split("test"), seed=seed)
    step = main.steps[-1]
    main_cfg = spec("main").rl
    assert main_cfg is not None  # an RL run of the catalogue
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
        "excess": excess([c["difference"].value for c in comparisons]),
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


def _every(key):
    """A check that ``key(seed facts)`` holds on every seed of the facts."""
    return every(key)


def _seen(key):
    """What a failed claim shows: ``key(seed facts)`` on every seed."""
    return lambda F: {s: key(F.by_seed[s]) for s in F.seeds}


def _unmatched_inflate(s) -> bool:
    matched = s.comparisons[0]
    return matched.matched and all(c.value > matched.value for c in s.comparisons if not c.matched)


CLAIMS = (
    Claim(
        "main-reward-above-task",
        "main's training reward rises and ends above its held-out accuracy, which also "
        "ends higher than it started, on every seed",
        _every(lambda s: s.main.reward_gain > 0 and s.main.reward_end > s.main.heldout_end and s.main.heldout_gain > 0),
        _seen(lambda s: (s.main.reward_gain, s.main.heldout_gain)),
        kind="law",
    ),
    Claim(
        "exploit-reward-rises",
        "exploit's training reward rises to near 1 on every seed",
        _every(lambda s: s.exploit.reward_end > s.exploit.reward_start + 0.1 and s.exploit.reward_end > 0.95),
        _seen(lambda s: (s.exploit.reward_start, s.exploit.reward_end)),
        kind="finding",
    ),
    Claim(
        "exploit-accuracy-falls",
        "exploit's exact held-out accuracy ends well below its start on every seed",
        _every(lambda s: s.exploit.heldout_end < s.exploit.heldout_start - 0.1),
        _seen(lambda s: (s.exploit.heldout_start, s.exploit.heldout_end)),
        kind="finding",
    ),
    Claim(
        "exploit-answers-unreadable",
        "most of exploit's last answers are unreadable, paid by the fail-open verifier's except branch, on every seed",
        _every(lambda s: s.exploit.unreadable > 0.5),
        _seen(lambda s: s.exploit.unreadable),
        kind="law",
    ),
    Claim(
        "favourite-paid-whatever-the-prompt",
        "the fail-open verifier pays exploit's commonest answer on every "
        "test prompt, and the exact verifier finds it malformed, on every seed",
        _every(lambda s: s.exploit.favourite_paid and s.exploit.favourite_malformed),
        _seen(lambda s: s.exploit.favourite),
        kind="finding",
    ),
    Claim(
        "evaluation-repeats",
        "evaluating a stored checkpoint again gives back exactly the recorded numbers",
        _every(lambda s: s.main.repeats),
        kind="law",
    ),
    Claim(
        "checkpoints-every-ten-steps",
        "main is evaluated at step 0 and every checkpoint_every steps",
        lambda F: all(
            F.by_seed[s].main.checkpoints == tuple(range(0, F.steps + 1, F.checkpoint_every)) for s in F.seeds
        ),
        kind="law",
    ),
    Claim(
        "reward-rule-fooled-by-exploit",
        "on exploit the training-reward rule picks a checkpoint with lower "
        "exact accuracy than the validation rule's, on every seed",
        _every(lambda s: s.exploit.reward_pick_heldout < s.exploit.validation_pick_heldout),
        _seen(lambda s: (s.exploit.reward_pick, s.exploit.validation_pick)),
        kind="law",
    ),
    Claim(
        "rules-not-told-apart",
        "the test scores of main's three picks differ by less than the narrowest of their intervals, on every seed",
        _every(lambda s: not s.picks.apart),
        _seen(lambda s: (s.picks.spread, s.picks.narrowest)),
        kind="law",
    ),
    Claim(
        "matched-gain-above-zero",
        "the matched gain's interval lies above zero on every seed",
        _every(lambda s: s.comparisons[0].lo > 0),
        _seen(lambda s: s.comparisons[0].lo),
        kind="law",
    ),
    Claim(
        "unmatched-inflates",
        "every unmatched comparison shows a larger gain than the matched one",
        _every(_unmatched_inflate),
        _seen(lambda s: [c.value for c in s.comparisons]),
        kind="law",
    ),
    Claim(
        "attempts-make-excess",
        "the extra attempts alone make most of best-of-four's excess over the matched gain, seed by seed",
        _every(lambda s: s.excess.attempts > s.excess.attempts_gain),
        _seen(lambda s: (s.excess.attempts, s.excess.attempts_gain)),
        kind="finding",
    ),
    Claim(
        "cooling-makes-excess",
        "the cooler sampling alone makes most of the low temperature's excess over the matched gain, seed by seed",
        _every(lambda s: s.excess.cooling > s.excess.cooling_gain),
        _seen(lambda s: (s.excess.cooling, s.excess.cooling_gain)),
        kind="finding",
    ),
    Claim(
        "every-slice-gains",
        "RL raises the accuracy of every slice on every seed",
        _every(lambda s: all(g > 0 for g in s.slices.gains.values())),
        _seen(lambda s: s.slices.gains),
        kind="law",
    ),
    Claim(
        "small-sums-hardest",
        "before RL the sums with both operands below 5 are the weakest slice, on every seed",
        _every(lambda s: s.slices.small_start == min(r.before.value for r in s.slices.rows)),
        _seen(lambda s: [(r.slice, r.before.value) for r in s.slices.rows]),
        kind="law",
    ),
    Claim(
        "some-sums-never-right",
        "some held-out sum is never answered right, before or after RL, on every seed",
        _every(lambda s: s.slices.stuck >= 1),
        _seen(lambda s: s.slices.stuck_list),
        kind="law",
    ),
    Claim(
        "retained-capability-falls",
        "RL lowers plain-format accuracy by more than the constrained rule allows, on every seed",
        _every(lambda s: s.retained.end.value < s.retained.start.value - 0.15),
        _seen(lambda s: (s.retained.start.value, s.retained.end.value)),
        kind="law",
    ),
    Claim(
        "constraint-keeps-an-earlier-checkpoint",
        "the constrained rule keeps an earlier checkpoint than the "
        "unconstrained pick, on every seed (whether that costs test accuracy is a finding)",
        _every(lambda s: s.retained.constrained < s.selected),
        _seen(lambda s: (s.retained.constrained, s.selected)),
        kind="law",
    ),
    Claim(
        "version-2-only-adds",
        "exact 2.0 accepts everything 1.0 does: mixing can only raise main's gain one way and lower it the other",
        _every(lambda s: s.versions.main_mixed >= s.versions.main_same >= s.versions.main_reverse),
        kind="law",
    ),
    Claim(
        "main-version-effect-small",
        "mixing exact 1.0 and 2.0 moves main's gain by less than VERSION_BOUND",
        _every(lambda s: max(s.versions.main_shift, s.versions.main_reverse_shift) < VERSION_BOUND),
        _seen(lambda s: (s.versions.main_shift, s.versions.main_reverse_shift)),
        kind="law",
    ),
    Claim(
        "fail-open-turns-a-loss-into-a-gain",
        "scored by exact on both sides exploit's gain is negative; with "
        "its after side scored by fail-open it is positive, on every seed",
        _every(lambda s: s.versions.exploit_same < 0 < s.versions.exploit_mixed),
        _seen(lambda s: (s.versions.exploit_same, s.versions.exploit_mixed)),
        kind="law",
    ),
    Claim(
        "version-shaped-training",
        "exact 2.0 would have paid some of main's training rollouts that 1.0 rejected, on every seed",
        _every(lambda s: s.versions.train_flips > 0 and all(1 <= t <= MAIN.steps for t in s.versions.flip_steps)),
        kind="law",
    ),
    Claim(
        "a-flip-moves-its-group",
        "under a group-mean baseline each changed reward changes its whole group's advantages",
        _every(
            lambda s: (
                s.versions.changed.advantages == s.versions.changed.groups * MAIN.group_size
                and s.versions.changed.groups <= s.versions.changed.flipped
            )
        ),
        _seen(lambda s: s.versions.changed),
        kind="law",
    ),
    Claim(
        "records-differ-in-setup",
        "the records of main and exploit differ in verifier, learning rate and length",
        _every(lambda s: {"verifier.name", "update.lr", "update.steps"} <= set(s.record.diff_keys)),
        kind="law",
    ),
    Claim(
        "main-no-incident",
        "main has no intervention, aborted update or interruption and trained on every rollout",
        _every(lambda s: s.record.main_quiet),
        kind="law",
    ),
    Claim(
        "faults-keeps-incidents",
        "the faults record keeps interventions and an aborted update, and trained on fewer rollouts than it generated",
        _every(lambda s: s.record.faults_aborted and s.record.faults_incidents >= 2 and s.record.faults_left_out > 0),
        kind="law",
    ),
    Claim(
        "interruption-needs-a-place",
        "an interrupted record validates, and one that does not say where it stopped is refused",
        _every(lambda s: "interrupted" in s.record.refusal),
        kind="law",
    ),
    Claim(
        "base-policy-hash",
        "main's record names the weights of the base policy it started from",
        _every(lambda s: s.record.base_hash),
        kind="law",
    ),
    Claim(
        "exploit-has-hacks",
        "exploit's training holds rollouts the fail-open verifier paid and exact rejects",
        _every(lambda s: 0 < s.hacks[0] <= s.hacks[1]),
        _seen(lambda s: s.hacks),
        kind="law",
    ),
    Claim(
        "process-misconceptions",
        "process-base reaches some right totals through an invalid step, and some "
        "wrong answers keep half the process score",
        _every(lambda s: s.misconceptions.invalid_share > 0 and 0 < s.misconceptions.consistent_share < 1),
        _seen(lambda s: (s.misconceptions.invalid_share, s.misconceptions.consistent_share)),
        kind="law",
    ),
    Claim(
        "zero-variance-rollouts",
        "some of main's rollouts fell in groups whose rewards were all equal",
        _every(lambda s: 0 < s.misconceptions.zero < s.misconceptions.total),
        kind="law",
    ),
)
