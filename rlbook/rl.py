"""The RL loop: sample groups, score them, turn rewards into advantages, update.

Chapter 1 runs one step of it by hand; chapter 3 dissects the update;
chapter 4 injects faults and watches the response policy act; chapter 5
reads the record it leaves. Every choice is a field of :class:`RLConfig`,
and the run record names each one.
"""
from __future__ import annotations

import copy
import random
import threading
import time
from collections import deque
from dataclasses import dataclass, field, fields

import numpy as np
import torch

from . import advantages as adv_lib
from . import losses
from . import rewards as rw
from .adamw import AdamW
from .evaluate import evaluate, greedy_accuracy, step_validity
from .policy import Checkpoint, Policy, token_logprobs, weights_hash
from .progress import progress
from .sampling import Rollouts, sample
from .train import adamw
from .world import EOT_ID, STOI, VOCAB, split

# How many distinct answers to one prompt generated_logprobs reads after one copy of the prompt. Fewer
# means more copies of the prompt to read; more means longer reads whose attention is mostly masked
# and which the prompts with few distinct answers pad. On one thread, a batch of main (60 prompts x
# 16) took 7.1 ms to update at 3 against 10.4 at 2, 7.2 at 4 and 11.8 with all of a prompt's answers
# in one read; the multi-step world's (64 x 8) took 10.6 ms at 3, 10.2 at 2 and 27.5 in one read.
ANSWERS_PER_READ = 3
FAULT_KINDS = ("verifier_outage", "verifier_timeout", "malformed_burst", "nan_loss")


@dataclass(frozen=True)
class Guard:
    """The response policy: when a batch is excluded, updates paused, or the run aborted (chapter 4)."""

    max_malformed_rate: float = 0.5
    max_verifier_error_rate: float = 0.1
    verifier_timeout_s: float = 2.0
    abort_after: int = 3


@dataclass(frozen=True)
class RLConfig:
    """Every choice of an RL run. The defaults are the book's ``main`` run."""

    world: str = "single"
    steps: int = 100
    group_size: int = 16
    prompts_per_step: int = 0
    temperature: float = 1.0
    budget: int = 4
    lr: float = 3e-4
    warmup: int = 10
    loss: str = "ppo"
    eps_low: float = 0.2
    eps_high: float = 0.2
    cispo_cap: float = 4.0
    aggregation: str = "token_mean"
    advantage: str = "centered"
    reward_scale: float = 1.0
    kl_beta: float = 0.0
    updates_per_batch: int = 1
    verifier: str = "exact"
    verifier_version: str | None = None
    stale: int = 0
    selection: str = "none"
    checkpoint_every: int = 10
    eval_n: int = 32
    faults: tuple = ()
    guard: Guard = field(default_factory=Guard)

    def loss_params(self) -> dict:
        if self.loss == "ppo":
            return {"eps_low": self.eps_low, "eps_high": self.eps_high}
        if self.loss == "cispo":
            return {"cap_high": self.cispo_cap}
        return {}


@dataclass
class Batch:
    """One step's rollouts together with the credit derived from them (kept apart from the record)."""

    step: int
    rollouts: Rollouts
    rewards: np.ndarray
    statuses: list[str]
    advantages: torch.Tensor
    used: torch.Tensor


def make_verifier(cfg: RLConfig):
    """The verifier the run trains against."""
    return rw.get_verifier(cfg.verifier, cfg.verifier_version)


def score_guarded(verifier, rollouts: Rollouts, timeout_s: float, fault: str | None = None):
    """Rewards and statuses, with a crash or a time-out of the verifier recorded, never raised.

    Returns ``(rewards, statuses, error)``: on failure every rollout is
    ``unverifiable`` with reward 0 and ``error`` says what happened.
    """
    def run():
        if fault == "verifier_outage":
            raise ConnectionError("injected fault: verifier service unavailable")
        if fault == "verifier_timeout":
            time.sleep(timeout_s * 1.5)
        return rw.score(verifier, rollouts.prompts, rollouts.completions())

    outcome: dict = {}

    def guarded():
        try:
            outcome["value"] = run()
        except Exception as err:  # noqa: BLE001 - any verifier failure becomes a recorded event
            outcome["error"] = f"verifier raised {type(err).__name__}: {err}"

    worker = threading.Thread(target=guarded, daemon=True)  # a hung verifier never keeps Python alive
    worker.start()
    worker.join(timeout_s)
    if "value" in outcome:
        rewards, statuses = outcome["value"]
        return rewards, statuses, None
    error = outcome.get("error", f"verifier timed out after {timeout_s:.1f} s")
    return np.zeros(len(rollouts)), ["unverifiable"] * len(rollouts), error


def corrupt(rollouts: Rollouts, share: float, gen: torch.Generator) -> Rollouts:
    """Inject a burst of malformed rollouts: a share of rows answer ``U`` then end (chapter 4 fault)."""
    hit = torch.rand(len(rollouts), generator=gen) < share
    tokens = rollouts.tokens.clone()
    mask = rollouts.mask.clone()
    tokens[hit] = EOT_ID
    tokens[hit, 0] = STOI["U"]
    mask[hit] = False
    mask[hit, :2] = True
    return Rollouts(rollouts.prompts, rollouts.prompt_ids, tokens, rollouts.logprobs, mask,
                    rollouts.policy_version, dict(rollouts.settings, corrupted=int(hit.sum())))


def credit(cfg: RLConfig, rewards: np.ndarray, statuses: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-rollout advantages and the rows the update uses, under the run's selection rule."""
    grouped = torch.tensor(rewards, dtype=torch.float32).view(-1, cfg.group_size) * cfg.reward_scale
    if cfg.selection == "accepted":
        used = torch.tensor([s == "accepted" for s in statuses])
        return used.float() * cfg.reward_scale, used
    advantages = adv_lib.compute_advantages(grouped, cfg.advantage).flatten()
    return advantages, torch.ones(len(statuses), dtype=torch.bool)


def _as_integers(rows: torch.Tensor) -> torch.Tensor:
    """Each row of token ids read as one integer in base ``len(VOCAB)``, the first token most significant."""
    return rows @ (len(VOCAB) ** torch.arange(rows.shape[1] - 1, -1, -1))


def _first_rows(inverse: torch.Tensor) -> torch.Tensor:
    """For each distinct value that ``inverse`` indexes, the index of one row holding it."""
    return torch.zeros(int(inverse.max()) + 1, dtype=torch.long).scatter_(0, inverse, torch.arange(len(inverse)))


def distinct_prompts(prompt_ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The distinct rows of ``prompt_ids`` in sorted order, and the index of each row among them.

    The same result as ``torch.unique(prompt_ids, dim=0, return_inverse=True)``,
    found by reading each row as one integer in base ``len(VOCAB)`` (the
    first token most significant, so the order is the same), which takes a
    fraction of the time on an RL batch.
    """
    width = prompt_ids.shape[1]
    if len(VOCAB) ** width >= 2 ** 63:
        raise ValueError(f"prompts of {width} tokens are too long to read as one 64-bit integer")
    _, row_prompt = torch.unique(_as_integers(prompt_ids), sorted=True, return_inverse=True)
    return prompt_ids[_first_rows(row_prompt)], row_prompt


def distinct_answers(row_prompt: torch.Tensor, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The distinct (prompt, answer) pairs of a batch: each pair's prompt index and tokens, and each row's pair.

    ``row_prompt`` (B,) gives each row's prompt index (from
    :func:`distinct_prompts`) and ``tokens`` (B, T) its answer. Returns the
    prompt index (D,) and tokens (D, T) of the D distinct pairs, sorted by
    prompt, and the index (B,) of each row's pair among them. A row is
    read as one integer, its prompt index then its tokens in base
    ``len(VOCAB)``, when that fits in 64 bits; otherwise by
    ``torch.unique`` over rows, which gives the same result more slowly.
    """
    width = tokens.shape[1]
    if (int(row_prompt.max()) + 1) * len(VOCAB) ** width < 2 ** 63:
        keys = row_prompt * len(VOCAB) ** width + _as_integers(tokens)
        _, row_answer = torch.unique(keys, sorted=True, return_inverse=True)
    else:
        _, row_answer = torch.unique(torch.cat([row_prompt[:, None], tokens], dim=1), dim=0, return_inverse=True)
    firsts = _first_rows(row_answer)
    return row_prompt[firsts], tokens[firsts], row_answer


def packed_reads(answer_prompt: torch.Tensor, n_prompts: int, per_read: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Which read of :func:`generated_logprobs` each distinct answer goes to, and where in it.

    ``answer_prompt`` (D,) is each answer's prompt index, sorted. A prompt
    with n answers gets ceil(n / ``per_read``) reads, each a copy of the
    prompt followed by up to ``per_read`` of its answers. Returns each read's
    prompt index (R,), and each answer's read (D,) and place in it (D,).
    """
    counts = torch.bincount(answer_prompt, minlength=n_prompts)
    slot = torch.arange(len(answer_prompt)) - (counts.cumsum(0) - counts)[answer_prompt]
    reads = (counts + per_read - 1) // per_read
    read = (reads.cumsum(0) - reads)[answer_prompt] + slot // per_read
    return torch.repeat_interleave(torch.arange(n_prompts), reads), read, slot % per_read


@dataclass
class PackedAnswers:
    """A batch's distinct answers laid out for :meth:`Policy.read_groups` (see :func:`pack_answers`).

    ``prompts`` (R, Lp) and ``grid`` (R, ANSWERS_PER_READ, T - 1) are the R
    reads: a prompt, then up to :data:`ANSWERS_PER_READ` of its distinct
    answers, each without its last token (nothing reads what follows it),
    padded with the end-of-turn id. ``answers`` (D, T) are the distinct answers,
    each at ``grid[read, place]``, and ``row`` (B,) gives each row's answer.
    """

    prompts: torch.Tensor
    grid: torch.Tensor
    answers: torch.Tensor
    read: torch.Tensor
    place: torch.Tensor
    row: torch.Tensor


def pack_answers(prompt_ids: torch.Tensor, tokens: torch.Tensor) -> PackedAnswers:
    """The reads that :func:`generated_logprobs` makes of a batch (``rlbook bench`` counts their tokens)."""
    prompts, row_prompt = distinct_prompts(prompt_ids)
    answer_prompt, answers, row_answer = distinct_answers(row_prompt, tokens)
    read_prompt, read, place = packed_reads(answer_prompt, len(prompts), ANSWERS_PER_READ)
    grid = torch.full((len(read_prompt), ANSWERS_PER_READ, answers.shape[1] - 1), EOT_ID, dtype=torch.long)
    grid[read, place] = answers[:, :-1]
    return PackedAnswers(prompts[read_prompt], grid, answers, read, place, row_answer)


def generated_logprobs(policy: Policy, rollouts: Rollouts) -> tuple[torch.Tensor, torch.Tensor]:
    """Log-probs and entropies of the recorded tokens under ``policy``, shape (B, budget).

    The ids come from the record, never from re-tokenising text (chapter 3).
    Two shortcuts give the same numbers, up to float rounding, as reading
    every row in full, at a fraction of the work:

    - a group's rollouts often repeat one another (a memorised prompt gets
      the same answer in most of its G samples), and equal rows have equal
      log-probs, so each distinct (prompt, answer) pair is read once and its
      numbers are handed to every row that holds it; autograd then sums the
      rows' gradients into the pair's;
    - the pairs of a group share their prompt, so a prompt is read once
      for up to :data:`ANSWERS_PER_READ` of its distinct answers, which
      follow it in the same sequence (:meth:`Policy.read_groups`). A prompt
      whose answers do not fill the last such read is padded with answers
      that are read and thrown away.
    """
    packed = pack_answers(rollouts.prompt_ids, rollouts.tokens)
    logits = policy.read_groups(packed.prompts, packed.grid)[packed.read, packed.place]
    logp_all = torch.log_softmax(logits, dim=-1)
    logp = logp_all.gather(-1, packed.answers[:, :, None]).squeeze(-1)
    entropy = -(logp_all.exp() * logp_all).sum(-1)
    return logp[packed.row], entropy[packed.row]


def reference_logprobs(reference: Policy, rollouts: Rollouts) -> torch.Tensor:
    """Log-probs of the recorded tokens under the frozen reference policy, without a gradient.

    The reference never changes and a batch is fixed, so :func:`train_rl`
    needs them once per batch, however many updates it makes on the batch,
    and reads them once per run for each (prompt, answer) pair
    (:class:`ReferenceMemo`). Like sampling, it reads in
    ``torch.inference_mode`` and hands back an ordinary copy (see
    :func:`rlbook.sampling.sample`).
    """
    with torch.inference_mode():
        logp = generated_logprobs(reference, rollouts)[0]
    return logp.clone()


def row_keys(prompt_ids: torch.Tensor, tokens: torch.Tensor) -> list[bytes]:
    """Each row's prompt and answer ids as one ``bytes`` key (every token id fits in a byte)."""
    rows = torch.cat([prompt_ids, tokens], dim=1).to(torch.uint8)
    width, data = rows.shape[1], rows.numpy().tobytes()
    return [data[start:start + width] for start in range(0, len(data), width)]


def unmet(keys: list[bytes], met) -> dict[bytes, int]:
    """Each key of ``keys`` not in ``met`` (a set or dict), with the first row that holds it, in row order."""
    fresh: dict[bytes, int] = {}
    for row, key in enumerate(keys):
        if key not in met:
            fresh.setdefault(key, row)
    return fresh


@dataclass
class ReferenceMemo:
    """The reference policy's log-probs of every (prompt, answer) pair a run has sampled, each read once.

    The reference never changes, and most of a batch's pairs were sampled
    at an earlier step too: a memorised prompt gets the same answer step
    after step (in ``main``, seven of every eight distinct pairs of a step
    had come before). So :func:`train_rl` reads with the reference only the
    pairs it has not met, and looks the others up. A pair keeps the numbers
    of its first read, which can differ from a fresh read in the last bits
    of float rounding, since the pairs read together differ. ``index`` maps
    a pair's key (:func:`row_keys`) to its row of ``values``.
    """

    index: dict[bytes, int] = field(default_factory=dict)
    values: torch.Tensor | None = None

    def logprobs(self, reference: Policy, rollouts: Rollouts) -> torch.Tensor:
        """The reference's log-probs of ``rollouts``' recorded tokens, as :func:`reference_logprobs` gives them."""
        keys = row_keys(rollouts.prompt_ids, rollouts.tokens)
        fresh = unmet(keys, self.index)
        if fresh:
            read = reference_logprobs(reference, rollouts.select(list(fresh.values())))
            known = 0 if self.values is None else len(self.values)
            self.values = read if self.values is None else torch.cat([self.values, read])
            self.index.update(zip(fresh, range(known, known + len(fresh))))
        return self.values[[self.index[key] for key in keys]]


def update(policy: Policy, opt: AdamW | torch.optim.Optimizer, batch: Batch, cfg: RLConfig,
           ref_logp: torch.Tensor | None = None, poison: bool = False) -> dict:
    """One gradient step on a batch; returns the loss statistics.

    ``ref_logp`` (from :func:`reference_logprobs`) gives the KL to the
    reference, logged and, with ``cfg.kl_beta > 0``, added to the loss.
    A non-finite loss is not applied: the step is skipped and reported in
    ``stats["finite"] = False`` so the loop can record an intervention.
    """
    rollouts = batch.rollouts
    mask = rollouts.mask & batch.used[:, None]
    logp, entropy = generated_logprobs(policy, rollouts)
    loss, stats = losses.token_loss(cfg.loss, logp, rollouts.logprobs, batch.advantages, mask,
                                    how=cfg.aggregation, max_tokens=cfg.budget, **cfg.loss_params())
    kl = torch.zeros(())
    if ref_logp is not None:
        kl = losses.aggregate(losses.kl_k3(logp, ref_logp), mask, cfg.aggregation, cfg.budget)
        if cfg.kl_beta > 0:
            loss = loss + cfg.kl_beta * kl
    if poison:
        loss = loss * float("nan")
    stats.update(loss=float(loss.detach()), kl=float(kl.detach()), entropy=float(losses.aggregate(entropy.detach(), rollouts.mask)),
                 finite=bool(torch.isfinite(loss)))
    opt.zero_grad(set_to_none=True)
    if stats["finite"]:
        loss.backward()
        opt.step()
    return stats


def rollout_metrics(cfg: RLConfig, batch: Batch) -> dict:
    """Per-step measurements of the sampled batch (reward, zero-variance groups, composition)."""
    grouped = torch.tensor(batch.rewards, dtype=torch.float32).view(-1, cfg.group_size)
    split_zero = adv_lib.zero_variance_split((grouped >= 1.0).float())
    n = len(batch.statuses)
    share = {s: batch.statuses.count(s) / n for s in rw.STATUSES}
    return {"reward_mean": float(grouped.mean()), "reward_std": float(grouped.std()),
            "zero_variance_frac": adv_lib.zero_variance_fraction(grouped),
            "zero_variance_all_right": split_zero["all_right"], "zero_variance_all_wrong": split_zero["all_wrong"],
            "completion_len": float(batch.rollouts.lengths.float().mean()),
            **{f"{s}_rate": v for s, v in share.items()}, "rollouts_used": int(batch.used.sum())}


def checkpoint_eval(policy: Policy, cfg: RLConfig, seed: int, step: int) -> dict:
    """Independent evaluation at a checkpoint: exact verifier, held-out and train prompts.

    The sampler's seed depends only on (seed, step), so evaluating never
    disturbs the training run's random stream.
    """
    exact = rw.get_verifier("exact")
    eval_seed = 10_000 * (seed + 1) + step
    heldout = evaluate(policy, split("heldout", cfg.world), n=cfg.eval_n, budget=cfg.budget, verifier=exact, seed=eval_seed)
    train = evaluate(policy, split("train", cfg.world), n=cfg.eval_n, budget=cfg.budget, verifier=exact,
                     seed=eval_seed + 1)
    train_rewards, _, error = score_guarded(make_verifier(cfg), train.rollouts, cfg.guard.verifier_timeout_s)
    entry = {"step": step, "heldout_expected_reward": heldout.expected_reward,
             "heldout_per_prompt": heldout.per_prompt.round(5).tolist(),
             "heldout_greedy_accuracy": greedy_accuracy(policy, split("heldout", cfg.world), cfg.budget, exact),
             "train_reward": float(train_rewards.mean()), "train_reward_error": error,
             "train_per_prompt": train_rewards.reshape(train.rewards.shape).mean(axis=1).round(5).tolist(),
             "train_exact_reward": train.expected_reward,
             "heldout_status_counts": heldout.status_counts()}
    if cfg.world == "multi":
        entry["heldout_step_validity"] = step_validity(heldout)
    return entry


@dataclass
class RLState:
    """Everything needed to continue a run exactly where it stopped."""

    step: int
    policy: dict
    optimizer: dict
    generator: torch.Tensor
    pool: list
    log: dict
    picker: tuple | None = None
    reference: ReferenceMemo | None = None

    def save(self, path) -> None:
        """Write the state's fields to ``path`` with ``torch.save``.

        Not through ``dataclasses.asdict``: it would first deep-copy the whole
        log, which cost more than writing it.
        """
        torch.save({f.name: getattr(self, f.name) for f in fields(self)}, path)

    @classmethod
    def load(cls, path) -> "RLState":
        return cls(**torch.load(path, weights_only=False))


def new_log() -> dict:
    """The run's growing log: metrics per step, evaluations, checkpoints, rollouts and events."""
    return {"metrics": [], "evals": [], "checkpoints": [], "rollouts": [], "interventions": [],
            "aborted_updates": [], "status": "running", "wall_seconds": 0.0}


def _store(batch: Batch) -> dict:
    """The compact per-step rollout record kept in the run's cache."""
    r = batch.rollouts
    return {"step": batch.step, "prompts": r.prompts[:: r.group_size], "tokens": r.tokens.to(torch.uint8),
            "lengths": r.lengths.to(torch.uint8), "logprobs": r.logprobs.clone(),
            "rewards": torch.tensor(batch.rewards, dtype=torch.float32),
            "statuses": torch.tensor([rw.STATUSES.index(s) for s in batch.statuses], dtype=torch.uint8),
            "policy_version": r.policy_version, "used": batch.used.clone()}


def _intervene(log: dict, step: int, kind: str, reason: str, metric: str, value: float, threshold: float,
               affected: int) -> None:
    log["interventions"].append({"step": step, "kind": kind, "reason": reason,
                                 "trigger": {"metric": metric, "value": float(value), "threshold": float(threshold)},
                                 "affected_rollouts": int(affected)})


def guard_batch(cfg: RLConfig, log: dict, step: int, statuses: list[str], error: str | None) -> bool:
    """Apply the response policy to a scored batch; True when the batch may be learned from."""
    n = len(statuses)
    if error is not None:
        rate = statuses.count("unverifiable") / n
        _intervene(log, step, "updates paused", error, "verifier_error_rate", rate,
                   cfg.guard.max_verifier_error_rate, n)
        return False
    malformed = statuses.count("malformed") / n
    if malformed > cfg.guard.max_malformed_rate:
        _intervene(log, step, "batch excluded", "malformed rollouts above the limit", "malformed_rate", malformed,
                   cfg.guard.max_malformed_rate, statuses.count("malformed"))
        return False
    return True


def _trailing_exclusions(log: dict) -> int:
    """How many of the last steps in a row were excluded or paused (the abort rule's counter)."""
    count = 0
    for m in reversed(log["metrics"]):
        if not m["excluded"]:
            break
        count += 1
    return count


def _faults_at(cfg: RLConfig, step: int) -> set[str]:
    return {kind for at, kind in cfg.faults if at == step}


def train_rl(policy: Policy, cfg: RLConfig, seed: int, name: str = "rl", state: RLState | None = None,
             on_checkpoint=None) -> dict:
    """Run RL from ``policy`` (or continue from ``state``); returns the run log.

    ``on_checkpoint(state)`` is called with a resumable :class:`RLState` at
    every checkpoint, so an interrupted run loses at most ``checkpoint_every``
    steps and resumes bit-identically with the same seed and thread count.
    The state shares the run's live weights, optimiser state, log and
    reference memo, which training goes on changing: save it (or copy it)
    before returning.
    """
    reference = copy.deepcopy(policy).eval()
    opt = adamw(policy.parameters(), cfg.lr)
    gen = torch.Generator().manual_seed(seed)
    log, pool, first = new_log(), deque(maxlen=cfg.stale + 1), 1
    picker = random.Random(seed)
    memo = ReferenceMemo()
    if state is not None:
        policy.load_state_dict(state.policy)
        opt.load_state_dict(state.optimizer)
        gen.set_state(state.generator)
        log, first = state.log, state.step + 1
        pool.extend(state.pool)
        if state.picker is not None:
            picker.setstate(state.picker)
        if state.reference is not None:
            memo = state.reference
    else:
        _checkpoint(policy, cfg, seed, name, 0, log)
    verifier = make_verifier(cfg)
    tasks = split("train", cfg.world)
    started = time.perf_counter() - log["wall_seconds"]
    consecutive = _trailing_exclusions(log)
    for step in progress(range(first, cfg.steps + 1), desc=name, total=cfg.steps - first + 1):
        for group in opt.param_groups:  # linear warm-up: Adam's first steps are otherwise full-sized
            group["lr"] = cfg.lr * min(1.0, step / max(1, cfg.warmup))
        faults = _faults_at(cfg, step)
        t0 = time.perf_counter()
        chosen = tasks if not cfg.prompts_per_step else picker.sample(tasks, cfg.prompts_per_step)
        policy.version = f"{name}@{step - 1}"
        rollouts = sample(policy, [t.prompt for t in chosen], n=cfg.group_size, temperature=cfg.temperature,
                          budget=cfg.budget, generator=gen)
        if "malformed_burst" in faults:
            rollouts = corrupt(rollouts, 0.8, gen)
        rewards, statuses, error = score_guarded(verifier, rollouts, cfg.guard.verifier_timeout_s,
                                                 next((f for f in faults if f.startswith("verifier")), None))
        advantages, used = credit(cfg, rewards, statuses)
        batch = Batch(step, rollouts, rewards, statuses, advantages, used)
        t1 = time.perf_counter()
        ok = guard_batch(cfg, log, step, statuses, error)
        stats = {}
        if ok:
            pool.append(batch)
            learn = pool[0]
            ref_logp = memo.logprobs(reference, learn.rollouts)
            for _ in range(cfg.updates_per_batch):
                stats = update(policy, opt, learn, cfg, ref_logp, poison="nan_loss" in faults)
            if not stats["finite"]:
                ok = False
                log["aborted_updates"].append({"step": step, "reason": "non-finite loss", "measurement": str(stats["loss"])})
                _intervene(log, step, "batch excluded", "non-finite loss", "loss_is_finite", 0.0, 1.0, len(statuses))
        consecutive = 0 if ok else consecutive + 1
        if not ok:
            batch.used = torch.zeros_like(batch.used)
        log["metrics"].append({"step": step, **rollout_metrics(cfg, batch), "excluded": not ok,
                               **{k: v for k, v in stats.items() if k != "finite"},
                               "sample_seconds": t1 - t0, "update_seconds": time.perf_counter() - t1})
        log["rollouts"].append(_store(batch))
        log["wall_seconds"] = time.perf_counter() - started
        if consecutive >= cfg.guard.abort_after:
            log["status"] = "aborted"
            log["abort"] = {"step": step, "reason": f"{consecutive} consecutive batches excluded or paused",
                            "threshold": cfg.guard.abort_after}
            break
        if step % cfg.checkpoint_every == 0 or step == cfg.steps:
            _checkpoint(policy, cfg, seed, name, step, log)
            if on_checkpoint is not None:
                on_checkpoint(RLState(step, policy.state_dict(), opt.state_dict(), gen.get_state(), list(pool), log,
                                      picker.getstate(), memo))
    if log["status"] == "running":
        log["status"] = "completed"
    policy.version = f"{name}@{log['checkpoints'][-1]['step']}"
    return log


def _checkpoint(policy: Policy, cfg: RLConfig, seed: int, name: str, step: int, log: dict) -> None:
    policy.version = f"{name}@{step}"
    log["checkpoints"].append({"step": step, "version": policy.version, "weights_hash": weights_hash(policy),
                               "checkpoint": Checkpoint.of(policy, policy.version)})
    log["evals"].append(checkpoint_eval(policy, cfg, seed, step))
