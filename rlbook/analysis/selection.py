"""Checkpoint selection, matched comparisons and retained capability (chapter 8).

A run leaves a list of checkpoints, each evaluated on the same held-out
prompts with the same exact verifier and the same sampling settings
(``run.evals``). This module turns that into the decisions of chapter 8:

- :func:`checkpoint_scores`: every checkpoint's training reward, held-out,
  validation and test accuracy, each with a bootstrap interval over prompts;
- :func:`select_checkpoint` and :func:`selection_rows`: which checkpoint
  each selection rule picks, scored afterwards on the test prompts that no
  rule looked at; :func:`select_with_floor` adds a retained-capability
  constraint to the validation rule;
- :func:`matched_difference` and :func:`comparison_rows`: the pre-RL policy
  against a chosen checkpoint, under identical inference settings, and what
  happens to the apparent gain when the settings differ;
- :func:`plain_equation_accuracy` and :func:`retained_rows`: a
  retained-capability test, the plain ``a+b=`` format the policy was
  pretrained on and RL never rewards.

The held-out prompts split into ``validation`` (used to choose) and ``test``
(used only to score the choice), so a selection can be checked on prompts it
did not see (the usual train / validation / test discipline; for RL runs,
Henderson et al. 2018 and Agarwal et al. 2021 on reporting with intervals).
Re-scoring with another verifier version is :mod:`rlbook.analysis.versions`;
the report and the run record are :mod:`rlbook.analysis.run_report`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rlbook.analysis.tables import markdown_table  # noqa: F401  (every table-writing module re-exports it)
from rlbook.core.evaluate import EvalResult, evaluate
from rlbook.core.policy import Policy
from rlbook.core.sampling import sample
from rlbook.core.stats import Estimate, difference_ci, mean_with_ci, pass_at_k, wilson_interval
from rlbook.core.world import BUDGET, Task, split

RULES = ("training reward", "validation accuracy", "fixed budget")
"""The checkpoint-selection rules of chapter 8, in the order the chapter discusses them."""

MATCHED_SETTINGS = ("n", "temperature", "token_budget", "decoding", "verifier", "template")
"""The inference settings two evaluations must share to be compared (chapter 8)."""


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
    """The scores of every checkpoint of ``run``, in step order (chapter 8's checkpoint table and figures).

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
    """The checkpoint that ``rule`` picks (chapter 8).

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


def select_with_floor(scores: list[CheckpointScores], retained: dict[int, float], most_lost: float) -> CheckpointScores:
    """The validation rule restricted to checkpoints that keep a capability (chapter 8's retained capability).

    ``retained`` maps each checkpoint's step to its retained-capability score
    (step 0 is the policy RL started from); a checkpoint qualifies when its
    score is at most ``most_lost`` below step 0's. Step 0 always qualifies, so
    there is always a pick. Ties go to the earliest checkpoint.
    """
    floor = retained[0] - most_lost
    allowed = [s for s in scores if retained[s.step] >= floor - 1e-12]
    return select_checkpoint(allowed, "validation accuracy")


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
    """Expected reward of ``after`` minus ``before`` with a paired 95 % interval over prompts (chapter 8).

    Refuses (raises :class:`UnmatchedComparison`) when the two evaluations
    used different prompts, sample counts, temperatures, token budgets,
    decoding, verifiers or templates: then part of the difference would come
    from the evaluation, not from the policy. The interval resamples prompts
    with both policies' rates kept together (:func:`rlbook.core.stats.difference_ci`).
    """
    differ = unmatched_settings(after, before)
    if differ:
        details = ", ".join(
            f"{k}: {after.settings.get(k)!r} vs {before.settings.get(k)!r}" for k in differ if k != "tasks"
        )
        raise UnmatchedComparison(
            f"the evaluations differ in {', '.join(differ)}" + (f" ({details})" if details else "")
        )
    return difference_ci(after.per_prompt, before.per_prompt, paired=True, seed=seed)


def per_prompt_pass_at_k(result: EvalResult, k: int) -> np.ndarray:
    """Each prompt's unbiased pass@k from its ``n`` samples: the chance that one of k draws is accepted."""
    n = result.rewards.shape[1]
    return np.array([pass_at_k(n, int(c), k) for c in (result.rewards >= 1.0).sum(axis=1)])


def comparison_rows(
    before: Policy,
    after: Policy,
    tasks: list[Task],
    seed: int = 0,
    n: int = 32,
    budget: int = BUDGET,
    low_temperature: float = 0.5,
    k: int = 4,
) -> list[dict]:
    """Pre-RL (``before``) against post-RL (``after``): matched comparisons and two unmatched ones (chapter 8).

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
    return [
        {
            "comparison": label,
            "matched": matched,
            "after": float(a.mean()),
            "before": float(b.mean()),
            "difference": difference_ci(a, b, paired=True, seed=seed),
        }
        for label, matched, a, b in rows
    ]


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
    """Retained-capability test: share of sums answered right in the plain ``a+b=`` format, greedy (chapter 8).

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
