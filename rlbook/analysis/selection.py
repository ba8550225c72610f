"""Checkpoint selection, matched comparisons and what an RL evaluation reports (chapter 5).

A run leaves a list of checkpoints, each evaluated on the same held-out
prompts with the same exact verifier and the same sampling settings
(``run.evals``). This module turns that into the decisions of chapter 5:

- :func:`checkpoint_scores`: every checkpoint's training reward, held-out,
  validation and test accuracy, each with a bootstrap interval over prompts;
- :func:`select_checkpoint` and :func:`selection_rows`: which checkpoint
  each selection rule picks, scored afterwards on the test prompts that no
  rule looked at;
- :func:`matched_difference` and :func:`comparison_rows`: the pre-RL policy
  against a chosen checkpoint, under identical inference settings, and what
  happens to the apparent gain when the settings differ;
- :func:`plain_equation_accuracy`: a retained-capability test, the plain
  ``a+b=`` format the policy was pretrained on and RL never rewards;
- :func:`rescore` and :func:`version_rows`: the same rollouts judged by two
  versions of the verifier;
- :func:`evaluation_report`: the list of what an evaluation of an RL run
  should state, filled in from the runs.

The held-out prompts split into ``validation`` (used to choose) and ``test``
(used only to score the choice), so a selection can be checked on prompts it
did not see (the usual train / validation / test discipline; for RL runs,
Henderson et al. 2018 and Agarwal et al. 2021 on reporting with intervals).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from rlbook.analysis.tables import markdown_table  # noqa: F401  (chapter 5 writes its tables as sel.markdown_table)
from rlbook.core import rewards as rw
from rlbook.core.evaluate import EvalResult, evaluate
from rlbook.core.policy import Policy
from rlbook.core.sampling import sample
from rlbook.core.stats import Estimate, difference_ci, mean_with_ci, pass_at_k, wilson_interval
from rlbook.core.world import BUDGET, Task, split
from rlbook.record.display import as_table

from . import audit

RULES = ("training reward", "validation accuracy", "fixed budget")
"""The checkpoint-selection rules of chapter 5, in the order the chapter discusses them."""

MATCHED_SETTINGS = ("n", "temperature", "token_budget", "decoding", "verifier", "template")
"""The inference settings two evaluations must share to be compared (chapter 5)."""


# ------------------------------------------------------------------ checkpoint scores

def heldout_positions(part: str, world: str = "single") -> list[int]:
    """Positions, within ``split("heldout")``, of the tasks of split ``part`` (validation or test).

    A run's evaluation stores one rate per held-out prompt in the order of
    ``split("heldout")``; validation and test are subsets of it, matched here
    by the task's operands, not by position.
    """
    index = {task.operands: i for i, task in enumerate(split("heldout", world))}
    return [index[task.operands] for task in split(part, world)]


def part_rates(entry: dict, part: str, world: str = "single") -> np.ndarray:
    """Per-prompt expected reward of one checkpoint evaluation (``run.evals[i]``) on ``part``.

    ``part`` is ``heldout`` (all 40 prompts) or one of its halves,
    ``validation`` or ``test``.
    """
    rates = np.asarray(entry["heldout_per_prompt"], dtype=float)
    return rates if part == "heldout" else rates[heldout_positions(part, world)]


@dataclass(frozen=True)
class CheckpointScores:
    """One checkpoint's scores, each an :class:`~rlbook.core.stats.Estimate` with a 95 % interval over prompts.

    ``train_reward`` is measured on the training prompts under the run's own
    verifier (what the optimiser saw); the other three use the exact verifier
    on held-out prompts the run never trained on.
    """

    step: int
    train_reward: Estimate
    heldout: Estimate
    validation: Estimate
    test: Estimate


def checkpoint_scores(run) -> list[CheckpointScores]:
    """The scores of every checkpoint of ``run``, in step order (chapter 5's checkpoint table and figure).

    The intervals are bootstraps over prompts of the stored per-prompt rates
    (:func:`rlbook.core.stats.mean_with_ci`), the same numbers that
    ``mean_with_ci(evaluate(...).rewards)`` gives when the checkpoint is evaluated again
    with the run's evaluation seed.
    """
    world = run.record["prompt_split"]["world"]
    rows = []
    for entry in run.evals:
        parts = {part: mean_with_ci(part_rates(entry, part, world)) for part in ("heldout", "validation", "test")}
        rows.append(CheckpointScores(entry["step"], mean_with_ci(entry["train_per_prompt"]), **parts))
    return rows


def select_checkpoint(scores: list[CheckpointScores], rule: str, budget_step: int | None = None) -> CheckpointScores:
    """The checkpoint that ``rule`` picks (chapter 5).

    - ``training reward``: the highest training reward, i.e. the signal the
      optimiser was pushing up, so the pick is flattered by construction;
    - ``validation accuracy``: the highest exact accuracy on the validation
      prompts;
    - ``fixed budget``: the checkpoint at ``budget_step``, a step count
      declared before training (default: the last checkpoint).

    Ties go to the earliest checkpoint.
    """
    if rule == "training reward":
        return max(scores, key=lambda s: (s.train_reward.value, -s.step))
    if rule == "validation accuracy":
        return max(scores, key=lambda s: (s.validation.value, -s.step))
    if rule == "fixed budget":
        step = scores[-1].step if budget_step is None else budget_step
        found = [s for s in scores if s.step == step]
        if not found:
            raise ValueError(f"no checkpoint at step {step}; checkpoints: {[s.step for s in scores]}")
        return found[0]
    raise ValueError(f"unknown rule {rule!r}; choose one of {RULES}")


def selection_rows(scores: list[CheckpointScores], budget_step: int | None = None) -> list[dict]:
    """For each rule of :data:`RULES`: the step it picks, the score it picked on, and the pick's test score."""
    rows = []
    for rule in RULES:
        pick = select_checkpoint(scores, rule, budget_step)
        criterion = {"training reward": pick.train_reward, "validation accuracy": pick.validation}.get(rule)
        rows.append({"rule": rule, "step": pick.step, "criterion": criterion, "test": pick.test})
    return rows


# ------------------------------------------------------------------ figure

def plot_divergence(ax, run, title: str) -> None:
    """Chapter 5's reward-outcome panel: training reward and held-out exact accuracy over ``run``'s checkpoints.

    Thin line: the mean reward of each training batch. Markers with error
    bars: training reward at each checkpoint. Line with a band: held-out
    accuracy (exact verifier) with its 95 % interval over prompts.
    """
    from .plots import BLUE, ORANGE

    scores = checkpoint_scores(run)
    steps = [s.step for s in scores]
    verifier = run.record["verifier"]
    ax.plot(run.metric("step"), run.metric("reward_mean"), color=ORANGE, alpha=0.35, lw=1,
            label="training batch reward")
    train = np.array([s.train_reward for s in scores])
    ax.errorbar(steps, train[:, 0], yerr=[train[:, 0] - train[:, 1], train[:, 2] - train[:, 0]], color=ORANGE,
                marker="o", ms=4, capsize=2, label=f"training reward ({verifier['name']} {verifier['version']})")
    held = np.array([s.heldout for s in scores])
    ax.plot(steps, held[:, 0], color=BLUE, marker="s", ms=4, label="held-out accuracy (exact 1.0)")
    ax.fill_between(steps, held[:, 1], held[:, 2], color=BLUE, alpha=0.15)
    ax.set(title=title, xlabel="training step", ylim=(-0.03, 1.03))


# ------------------------------------------------------------------ matched comparison

class UnmatchedComparison(ValueError):
    """Two evaluations that differ in an inference setting and so cannot be compared as a policy change."""


def unmatched_settings(after: EvalResult, before: EvalResult) -> list[str]:
    """The names of the settings in :data:`MATCHED_SETTINGS` (and ``tasks``) on which two evaluations differ."""
    differ = [key for key in MATCHED_SETTINGS if after.settings.get(key) != before.settings.get(key)]
    if [t.operands for t in after.tasks] != [t.operands for t in before.tasks]:
        differ.append("tasks")
    return differ


def matched_difference(after: EvalResult, before: EvalResult, seed: int = 0) -> Estimate:
    """Expected reward of ``after`` minus ``before`` with a paired 95 % interval over prompts (chapter 5).

    Refuses (raises :class:`UnmatchedComparison`) when the two evaluations
    used different prompts, sample counts, temperatures, token budgets,
    decoding, verifiers or templates: then part of the difference would come
    from the evaluation, not from the policy. The interval resamples prompts
    with both policies' rates kept together (:func:`rlbook.core.stats.difference_ci`).
    """
    differ = unmatched_settings(after, before)
    if differ:
        details = ", ".join(f"{k}: {after.settings.get(k)!r} vs {before.settings.get(k)!r}" for k in differ
                            if k != "tasks")
        raise UnmatchedComparison(f"the evaluations differ in {', '.join(differ)}" + (f" ({details})" if details else ""))
    return difference_ci(after.per_prompt, before.per_prompt, paired=True, seed=seed)


def per_prompt_pass_at_k(result: EvalResult, k: int) -> np.ndarray:
    """Each prompt's unbiased pass@k from its ``n`` samples: the chance that one of k draws is accepted."""
    n = result.rewards.shape[1]
    return np.array([pass_at_k(n, int(c), k) for c in (result.rewards >= 1.0).sum(axis=1)])


def comparison_rows(before: Policy, after: Policy, tasks: list[Task], seed: int = 0, n: int = 32,
                    budget: int = BUDGET, low_temperature: float = 0.5, k: int = 4) -> list[dict]:
    """Pre-RL (``before``) against post-RL (``after``): matched comparisons and two unmatched ones (chapter 5).

    Rows, each with the ``difference`` (after minus before, paired interval
    over prompts) and whether it is ``matched``:

    1. both sampled ``n`` times at T = 1 (the matched comparison);
    2. after gets k attempts (pass@k), before one (unmatched: more samples);
    3. both get k attempts (matched at pass@k);
    4. after at ``low_temperature``, before at T = 1 (unmatched: temperature);
    5. both at ``low_temperature`` (matched).

    Both policies are sampled with the same seed, so they also share the
    random numbers of the sampler.
    """
    runs_at = {}
    for temperature in (1.0, low_temperature):
        for name, policy in (("before", before), ("after", after)):
            runs_at[name, temperature] = evaluate(policy, tasks, n=n, temperature=temperature, budget=budget, seed=seed)
    b1, a1 = runs_at["before", 1.0], runs_at["after", 1.0]
    bl, al = runs_at["before", low_temperature], runs_at["after", low_temperature]
    rows = [
        ("both: 1 sample at T=1", True, a1.per_prompt, b1.per_prompt),
        (f"after: best of {k}; before: 1 sample", False, per_prompt_pass_at_k(a1, k), b1.per_prompt),
        (f"both: best of {k} at T=1", True, per_prompt_pass_at_k(a1, k), per_prompt_pass_at_k(b1, k)),
        (f"after at T={low_temperature:g}; before at T=1", False, al.per_prompt, b1.per_prompt),
        (f"both at T={low_temperature:g}", True, al.per_prompt, bl.per_prompt),
    ]
    return [{"comparison": label, "matched": matched, "after": float(a.mean()), "before": float(b.mean()),
             "difference": difference_ci(a, b, paired=True, seed=seed)} for label, matched, a, b in rows]


# ------------------------------------------------------------------ retained capability

def plain_prompt(task: Task) -> str:
    """The pretraining format of a single-step task: ``3+4=`` (no chat template, no end-of-turn mark)."""
    return "+".join(str(x) for x in task.operands) + "="


def read_plain_answer(text: str) -> str:
    """The answer a plain-format continuation gives: the text up to the line break, spaces removed.

    Pretraining lines put a space in a gap at random, so ``" 7"`` is a
    legitimate way to write 7 there.
    """
    return text.split("\n")[0].replace(" ", "")


def plain_equation_accuracy(policy: Policy, tasks: list[Task] | None = None, budget: int = BUDGET) -> float:
    """Retained-capability test: share of sums answered right in the plain ``a+b=`` format, greedy (chapter 5).

    RL rewards only the chat format ``U:a+b?|A:``; this measures whether the
    format the policy learned in pretraining survives. Default tasks: all 100
    single-step sums. Greedy decoding makes the test deterministic.
    """
    tasks = tasks or split("all")
    rollouts = sample(policy, [plain_prompt(t) for t in tasks], n=1, budget=budget, greedy=True)
    answers = [read_plain_answer(text) for text in rollouts.completions()]
    return float(np.mean([a == str(t.answer) for a, t in zip(answers, tasks)]))


def retained_rows(base_run, rl_run, tasks: list[Task] | None = None) -> list[dict]:
    """Plain-format accuracy, with a Wilson interval, for the pretrained policy and every checkpoint of ``rl_run``.

    ``base_run`` is the ``base`` run (its checkpoint 0 is the pretrained-only
    policy); the RL run's checkpoint 0 is the SFT policy RL started from.
    """
    tasks = tasks or split("all")
    policies = [("pretrained", None, base_run.policy(0))]
    policies += [("after SFT" if step == 0 else f"RL step {step}", step, rl_run.policy(step)) for step in rl_run.steps]
    rows = []
    for label, step, policy in policies:
        accuracy = plain_equation_accuracy(policy, tasks)
        lo, hi = wilson_interval(round(accuracy * len(tasks)), len(tasks))
        rows.append({"policy": label, "step": step, "accuracy": Estimate(accuracy, lo, hi)})
    return rows


# ------------------------------------------------------------------ reward versioning

def rescore(result: EvalResult, verifier) -> EvalResult:
    """The same completions judged by another verifier (or version): new rewards and statuses, same samples."""
    flat_prompts = [t.prompt for t, row in zip(result.tasks, result.completions) for _ in row]
    flat = [c for row in result.completions for c in row]
    rewards, statuses = rw.score(verifier, flat_prompts, flat)
    n = result.rewards.shape[1]
    label = f"{verifier.name}@{verifier.version}"
    return replace(result, rewards=rewards.reshape(result.rewards.shape),
                   statuses=[statuses[i * n:(i + 1) * n] for i in range(len(result.tasks))],
                   settings=dict(result.settings, verifier=label))


def version_rows(before: EvalResult, after: EvalResult, verifiers: tuple = (), seed: int = 0) -> list[dict]:
    """The before/after gain for every pairing of two verifiers, exact 1.0 and 2.0 unless told (chapter 5).

    Rows: the verifier that scored each side (``"name@version"``), whether it
    is the same one, the two expected rewards and the difference with a
    paired interval. Rows with mixed verifiers are what a report gets when
    the verifier changed between the two evaluations.
    """
    verifiers = verifiers or (rw.ExactVerifier("1.0"), rw.ExactVerifier("2.0"))
    scored = {(side, i): rescore(result, v) for side, result in (("before", before), ("after", after))
              for i, v in enumerate(verifiers)}
    label = [f"{v.name}@{v.version}" for v in verifiers]
    rows = []
    for ib in range(len(verifiers)):
        for ia in range(len(verifiers)):
            b, a = scored["before", ib], scored["after", ia]
            rows.append({"before_verifier": label[ib], "after_verifier": label[ia], "same_verifier": ia == ib,
                         "before": b.expected_reward, "after": a.expected_reward,
                         "difference": difference_ci(a.per_prompt, b.per_prompt, paired=True, seed=seed)})
    return rows


def version_flips(result: EvalResult, old, new) -> int:
    """How many samples of ``result`` get a different reward from verifier ``new`` than from ``old``."""
    return int((rescore(result, old).rewards != rescore(result, new).rewards).sum())


def training_flips(run, old, new) -> dict[int, int]:
    """Per training step of ``run``: how many stored rollouts ``new`` rewards differently from ``old`` (only steps with any)."""
    flips = {}
    for stored in run.rollouts:
        batch = audit.from_stored(stored)
        changed = int((batch.rescored(old).rewards != batch.rescored(new).rewards).sum())
        if changed:
            flips[stored["step"]] = changed
    return flips


# ------------------------------------------------------------------ what an evaluation reports

def reward_hack_count(run) -> tuple[int, int]:
    """(rollouts the run's own verifier paid but the exact verifier rejects, all rollouts) over ``run``'s training."""
    hits = total = 0
    for stored in run.rollouts:
        rows = audit.loophole_rows(audit.from_stored(stored))
        hits += int(rows.sum())
        total += len(rows)
    return hits, total


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def _ci(e: Estimate) -> str:
    return f"{e.value:.3f} [{e.lo:.3f}, {e.hi:.3f}]"


def evaluation_report(run, hack_run, selected: CheckpointScores, retained: list[dict]) -> list[tuple[str, str]]:
    """What an evaluation of an RL run should state, filled in from ``run`` (chapter 5's first table).

    ``hack_run`` supplies the reward-hacking cases (chapter 4's run against
    the fail-open verifier), ``selected`` is the chosen checkpoint of ``run``
    and ``retained`` the rows of :func:`retained_rows`. Returns (item, value) rows.
    """
    scores = checkpoint_scores(run)
    first, last = scores[0], scores[-1]
    rec = run.record
    verifier = f"{rec['verifier']['name']} {rec['verifier']['version']}"
    lengths = run.metric("completion_len")
    hacks, hack_total = reward_hack_count(hack_run)
    before = next(r for r in retained if r["step"] == 0)["accuracy"].value
    after = next(r for r in retained if r["step"] == selected.step)["accuracy"].value
    return [
        ("training reward (train prompts, training verifier)",
         f"{_ci(first.train_reward)} at step 0 → {_ci(last.train_reward)} at step {last.step}"),
        ("independent task outcome (held-out, exact 1.0)",
         f"{_ci(first.heldout)} at step 0 → {_ci(selected.heldout)} at the selected step {selected.step}"),
        ("trajectory length (generated tokens per answer)",
         f"{lengths[0]:.2f} at step 1 → {lengths[-1]:.2f} at step {len(lengths)}"),
        ("token and rollout budget",
         (f"{rec['sampling']['token_budget']} tokens per answer; {rec['cost']['rollouts']:,} rollouts, "
         f"{rec['cost']['generated_tokens']:,} generated tokens in training; "
         f"evaluation: {rec['evaluations'][0]['n']} samples per prompt at T={rec['evaluations'][0]['temperature']:g}")),
        ("verifier version", f"training: {verifier}; evaluation: exact 1.0 at every checkpoint"),
        ("reward-hacking cases",
         (f"{hack_run.name} run: {hacks:,} of {hack_total:,} rollouts ({_pct(hacks / hack_total)}) "
         f"paid by {hack_run.record['verifier']['name']} but rejected by exact")),
        ("retained capability (plain a+b=, greedy, 100 sums)",
         f"{before:.2f} before RL → {after:.2f} at the selected step"),
    ]


# ------------------------------------------------------------------ tables and records

def record_differences(a: dict, b: dict, skip: tuple[str, ...] = ("run_id", "created", "cost", "versions",
                                                                     "checkpoints", "evaluations")) -> list[tuple]:
    """Rows of :func:`rlbook.record.as_table` whose values differ between records ``a`` and ``b``.

    Fields that differ between any two runs (ids, times, cost, checkpoints
    and evaluations) are skipped by default: what is left says how the two
    runs were set up differently, and what their training produced.
    """
    rows_a, rows_b = dict(as_table(a)), dict(as_table(b))
    keys = list(rows_a) + [k for k in rows_b if k not in rows_a]
    return [(k, rows_a.get(k, "absent"), rows_b.get(k, "absent")) for k in keys
            if k.split(".")[0] not in skip and rows_a.get(k) != rows_b.get(k)]


def interrupted_copy(record: dict, step: int, last_checkpoint: str | None) -> dict:
    """A copy of ``record`` as it would read had the run stopped after ``step`` (chapter 5).

    Status ``interrupted`` and an ``interrupted`` entry naming the step and
    the checkpoint to resume from; the checkpoints and evaluations after
    ``step`` are dropped, since they were never made.
    """
    copy = dict(record, status="interrupted", interrupted={"step": step, "last_checkpoint": last_checkpoint})
    copy["checkpoints"] = [c for c in record["checkpoints"] if c["step"] <= step]
    copy["evaluations"] = [e for e in record["evaluations"] if e["step"] <= step]
    return copy


def zero_variance_rollouts(run) -> tuple[int, int]:
    """(rollouts in groups whose samples all got the same reward, all rollouts) over ``run``'s training.

    Such a group has advantage zero for every sample, so its rollouts cost
    sampling and scoring but move no weight (chapters 3 and 5).
    """
    zero = total = 0
    for metrics, stored in zip(run.metrics, run.rollouts):
        size = stored["tokens"].shape[0]
        zero += round(metrics["zero_variance_frac"] * size)
        total += size
    return int(zero), int(total)


def process_disagreements(result: EvalResult) -> dict[str, float]:
    """Where outcome and process scores of multi-step samples part ways (chapter 5's misconceptions).

    ``right_but_invalid_step``: share of accepted answers with at least one
    invalid step (the right total reached through a wrong partial sum);
    ``wrong_but_consistent``: share of rejected answers whose first step is
    wrong but whose second step is consistent with it, so that the process
    scorer still gives them 0.5 (:func:`rlbook.core.rewards.process_score` judges
    step 2 against the policy's own step 1). Also the two counts.
    """
    accepted, steps = [], []
    for task, statuses, completions in zip(result.tasks, result.statuses, result.completions):
        for status, text in zip(statuses, completions):
            accepted.append(status == "accepted")
            steps.append(rw.process_score(task.prompt, text).steps)
    right = [s for s, a in zip(steps, accepted) if a]
    wrong = [s for s, a in zip(steps, accepted) if not a]
    return {"right_but_invalid_step": float(np.mean([not all(s) for s in right])) if right else 0.0,
            "wrong_but_consistent": float(np.mean([s == (False, True) for s in wrong])) if wrong else 0.0,
            "accepted": len(right), "rejected": len(wrong)}
