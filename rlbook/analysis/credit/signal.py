"""Chapter 3's measurements of the learning signal: the variance of policy-gradient estimates with and without a
baseline, a real group's tokens with their advantages, groups that carry no signal, and credit on a multi-step
answer (Exercise 3.1).
"""

from dataclasses import asdict, dataclass

import numpy as np
import torch

from rlbook.core import advantages as adv_lib
from rlbook.core import losses
from rlbook.core import rewards as rw
from rlbook.core.policy import Policy
from rlbook.core.rl import Batch, generated_logprobs
from rlbook.core.sampling import sample
from rlbook.core.world import BUDGET, decode
from rlbook.runs import Run

from .replay import one_thread


@dataclass
class GradientVariance:
    """Total variance of repeated policy-gradient estimates (chapter 3).

    ``no_baseline[i]`` is the variance of the estimator that weights each
    answer by ``reward + offsets[i]``; ``group_baseline`` that of the
    estimator weighting it by ``reward - mean(its group's rewards)``, which
    no constant offset changes. ``*_signal`` are the squared norms of the
    mean estimates. ``best_offset`` minimises the no-baseline variance.
    """

    offsets: np.ndarray
    no_baseline: np.ndarray
    group_baseline: float
    no_baseline_signal: float
    group_signal: float
    best_offset: float
    repeats: int
    rollouts_per_estimate: int

    @property
    def ratio_at(self) -> dict[float, float]:
        """No-baseline variance divided by the group-baseline variance, at each offset."""
        return {float(c): float(v / self.group_baseline) for c, v in zip(self.offsets, self.no_baseline)}


def _flat_grad(loss: torch.Tensor, params: list[torch.Tensor]) -> torch.Tensor:
    grads = torch.autograd.grad(loss, params, retain_graph=True)
    return torch.cat([g.flatten() for g in grads])


OFFSETS = tuple(np.round(np.linspace(-1, 2, 31), 2))
"""The baseline offsets :func:`gradient_variance` tries by default: -1 to 2 in steps of 0.1."""


@one_thread()
def gradient_variance(
    policy: Policy,
    prompts: list[str],
    group_size: int = 16,
    repeats: int = 16,
    offsets=OFFSETS,
    seed: int = 0,
    budget: int = BUDGET,
) -> GradientVariance:
    """Measure how much policy-gradient estimates scatter, by sampling the same policy ``repeats`` times (chapter 3).

    Each repeat samples ``group_size`` answers per prompt, scores them with the
    exact verifier and computes the REINFORCE gradient
    ``mean_i w_i * grad log pi(answer_i)`` (Williams 1992) for three weights:
    the raw reward ``r_i``, the constant 1 (the score function alone) and the
    group-centred advantage ``r_i - mean(r_group)``. By linearity the estimate
    with weights ``r_i + c`` is the first plus ``c`` times the second, so the
    variance of every offset comes from the same samples. Total variance is
    the sum over parameters of the sample variance across repeats; its
    minimiser over ``c`` is ``-tr Cov(g_r, g_1) / tr Var(g_1)``.
    The group-centred estimate targets ``(G - 1) / G`` times the same
    gradient, so its mean is slightly shorter.
    """
    params: list[torch.Tensor] = [p for p in policy.parameters() if p.requires_grad]
    gen = torch.Generator().manual_seed(seed)
    verifier = rw.get_verifier("exact")
    raw: list[torch.Tensor] = []
    score: list[torch.Tensor] = []
    centred: list[torch.Tensor] = []
    for _ in range(repeats):
        rollouts = sample(policy, prompts, n=group_size, budget=budget, generator=gen)
        rewards, _ = rw.score(verifier, rollouts.prompts, rollouts.completions())
        r = torch.tensor(rewards, dtype=torch.float32)
        logp, _ = generated_logprobs(policy, rollouts)
        weights = (r, torch.ones_like(r), adv_lib.group_centered(r.view(-1, group_size)).flatten())
        for store, w in zip((raw, score, centred), weights):
            store.append(_flat_grad(losses.policy_gradient_loss(logp, w, rollouts.mask, how="constant"), params))
    g_r, g_1, g_c = (torch.stack(x).double() for x in (raw, score, centred))

    def total_variance(g: torch.Tensor) -> float:
        return float(((g - g.mean(0)) ** 2).sum() / (len(g) - 1))

    cov = float(((g_r - g_r.mean(0)) * (g_1 - g_1.mean(0))).sum() / (repeats - 1))
    offsets = np.asarray(offsets, dtype=float)
    return GradientVariance(
        offsets=offsets,
        no_baseline=np.array([total_variance(g_r + c * g_1) for c in offsets]),
        group_baseline=total_variance(g_c),
        no_baseline_signal=float((g_r.mean(0) ** 2).sum()),
        group_signal=float((g_c.mean(0) ** 2).sum()),
        best_offset=-cov / total_variance(g_1),
        repeats=repeats,
        rollouts_per_estimate=len(prompts) * group_size,
    )


def mixed_groups(batch: Batch) -> list[int]:
    """Indices of the groups of ``batch`` whose rewards are not all equal: the groups that carry a signal."""
    group_size = batch.rollouts.group_size
    grouped = torch.tensor(batch.rewards, dtype=torch.float32).view(-1, group_size)
    return (~adv_lib.zero_variance_mask(grouped)).nonzero().flatten().tolist()


def balanced_group(batch: Batch) -> int:
    """The group of ``batch`` whose share of right answers is closest to one half (the first such group)."""
    grouped = torch.tensor(batch.rewards, dtype=torch.float32).view(-1, batch.rollouts.group_size)
    return int((grouped.mean(dim=1) - 0.5).abs().argmin())


def group_rows(batch: Batch, group: int, per_reward: int = 3) -> list[int]:
    """Rows of group ``group`` to display: up to ``per_reward`` rollouts of each distinct reward, best first."""
    size = batch.rollouts.group_size
    rows = list(range(group * size, (group + 1) * size))
    chosen = []
    for value in sorted({float(batch.rewards[i]) for i in rows}, reverse=True):
        seen = []
        for i in rows:
            text = batch.rollouts.completions()[i]
            if float(batch.rewards[i]) == value and text not in seen:
                seen.append(text)
                chosen.append(i)
            if len(seen) == per_reward:
                break
    return chosen


def token_credit_rows(batch: Batch, rows: list[int]) -> list[dict]:
    """The rollouts ``rows`` of ``batch`` as chapter 3's figure of token credit draws them (plain data).

    Each row: the prompt's characters (context, no credit), the generated
    characters with the advantage each one's log-probability is weighted by
    (:func:`rlbook.core.advantages.token_advantages`: the answer's advantage,
    the same for every generated character), the answer's reward, and how
    many answers of its group were the same text.
    """
    r = batch.rollouts
    per_token = adv_lib.token_advantages(batch.advantages, r.mask)
    texts, size = r.completions(), r.group_size
    out = []
    for row in rows:
        group = range(row // size * size, (row // size + 1) * size)
        length = int(r.lengths[row])
        out.append(
            {
                "prompt": r.prompts[row],
                "tokens": [decode([r.tokens[row, t]]) for t in range(length)],
                "advantages": [float(per_token[row, t]) for t in range(length)],
                "reward": float(batch.rewards[row]),
                "copies": sum(texts[i] == texts[row] for i in group),
                "group_size": size,
            }
        )
    return out


def zero_variance_summary(run: Run, window: int = 20) -> dict:
    """The numbers chapter 3 quotes about groups with no signal in a run (chapter 3).

    ``first_*``: step 1; ``peak_wrong`` and ``peak_step``: the largest share
    of all-wrong groups and where; ``last_*``: means over the last ``window``
    steps. ``*_right`` and ``*_wrong`` are shares of all groups, ``*_reward``
    the mean training reward.
    """
    right, wrong = np.array(run.metric("zero_variance_all_right")), np.array(run.metric("zero_variance_all_wrong"))
    reward = np.array(run.metric("reward_mean"))
    return {
        "first_right": float(right[0]),
        "first_wrong": float(wrong[0]),
        "first_reward": float(reward[0]),
        "peak_wrong": float(wrong.max()),
        "peak_step": int(run.metric("step")[int(wrong.argmax())]),
        "last_right": float(right[-window:].mean()),
        "last_wrong": float(wrong[-window:].mean()),
        "last_reward": float(reward[-window:].mean()),
        "window": window,
    }


def token_steps(completion: str, n_steps: int) -> list[int]:
    """The step each generated character belongs to: the number of commas before it, at most ``n_steps - 1``.

    So the digits of the first partial sum and the comma that closes it are
    step 0, the next field and its closing comma or end mark step 1, and
    anything written after the expected steps counts as the last step.
    """
    steps, commas = [], 0
    for ch in completion:
        steps.append(min(commas, n_steps - 1))
        commas += ch == ","
    return steps


def split_credit(completion: str, outcome_adv: float, step_adv) -> dict[str, list[float]]:
    """Per-character credit of one multi-step answer, by outcome and by step (chapter 3, Exercise 3.1).

    ``"outcome"``: every generated character gets the answer's outcome
    advantage. ``"process"``: each character gets the advantage of the step it
    belongs to (:func:`token_steps`), so a correct first step is credited even
    when the final answer is wrong.
    """
    step_adv = [float(a) for a in step_adv]
    steps = token_steps(completion, len(step_adv))
    return {"outcome": [float(outcome_adv)] * len(completion), "process": [step_adv[s] for s in steps]}


@dataclass
class ProcessGroup:
    """A group of multi-step answers to one prompt with their outcome and per-step credit (chapter 3)."""

    prompt: str
    completions: list[str]
    rewards: np.ndarray  # (G,) exact-verifier outcome reward
    outcome_adv: np.ndarray  # (G,) group-centred outcome advantage
    step_valid: np.ndarray  # (G, steps) 1 where the process scorer accepts the step
    step_adv: np.ndarray  # (G, steps) group-centred step validity

    def as_data(self) -> dict:
        """The group as plain data (lists), as a chapter's facts keep it."""
        return {k: v.tolist() if isinstance(v, np.ndarray) else v for k, v in asdict(self).items()}


@one_thread()
def process_group(policy: Policy, prompt: str, n: int = 8, budget: int = 8, seed: int = 0) -> ProcessGroup:
    """Sample ``n`` answers to a multi-step prompt and derive both credits (chapter 3, Exercise 3.1).

    The outcome advantage centres the exact verifier's reward within the
    group; the step advantage centres each step's validity
    (:func:`rlbook.core.rewards.process_score`) within the group, step by step.
    """
    rollouts = sample(policy, [prompt], n=n, budget=budget, generator=torch.Generator().manual_seed(seed))
    completions = rollouts.completions()
    rewards, _ = rw.score(rw.get_verifier("exact"), rollouts.prompts, completions)
    valid = np.array([[float(v) for v in rw.process_score(prompt, c).steps] for c in completions])
    return ProcessGroup(prompt, completions, rewards, rewards - rewards.mean(), valid, valid - valid.mean(axis=0))


def visible(text: str) -> str:
    """``text`` with a newline shown as "⏎" and a space as "␣", so that a table or a sentence shows every character."""
    return text.replace("\n", "\u23ce").replace(" ", "\u2423")


def process_rows(group: ProcessGroup) -> list[dict]:
    """The group as table rows: each answer, its outcome reward, each step's validity and every credit (chapter 3).

    ``A`` columns are advantages: the outcome's, then each step's
    (group-centred step by step); ``ok`` columns say whether the process
    scorer accepted the step (1) or not (0). Answers are shown :func:`visible`.
    """
    rows = []
    for i, text in enumerate(group.completions):
        row = {
            "row": i,
            "answer": visible(text),
            "reward": float(group.rewards[i]),
            "A outcome": float(group.outcome_adv[i]),
        }
        for k in range(group.step_valid.shape[1]):
            row[f"step {k + 1} ok"] = int(group.step_valid[i, k])
            row[f"A step {k + 1}"] = float(group.step_adv[i, k])
        rows.append(row)
    return rows


def find_process_case(policy: Policy, prompts: list[str], n: int = 8, seed: int = 0) -> tuple[ProcessGroup, int]:
    """The first group (in prompt order) with a rollout whose outcome is wrong but whose first step is valid.

    Such a rollout is where outcome and process credit disagree: the outcome
    advantage is negative on every character, including the correct first
    partial sum. Returns the group and the row; raises LookupError if none of
    ``prompts`` produces one.
    """
    for i, prompt in enumerate(prompts):
        group = process_group(policy, prompt, n=n, seed=seed + i)
        for row in range(n):
            if group.rewards[row] < 1 and group.step_valid[row, 0] == 1 and group.outcome_adv[row] < 0:
                return group, row
    raise LookupError("no rollout with a valid first step and a wrong final answer in these prompts")
