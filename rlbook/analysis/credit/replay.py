"""Replays of recorded training steps: a step's batch rebuilt from a run's log with the credit derived from it
and its log-probabilities under later policies (chapter 3); the importance ratios that several updates on one
batch produce, and what scaling the rewards does to an update under Adam (chapter 4).
"""

import contextlib
import copy
from dataclasses import dataclass, replace

import numpy as np
import torch

from rlbook.core import advantages as adv_lib
from rlbook.core import losses
from rlbook.core import rewards as rw
from rlbook.core.rl import Batch, RLConfig, credit, generated_logprobs, update, warmup_lr
from rlbook.core.sampling import Rollouts
from rlbook.core.train import adamw
from rlbook.core.world import decode, encode
from rlbook.runs import RUNS, Run


@contextlib.contextmanager
def one_thread():
    """Run torch on one thread inside the block, then restore the previous count.

    Chapters 3 and 4's measurements are tiny: one thread is as fast as two on an
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


def recorded_batch(run: Run, step: int) -> Batch:
    """The batch of training step ``step`` rebuilt from the run's stored record (chapter 3).

    Tokens, lengths, sampling log-probs, rewards, statuses and the policy
    version come from the record; the advantages are derived from the
    recorded rewards by the run's own rule (:func:`rlbook.core.rl.credit`), exactly
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
    rollouts = Rollouts(
        prompts, prompt_ids, tokens, stored["logprobs"].float(), mask, stored["policy_version"], settings
    )
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
    record = [
        {
            "position": t,
            "token_id": int(r.tokens[row, t]),
            "character": decode([r.tokens[row, t]]),
            "sampling_logprob": round(float(r.logprobs[row, t]), 4),
            "policy_version": r.policy_version,
        }
        for t in range(n)
    ]
    per_token = adv_lib.token_advantages(batch.advantages, r.mask)[row]
    credit_rows = [
        {"position": t, "advantage": round(float(per_token[t]), 4), "trained": bool(r.mask[row, t])}
        for t in range(r.tokens.shape[1])
    ]
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
    return {
        "same_max_abs": float(gaps["same"].abs().max()),
        "later_mean_abs": float(gaps["later"].abs().mean()),
        "later_max_abs": float(gaps["later"].abs().max()),
        "later_outside_ppo": float(((ratio < 0.8) | (ratio > 1.2)).float().mean()),
        "tokens": int(mask.sum()),
    }


@dataclass
class RatioDrift:
    """Importance ratios of one batch's tokens after ``k`` gradient steps on it, for k = 1..updates (chapter 4).

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

    def histogram(self, k: int, bins: np.ndarray) -> dict[str, list[int]]:
        """Counts of log10 ratios after ``k`` steps in ``bins``, for tokens with a positive and a negative advantage.

        Ratios are clipped to the outer edges first, so every token is counted.
        """
        logr = np.clip(np.log10(self.ratios[k - 1]), bins[0], bins[-1])
        signs = np.sign(self.advantages)
        return {
            "positive": np.histogram(logr[signs > 0], bins)[0].tolist(),
            "negative": np.histogram(logr[signs < 0], bins)[0].tolist(),
        }


@one_thread()
def ratio_drift(run: Run, step: int = 1, updates: int = 8, eps: float = 0.2, cap: float = 4.0) -> RatioDrift:
    """Take ``updates`` gradient steps on the recorded batch of ``step`` and watch its ratios move (chapter 4).

    Starts from the checkpoint that sampled the batch with a fresh AdamW at
    the learning rate the run used at that step (:func:`rlbook.core.rl.warmup_lr`), as the run
    itself does at its first step, and updates with the run's own loss
    (:func:`rlbook.core.rl.update`). For the
    ``ppo`` run (4 updates per batch) the statistics after 3 steps are the
    ones its log reports for step 1, whose last update sees them.
    """
    cfg = run_config(run)
    batch = recorded_batch(run, step)
    policy = run.policy(sampling_checkpoint(run, batch))
    opt = adamw(policy.parameters(), warmup_lr(cfg.lr, cfg.warmup, step))
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


@one_thread()
def scale_effect(run: Run, scale: float = 10.0, step: int = 1) -> dict:
    """How one update changes when every advantage is multiplied by ``scale``, under AdamW and under plain SGD (chapter 4).

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
            lr = warmup_lr(cfg.lr, cfg.warmup, step)
            opt = adamw(policy.parameters(), lr) if opt_name == "adam" else torch.optim.SGD(policy.parameters(), lr=lr)
            scaled = Batch(
                batch.step, batch.rollouts, batch.rewards, batch.statuses, batch.advantages * factor, batch.used
            )
            update(policy, opt, scaled, cfg)
            deltas.append(torch.cat([p.detach().flatten() for p in policy.parameters()]) - before)
        result[f"{opt_name}_norm_ratio"] = float(deltas[1].norm() / deltas[0].norm())
        result[f"{opt_name}_cosine"] = float(torch.nn.functional.cosine_similarity(deltas[0], deltas[1], dim=0))
    return result


def group_scale_table(batch: Batch) -> list[dict]:
    """For each number of right answers ``k`` seen in a real batch: how many groups, and the advantages of a right and a wrong answer (chapter 3).

    Centred advantages are ``1 - k/G`` and ``-k/G``; dividing by the group's
    standard deviation (:func:`rlbook.core.advantages.group_normalized`) multiplies
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
