"""Chapter 3's measurements: from a group of rewards to a change in every token's probability.

Everything here reads the book's named runs (:mod:`rlbook.runs`) or their
policies and returns numbers or figures; nothing trains a run. The pieces:

- the record of a training step rebuilt from a run (:func:`recorded_batch`),
  next to the credit derived from it (:func:`record_and_credit`), and what
  recomputing its log-probabilities under another policy gives
  (:func:`logprob_drift`);
- the variance of policy-gradient estimates with and without a baseline,
  measured by sampling the same policy again and again
  (:func:`gradient_variance`);
- a real group's tokens with the advantage each receives
  (:func:`plot_token_credit`);
- importance ratios after several gradient steps on one batch, with PPO's
  clip region and CISPO's cap (:func:`ratio_drift`);
- the update choices compared across seeds (:func:`update_curves`);
- reward scale under Adam (:func:`scale_effect`) and under per-group
  normalisation (:func:`group_scale_table`);
- credit on a multi-step answer, by outcome and by step (:func:`split_credit`,
  :func:`process_group`, :func:`find_process_case`) for exercise 5.
"""
from __future__ import annotations

import contextlib
import copy
from dataclasses import dataclass, field, replace

import numpy as np
import torch
from matplotlib.colors import TwoSlopeNorm

from . import advantages as adv_lib
from . import losses
from . import plots
from . import rewards as rw
from .policy import Policy
from .rl import Batch, RLConfig, credit, generated_logprobs, update
from .runs import RUNS, Run, load
from .sampling import Rollouts, sample
from .train import adamw
from .world import decode, encode

COMPARED = ("main", "pg", "ppo", "cispo", "ppo-kl", "seq-mean", "group-std", "reward-x10")
"""The runs chapter 3 compares: ``main`` (cut at step 60) and the ablations of the update."""


@contextlib.contextmanager
def one_thread():
    """Run torch on one thread inside the block, then restore the previous count.

    Chapter 3's measurements are tiny: one thread is as fast as two on an
    idle machine, far faster on a busy one, and gives the same numbers
    whatever the machine's thread count.
    """
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def run_config(run: Run) -> RLConfig:
    """The RL configuration a run was trained with (its entry in :data:`rlbook.runs.RUNS`)."""
    cfg = RUNS[run.name].rl
    if cfg is None:
        raise ValueError(f"run {run.name!r} is a base run: it has no RL configuration")
    return cfg


def lr_at(cfg: RLConfig, step: int) -> float:
    """The learning rate a run used at ``step``: linear warm-up over ``cfg.warmup`` steps, then ``cfg.lr``.

    The same schedule as :func:`rlbook.rl.train_rl`, so that replaying one of
    its updates here uses the step size the run used.
    """
    return cfg.lr * min(1.0, step / max(1, cfg.warmup))


# --- The record of one step, and the credit derived from it ----------------------------------------------


def recorded_batch(run: Run, step: int) -> Batch:
    """The batch of training step ``step`` rebuilt from the run's stored record (chapter 3).

    Tokens, lengths, sampling log-probs, rewards, statuses and the policy
    version come from the record; the advantages are derived from the
    recorded rewards by the run's own rule (:func:`rlbook.rl.credit`), exactly
    as the run derived them (the group size is read from the record). Raises ValueError for a step the run did not take.
    """
    stored = next((r for r in run.rollouts if r["step"] == step), None)
    if stored is None:
        raise ValueError(f"run {run.name!r} has no rollouts for step {step}")
    cfg = run_config(run)
    tokens = stored["tokens"].long()
    group_size = tokens.shape[0] // len(stored["prompts"])
    prompts = [p for p in stored["prompts"] for _ in range(group_size)]
    prompt_ids = torch.tensor([encode(p) for p in prompts], dtype=torch.long)
    positions = torch.arange(tokens.shape[1])[None, :]
    mask = positions < stored["lengths"].long()[:, None]
    settings = {"temperature": cfg.temperature, "token_budget": cfg.budget, "group_size": group_size}
    rollouts = Rollouts(prompts, prompt_ids, tokens, stored["logprobs"].float(), mask, stored["policy_version"], settings)
    rewards = stored["rewards"].numpy().astype(float)
    statuses = [rw.STATUSES[int(i)] for i in stored["statuses"]]
    advantages, used = credit(replace(cfg, group_size=group_size), rewards, statuses)
    return Batch(step, rollouts, rewards, statuses, advantages, used)


def sampling_checkpoint(run: Run, batch: Batch) -> int:
    """The checkpoint step whose policy sampled ``batch``, read from its recorded policy version.

    A batch of step ``s`` is sampled by version ``"<run>@<s-1>"``; only steps
    after a checkpoint (1, 11, 21, ...) have that policy saved. Raises
    ValueError otherwise.
    """
    version = batch.rollouts.policy_version
    checkpoint = int(version.rsplit("@", 1)[1])
    if checkpoint not in run.steps:
        raise ValueError(f"policy {version!r} that sampled step {batch.step} was not saved; checkpoints: {run.steps}")
    return checkpoint


def record_and_credit(batch: Batch, row: int) -> tuple[list[dict], list[dict]]:
    """One rollout as the two structures chapter 3 keeps apart: the record and the credit.

    The record has one entry per generated token: position, token id,
    character and the log-probability it had when sampled, plus the policy
    version. The credit has one entry per position of the token budget: the
    advantage the update gives that position (0 where nothing was generated).
    """
    r = batch.rollouts
    n = int(r.lengths[row])
    record = [{"position": t, "token_id": int(r.tokens[row, t]), "character": decode([r.tokens[row, t]]),
               "sampling_logprob": round(float(r.logprobs[row, t]), 4), "policy_version": r.policy_version}
              for t in range(n)]
    per_token = adv_lib.token_advantages(batch.advantages, r.mask)[row]
    credit_rows = [{"position": t, "advantage": round(float(per_token[t]), 4), "trained": bool(r.mask[row, t])}
                   for t in range(r.tokens.shape[1])]
    return record, credit_rows


@one_thread()
def logprob_drift(run: Run, step: int, later: int) -> dict:
    """Recorded log-probs of step ``step`` against recomputed ones, under the sampling policy and a later one.

    Returns ``same_max_abs`` (largest gap when recomputed under the policy
    that sampled the batch: rounding only), ``later_mean_abs`` and
    ``later_max_abs`` (gaps under checkpoint ``later``) and
    ``later_outside_ppo`` (share of tokens whose ratio under the later policy
    lies outside PPO's ``[0.8, 1.2]``). Chapter 3 uses it to show why the
    record must name the policy that produced it.
    """
    batch = recorded_batch(run, step)
    mask = batch.rollouts.mask
    gaps = {}
    for name, checkpoint in (("same", sampling_checkpoint(run, batch)), ("later", later)):
        with torch.no_grad():
            logp, _ = generated_logprobs(run.policy(checkpoint), batch.rollouts)
        gaps[name] = (logp - batch.rollouts.logprobs)[mask]
    ratio = gaps["later"].exp()
    return {"same_max_abs": float(gaps["same"].abs().max()), "later_mean_abs": float(gaps["later"].abs().mean()),
            "later_max_abs": float(gaps["later"].abs().max()),
            "later_outside_ppo": float(((ratio < 0.8) | (ratio > 1.2)).float().mean()), "tokens": int(mask.sum())}


# --- Variance of the policy-gradient estimate -------------------------------------------------------------


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


@one_thread()
def gradient_variance(policy: Policy, prompts: list[str], group_size: int = 16, repeats: int = 16,
                      offsets=tuple(np.round(np.linspace(-1, 2, 31), 2)), seed: int = 0,
                      budget: int = 4) -> GradientVariance:
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
    params = [p for p in policy.parameters() if p.requires_grad]
    gen = torch.Generator().manual_seed(seed)
    verifier = rw.get_verifier("exact")
    raw, score, centred = [], [], []
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
        offsets=offsets, no_baseline=np.array([total_variance(g_r + c * g_1) for c in offsets]),
        group_baseline=total_variance(g_c), no_baseline_signal=float((g_r.mean(0) ** 2).sum()),
        group_signal=float((g_c.mean(0) ** 2).sum()), best_offset=-cov / total_variance(g_1), repeats=repeats,
        rollouts_per_estimate=len(prompts) * group_size)


def plot_gradient_variance(result: GradientVariance):
    """Variance of the estimate against the reward offset, without and with the group baseline (chapter 3)."""
    fig, ax = plots.figure(6.4, 3.4)
    ax.plot(result.offsets, result.no_baseline, color=plots.ORANGE, lw=2, label="no baseline: weight r + c")
    ax.axhline(result.group_baseline, color=plots.TEAL, lw=2, label="group baseline: weight r - mean(group)")
    ax.axvline(0, color=plots.GREY, lw=0.8, ls=":")
    ax.set_xlabel("offset c added to every reward")
    ax.set_ylabel("total variance of the gradient estimate")
    ax.set_yscale("log")
    ax.legend(loc="upper left")
    return fig


# --- Tokens and their advantages --------------------------------------------------------------------------


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


def plot_token_credit(batch: Batch, rows: list[int]):
    """A grid of characters: each rollout's prompt (grey, context) then its generated tokens coloured by advantage (chapter 3).

    The advantage printed under a generated character is the one the update
    multiplies that token's log-probability gradient by; prompt characters
    carry no advantage: they condition the policy but are not its actions.
    """
    r = batch.rollouts
    per_token = adv_lib.token_advantages(batch.advantages, r.mask)
    limit = 1.6 * (float(batch.advantages[rows].abs().max()) or 1.0)  # keep the darkest colours out: text stays legible
    norm = TwoSlopeNorm(vcenter=0.0, vmin=-limit, vmax=limit)
    texts = r.completions()
    size = r.group_size
    cmap = plots.plt.get_cmap("PuOr")
    prompt_len = r.prompt_ids.shape[1]
    width = prompt_len + r.tokens.shape[1]
    fig, ax = plots.figure(0.42 * width + 2.8, 0.62 * len(rows) + 0.6)
    for y, row in enumerate(rows):
        for x, ch in enumerate(r.prompts[row]):
            ax.add_patch(plots.plt.Rectangle((x, -y - 0.4), 0.92, 0.8, color="#e6e8ea"))
            ax.text(x + 0.46, -y, ch, ha="center", va="center", color=plots.GREY, family="monospace")
        for t in range(int(r.lengths[row])):
            value = float(per_token[row, t])
            ax.add_patch(plots.plt.Rectangle((prompt_len + t, -y - 0.4), 0.92, 0.8, color=cmap(norm(value))))
            ax.text(prompt_len + t + 0.46, -y + 0.08, decode([r.tokens[row, t]]), ha="center", va="center",
                    family="monospace", weight="bold")
            ax.text(prompt_len + t + 0.46, -y - 0.28, f"{value:+.2f}", ha="center", va="center", fontsize=6.5)
        group = range(row // size * size, (row // size + 1) * size)
        copies = sum(texts[i] == texts[row] for i in group)
        ax.text(width + 0.3, -y, f"reward {batch.rewards[row]:g}  ({copies} of {size})", va="center", fontsize=9)
    ax.set_xlim(-0.2, width + 3.6)
    ax.set_ylim(-len(rows) + 0.4, 0.6)
    ax.axis("off")
    return fig


# --- Importance ratios after several gradient steps on one batch ------------------------------------------


@dataclass
class RatioDrift:
    """Importance ratios of one batch's tokens after ``k`` gradient steps on it, for k = 1..updates (chapter 3).

    ``ratios[k-1]`` holds the ratio of every generated token after ``k``
    steps; ``advantages`` the token's advantage. The clip statistics are
    those each loss would report for the next step: ``ppo_clipped`` (share of
    tokens whose PPO gradient is zeroed: ratio past ``1 +/- eps`` on the side
    its advantage pushes), ``outside_ppo`` (ratio outside ``[1 - eps, 1 + eps]``
    on either side) and ``cispo_capped`` (ratio above CISPO's cap).
    """

    step: int
    updates: int
    ratios: list[np.ndarray]
    advantages: np.ndarray
    ppo_clipped: list[float]
    outside_ppo: list[float]
    cispo_capped: list[float]
    eps: float
    cap: float


@one_thread()
def ratio_drift(run: Run, step: int = 1, updates: int = 8, eps: float = 0.2, cap: float = 4.0) -> RatioDrift:
    """Take ``updates`` gradient steps on the recorded batch of ``step`` and watch its ratios move (chapter 3).

    Starts from the checkpoint that sampled the batch with a fresh AdamW at
    the learning rate the run used at that step (:func:`lr_at`), as the run
    itself does at its first step, and updates with the run's own loss
    (:func:`rlbook.rl.update`). For the
    ``ppo`` run (4 updates per batch) the statistics after 3 steps are the
    ones its log reports for step 1, whose last update sees them.
    """
    cfg = run_config(run)
    batch = recorded_batch(run, step)
    policy = run.policy(sampling_checkpoint(run, batch))
    opt = adamw(policy.parameters(), lr_at(cfg, step))
    r = batch.rollouts
    mask = r.mask & batch.used[:, None]
    token_adv = adv_lib.token_advantages(batch.advantages, mask)
    ratios, clipped, outside, capped = [], [], [], []
    for _ in range(updates):
        update(policy, opt, batch, cfg)
        with torch.no_grad():
            logp, _ = generated_logprobs(policy, r)
        _, ppo = losses.ppo_clip_loss(logp, r.logprobs, token_adv, mask, eps_low=eps, eps_high=eps)
        _, cispo = losses.cispo_loss(logp, r.logprobs, token_adv, mask, cap_high=cap)
        ratio = losses.importance_ratio(logp, r.logprobs)[mask]
        ratios.append(ratio.numpy())
        clipped.append(ppo["clip_fraction"])
        outside.append(float(((ratio < 1 - eps) | (ratio > 1 + eps)).float().mean()))
        capped.append(cispo["clip_fraction"])
    return RatioDrift(step, updates, ratios, token_adv[mask].numpy(), clipped, outside, capped, eps, cap)


def plot_ratio_drift(drift: RatioDrift, show=(1, 4, 8)):
    """Histograms of log10 importance ratios after k steps, by advantage sign, with PPO's region and CISPO's cap (chapter 3)."""
    fig, axes = plots.figure(9.6, 3.2, ncols=len(show), sharey=True)
    shown = np.log10(np.clip(np.concatenate([drift.ratios[k - 1] for k in show]), 1e-4, 10 ** 1.5))
    bins = np.linspace(min(-1.0, np.floor(shown.min() * 2) / 2), max(1.0, np.ceil(shown.max() * 2) / 2), 45)
    for ax, k in zip(np.atleast_1d(axes), show):
        logr = np.log10(np.clip(drift.ratios[k - 1], 1e-4, 10 ** 1.5))
        for sign, colour, label in ((1, plots.TEAL, "advantage > 0"), (-1, plots.ORANGE, "advantage < 0")):
            ax.hist(logr[np.sign(drift.advantages) == sign], bins=bins, color=colour, alpha=0.7, label=label)
        ax.axvspan(np.log10(1 - drift.eps), np.log10(1 + drift.eps), color=plots.BLUE, alpha=0.15,
                   label="PPO region 1 ± ε")
        ax.axvline(np.log10(drift.cap), color=plots.PURPLE, ls="--", label="CISPO cap")
        ax.set_yscale("log")
        ax.set_title(f"after {k} step{'s' if k > 1 else ''}: PPO clips {drift.ppo_clipped[k - 1]:.0%}", fontsize=9)
        ax.set_xlabel("log10(new / old probability)")
    np.atleast_1d(axes)[0].set_ylabel("tokens")
    np.atleast_1d(axes)[0].legend(fontsize=7, loc="upper left")
    return fig


# --- Groups with no signal ---------------------------------------------------------------------------------


def plot_zero_variance(run: Run):
    """Share of all-right and all-wrong groups per step (stacked) next to the mean reward (chapter 3)."""
    steps = run.metric("step")
    fig, (left, right) = plots.figure(9.0, 3.2, ncols=2)
    left.stackplot(steps, run.metric("zero_variance_all_right"), run.metric("zero_variance_all_wrong"),
                   colors=(plots.TEAL, plots.ORANGE), alpha=0.8, labels=("all right", "all wrong"))
    left.set_ylim(0, 1)
    left.set_ylabel("share of groups with no signal")
    left.legend(loc="upper left")
    right.plot(steps, run.metric("reward_mean"), color=plots.BLUE)
    right.set_ylim(0, 1)
    right.set_ylabel("mean training reward")
    for ax in (left, right):
        ax.set_xlabel("training step")
    return fig


def zero_variance_summary(run: Run, window: int = 20) -> dict:
    """The numbers chapter 3 quotes about groups with no signal in a run (chapter 3).

    ``first_*``: step 1; ``peak_wrong`` and ``peak_step``: the largest share
    of all-wrong groups and where; ``last_*``: means over the last ``window``
    steps. ``*_right`` and ``*_wrong`` are shares of all groups, ``*_reward``
    the mean training reward.
    """
    right, wrong = np.array(run.metric("zero_variance_all_right")), np.array(run.metric("zero_variance_all_wrong"))
    reward = np.array(run.metric("reward_mean"))
    return {"first_right": float(right[0]), "first_wrong": float(wrong[0]), "first_reward": float(reward[0]),
            "peak_wrong": float(wrong.max()), "peak_step": int(run.metric("step")[int(wrong.argmax())]),
            "last_right": float(right[-window:].mean()), "last_wrong": float(wrong[-window:].mean()),
            "last_reward": float(reward[-window:].mean()), "window": window}


# --- Update choices compared across seeds ------------------------------------------------------------------


@dataclass
class Curves:
    """One named run over seeds: held-out expected reward per checkpoint and KL to the base per step.

    A seed that the guard aborted (chapter 4) has NaN wherever it did not
    reach: at the checkpoints after its last one and the steps after its
    last. ``stopped`` maps such a seed to the step it stopped at. The
    summaries below are over the seeds that got there.
    """

    name: str
    description: str
    eval_steps: np.ndarray
    heldout: np.ndarray  # (seeds, checkpoints)
    kl: np.ndarray  # (seeds, steps)
    clip_fraction: np.ndarray  # (seeds, steps)
    stopped: dict[int, int] = field(default_factory=dict)

    @property
    def final(self) -> np.ndarray:
        """Held-out expected reward at the last checkpoint of the seeds that reached it."""
        last = self.heldout[:, -1]
        return last[~np.isnan(last)]

    def recent_kl(self, steps: int = 10) -> float:
        """Median of the logged KL over the last ``steps`` steps of every seed that reached them.

        A median, because the k3 estimate is occasionally huge on a token whose
        probability collapsed, and one such step would dominate a mean.
        """
        return float(np.nanmedian(self.kl[:, -steps:]))


def _padded(values: list, length: int) -> list[float]:
    """``values`` cut or padded with NaN to ``length``, missing entries as NaN."""
    values = [np.nan if v is None else v for v in values[:length]]
    return values + [np.nan] * (length - len(values))


def update_curves(names=COMPARED, seeds=(0, 1, 2), last_step: int = 60) -> dict[str, Curves]:
    """Held-out expected reward and per-step KL of each named run for each seed, up to ``last_step`` (chapter 3).

    ``main`` runs longer than the ablations; it is cut at ``last_step`` so
    every run is compared over the same steps from the same base. A seed the
    guard aborted counts up to where it stopped (:class:`Curves`).
    """
    curves = {}
    for name in names:
        runs = [load(name, seed) for seed in seeds]
        steps = np.array(sorted({e["step"] for run in runs for e in run.evals if e["step"] <= last_step}))
        heldout = np.array([[next((e["heldout_expected_reward"] for e in run.evals if e["step"] == s), np.nan)
                             for s in steps] for run in runs])
        kl = np.array([_padded(run.metric("kl"), last_step) for run in runs], dtype=float)
        clip = np.array([_padded(run.metric("clip_fraction"), last_step) for run in runs], dtype=float)
        stopped = {seed: run.log["abort"]["step"] for seed, run in zip(seeds, runs) if "abort" in run.log}
        curves[name] = Curves(name, RUNS[name].description, steps, heldout, kl, clip, stopped)
    return curves


# The runs that only rounding separates from ``main``: with one update per batch PPO's clipped objective has
# the plain policy gradient as its gradient, and AdamW all but cancels a constant reward scale.
DISGUISES = ("pg", "reward-x10")


# The least by which a run's worst seed must end below main's to count as lost (chapter 3), whatever rounding did.
LOST_FLOOR = 0.1
# The held-out gap from main within which a run in disguise still counts as agreeing with it (chapter 3).
AGREEMENT = 0.005


def agreed_until(curves: dict[str, Curves], names=DISGUISES, tol: float = AGREEMENT) -> int:
    """The last checkpoint up to which every run in ``names`` stays within ``tol`` of ``main`` on every seed (chapter 3).

    Only rounding separates them from ``main``, so they agree at first; the
    step at which a last-digit difference first changes a sampled answer
    differs from one processor to another: over eighteen numerical draws
    of the book's runs it fell anywhere from before the first checkpoint
    (this returns 0) to after the last. Step 0, the shared base policy,
    always agrees.
    """
    main = curves["main"]
    agree = np.ones(len(main.eval_steps), dtype=bool)
    for name in names:
        agree &= np.nanmax(np.abs(curves[name].heldout - main.heldout), axis=0) <= tol
    if not agree[0]:
        raise ValueError(f"{', '.join(names)} already differ from main at step {main.eval_steps[0]}")
    return int(main.eval_steps[np.cumprod(agree).astype(bool)][-1])


def rounding_gaps(curves: dict[str, Curves], names=DISGUISES) -> dict[str, tuple[float, float]]:
    """For each run in ``names``, its largest held-out gap from ``main`` over the seeds: up to :func:`agreed_until`, and overall.

    Chapter 3 reads the first as "one run in disguise" and the second as
    how far rounding alone can move one seed's value by the last
    checkpoint: once a last-digit difference changes one sampled answer,
    the two runs learn from different batches and drift apart.
    """
    main = curves["main"]
    early = main.eval_steps <= agreed_until(curves, names)
    gaps = {}
    for name in names:
        gap = np.abs(curves[name].heldout - main.heldout)
        gaps[name] = (float(np.nanmax(gap[:, early])), float(np.nanmax(gap)))
    return gaps


def lost_margin(gaps: dict[str, tuple[float, float]]) -> float:
    """How far below ``main``'s worst seed a run's worst seed must end to have *lost a seed* (chapter 3).

    The larger of :data:`LOST_FLOOR` and the late gaps of
    :func:`rounding_gaps`: further than rounding alone moved a seed.
    """
    return max(LOST_FLOOR, *(late for _, late in gaps.values()))


def stop_story(run: Run, before: int = 3) -> dict:
    """What a run that the guard aborted did in its last steps, from its log (chapter 3).

    ``jump_step`` is the step with the largest rise of the logged KL to the
    base; ``kl_before`` and ``kl_jump`` the KL at the step before and at it;
    ``malformed_before`` the largest malformed share in the ``before`` steps
    before the jump and ``malformed_peak`` the largest afterwards;
    ``reward_before`` and ``reward_last`` the mean training reward before the
    jump and at the last step; ``stopped`` the step the run stopped at and
    ``threshold`` the excluded batches in a row that stopped it.
    """
    if "abort" not in run.log:
        raise ValueError(f"{run.name} seed {run.seed} was not aborted")
    kl = np.array(_padded(run.metric("kl"), len(run.metrics)), dtype=float)  # NaN where no update was made
    jump = int(np.nanargmax(np.diff(kl))) + 1
    malformed, reward = np.array(run.metric("malformed_rate")), np.array(run.metric("reward_mean"))
    return {"jump_step": int(run.metric("step")[jump]), "kl_before": float(kl[jump - 1]), "kl_jump": float(kl[jump]),
            "malformed_before": float(malformed[max(0, jump - before):jump].max()),
            "malformed_peak": float(malformed[jump:].max()), "reward_before": float(reward[jump - 1]),
            "reward_last": float(reward[-1]), "stopped": int(run.log["abort"]["step"]),
            "threshold": int(run.log["abort"]["threshold"])}


def comparison_table(curves: dict[str, Curves]) -> list[dict]:
    """One row per run: its update choices, its final held-out reward (seed mean and range), recent KL and clip share (chapter 3).

    A run with an aborted seed says so in its last column; its reward and KL
    are over the seeds that finished.
    """
    rows = []
    for name, c in curves.items():
        cfg = RUNS[name].rl
        stops = ", ".join(f"seed {seed} at step {step}" for seed, step in c.stopped.items())
        rows.append({"run": name, "loss": cfg.loss, "updates": cfg.updates_per_batch, "aggregation": cfg.aggregation,
                     "advantage": cfg.advantage, "reward ×": f"{cfg.reward_scale:g}", "KL β": f"{cfg.kl_beta:g}",
                     f"held-out, step {int(c.eval_steps[-1])}": f"{c.final.mean():.3f} ({c.final.min():.3f}–{c.final.max():.3f})",
                     "KL": c.recent_kl(), "clipped": float(np.nanmean(c.clip_fraction)), "aborted": stops or None})
    return rows


def versus(curves: dict[str, Curves], a: str, b: str) -> str:
    """How run ``a``'s final held-out reward compares with run ``b``'s, in words (chapter 3).

    "above" or "below" when the gap between the seed means is larger than
    the wider of the two runs' ranges over seeds; otherwise "within the seed
    spread of": with three seeds, a smaller gap is not evidence either way.
    """
    fa, fb = curves[a].final, curves[b].final
    gap = float(fa.mean() - fb.mean())
    if abs(gap) <= max(np.ptp(fa), np.ptp(fb)):
        return "within the seed spread of"
    return "above" if gap > 0 else "below"


def markdown_table(rows: list[dict], digits: int = 3) -> str:
    """A list of dicts (same keys) as a Markdown table, floats rounded to ``digits`` decimals (chapter 3)."""
    cols = list(rows[0])

    def cell(value) -> str:
        if value is None:
            return "–"
        return f"{value:.{digits}f}" if isinstance(value, float) else str(value)

    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    lines += ["| " + " | ".join(cell(row[c]) for c in cols) + " |" for row in rows]
    return "\n".join(lines)


def plot_update_curves(curves: dict[str, Curves], panels: dict[str, tuple[str, ...]]):
    """Held-out expected reward (left: seed mean and range) and KL to the base (right: seed median) per panel (chapter 3).

    Each point summarises the seeds that reached it (an aborted seed drops out where it stopped).
    """
    colours = [plots.GREY, plots.BLUE, plots.TEAL, plots.ORANGE, plots.PURPLE, plots.RED]
    fig, axes = plots.plt.subplots(len(panels), 2, figsize=(9.6, 3.0 * len(panels)), squeeze=False)
    for (title, names), (left, right) in zip(panels.items(), axes):
        for name, colour in zip(names, colours):
            c = curves[name]
            left.plot(c.eval_steps, np.nanmean(c.heldout, 0), "o-", ms=3, color=colour, label=name)
            left.fill_between(c.eval_steps, np.nanmin(c.heldout, 0), np.nanmax(c.heldout, 0), color=colour, alpha=0.15)
            steps = np.arange(1, c.kl.shape[1] + 1)
            right.plot(steps, np.nanmedian(c.kl, axis=0), color=colour, lw=1.2)
        left.set_title(f"{title}: held-out expected reward", fontsize=10)
        right.set_title(f"{title}: KL to the base policy", fontsize=10)
        right.set_yscale("log")
        left.legend(fontsize=8, ncol=2)
    for ax in axes[-1]:
        ax.set_xlabel("training step")
    fig.tight_layout()
    return fig


# --- Reward scale -------------------------------------------------------------------------------------------


@one_thread()
def scale_effect(run: Run, scale: float = 10.0, step: int = 1) -> dict:
    """How one update changes when every advantage is multiplied by ``scale``, under AdamW and under plain SGD (chapter 3).

    From the policy that sampled ``step``'s batch, one update with the run's
    loss is taken twice, with the batch's advantages as they are and times
    ``scale``. Returns the ratio of the two parameter changes' norms and their
    cosine, for AdamW (``adam_*``, the book's optimiser) and SGD (``sgd_*``).
    AdamW divides each gradient by a running estimate of its own size, so a
    constant factor on the loss nearly cancels; SGD passes it straight on.
    """
    cfg = run_config(run)
    batch = recorded_batch(run, step)
    start = run.policy(sampling_checkpoint(run, batch))
    before = torch.cat([p.detach().flatten() for p in start.parameters()])
    result = {}
    for opt_name in ("adam", "sgd"):
        deltas = []
        for factor in (1.0, scale):
            policy = copy.deepcopy(start)
            lr = lr_at(cfg, step)
            opt = (adamw(policy.parameters(), lr) if opt_name == "adam"
                   else torch.optim.SGD(policy.parameters(), lr=lr))
            scaled = Batch(batch.step, batch.rollouts, batch.rewards, batch.statuses, batch.advantages * factor,
                           batch.used)
            update(policy, opt, scaled, cfg)
            deltas.append(torch.cat([p.detach().flatten() for p in policy.parameters()]) - before)
        result[f"{opt_name}_norm_ratio"] = float(deltas[1].norm() / deltas[0].norm())
        result[f"{opt_name}_cosine"] = float(torch.nn.functional.cosine_similarity(deltas[0], deltas[1], dim=0))
    return result


def group_scale_table(batch: Batch) -> list[dict]:
    """For each number of right answers ``k`` seen in a real batch: how many groups, and the advantages of a right and a wrong answer (chapter 3).

    Centred advantages are ``1 - k/G`` and ``-k/G``; dividing by the group's
    standard deviation (:func:`rlbook.advantages.group_normalized`) multiplies
    both by ``1/std``, which is largest for groups with one right answer or
    one wrong one. Groups with ``k = 0`` or ``k = G`` get 0 either way; an
    answer kind the group lacks (no wrong answer when ``k = G``) is None.
    """
    size = batch.rollouts.group_size
    grouped = torch.tensor(batch.rewards, dtype=torch.float32).view(-1, size)
    counts = (grouped >= 1.0).sum(dim=1)
    centred, normed = adv_lib.group_centered(grouped), adv_lib.group_normalized(grouped)
    rows = []
    for k in sorted(set(counts.tolist())):
        g = int((counts == k).nonzero()[0])
        right = grouped[g] >= 1.0
        pick = {"right": right.nonzero(), "wrong": (~right).nonzero()}
        row = {"right answers k": k, "groups": int((counts == k).sum())}
        for label, where in pick.items():
            row[f"centred ({label})"] = float(centred[g, where[0, 0]]) if len(where) else None
            row[f"std-normalised ({label})"] = float(normed[g, where[0, 0]]) if len(where) else None
        rows.append(row)
    return rows


# --- Credit on a multi-step answer (exercise 5) -------------------------------------------------------------


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
    """Per-character credit of one multi-step answer, by outcome and by step (chapter 3, exercise 5).

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


@one_thread()
def process_group(policy: Policy, prompt: str, n: int = 8, budget: int = 8, seed: int = 0) -> ProcessGroup:
    """Sample ``n`` answers to a multi-step prompt and derive both credits (chapter 3, exercise 5).

    The outcome advantage centres the exact verifier's reward within the
    group; the step advantage centres each step's validity
    (:func:`rlbook.rewards.process_score`) within the group, step by step.
    """
    rollouts = sample(policy, [prompt], n=n, budget=budget, generator=torch.Generator().manual_seed(seed))
    completions = rollouts.completions()
    rewards, _ = rw.score(rw.get_verifier("exact"), rollouts.prompts, completions)
    valid = np.array([[float(v) for v in rw.process_score(prompt, c).steps] for c in completions])
    return ProcessGroup(prompt, completions, rewards, rewards - rewards.mean(), valid, valid - valid.mean(axis=0))


def process_rows(group: ProcessGroup) -> list[dict]:
    """The group as table rows: each answer with its outcome, its steps' validity and both credits (chapter 3)."""
    rows = []
    for i, text in enumerate(group.completions):
        row = {"row": i, "answer": text, "outcome reward": float(group.rewards[i]),
               "outcome advantage": float(group.outcome_adv[i])}
        for k in range(group.step_valid.shape[1]):
            row[f"step {k + 1} valid"] = int(group.step_valid[i, k])
            row[f"step {k + 1} advantage"] = float(group.step_adv[i, k])
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
