"""Auditing what a run learned from: rollout composition, reward hacks, selection and incidents.

Chapter 4 uses every function here. The unit of an audit is a batch of
rollouts as the verifier saw it (:class:`AuditBatch`): one row per rollout,
its prompt, its completion text and the verifier's status. A batch comes
either from fresh samples (:func:`from_rollouts`) or from the per-step
rollouts a run stored (:func:`from_stored`), so the same definitions apply to
both.

The exploration audit puts every rollout in exactly one category
(:data:`CATEGORIES`), checked in this order:

1. ``unverifiable``: the verifier could not judge it (e.g. an outage);
2. ``budget-stopped``: no end-of-turn mark, the token budget ended it
   (verifier status ``incomplete``);
3. ``malformed``: it ended, but the answer is not in the required format;
4. ``duplicate``: a readable answer (accepted or incorrect) whose completion
   already occurred earlier in the same prompt's group, i.e. a non-first
   occurrence; it adds no new candidate to the group;
5. ``accepted`` / ``incorrect``: the first occurrence of a readable answer,
   by the verifier's verdict.

So malformed and budget-stopped shares equal the verifier's rates, and the
accepted and incorrect shares count *distinct* answers per group.
Separately, a rollout is *novel* when its completion had not been seen for
that prompt in any earlier batch of the sequence (earlier steps of a run, or
earlier rounds of fresh sampling).
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

import numpy as np
import torch

from rlbook.core import rewards as rw
from rlbook.core.evaluate import evaluate
from rlbook.core.policy import Policy
from rlbook.core.sampling import Rollouts, sample
from rlbook.core.stats import pass_at_k_curve
from rlbook.core.world import Task, decode

CATEGORIES = ("accepted", "incorrect", "duplicate", "malformed", "budget-stopped", "unverifiable")
"""The exploration audit's categories, in the order they are stacked in a figure."""

READABLE = ("accepted", "incorrect")
"""Statuses of answers the verifier could read, the only ones that can be duplicates."""


@dataclass
class AuditBatch:
    """One batch of rollouts as the verifier judged it (chapter 4).

    ``prompts``, ``completions`` and ``statuses`` have one entry per rollout;
    the rows of one prompt form a contiguous group of ``group_size``.
    ``rewards`` are the rewards the statuses came with.
    """

    prompts: list[str]
    completions: list[str]
    statuses: list[str]
    rewards: np.ndarray
    group_size: int
    step: int | None = None

    def __len__(self) -> int:
        return len(self.completions)

    @property
    def tokens(self) -> int:
        """Generated tokens in the batch (the world is character-level: one character, one token)."""
        return sum(len(c) for c in self.completions)

    def rescored(self, verifier) -> "AuditBatch":
        """The same rollouts judged by another verifier (e.g. the exact one for a fail-open run)."""
        rewards, statuses = rw.score(verifier, self.prompts, self.completions)
        return AuditBatch(self.prompts, self.completions, statuses, rewards, self.group_size, self.step)


def from_rollouts(rollouts: Rollouts, verifier) -> AuditBatch:
    """An audit batch from freshly sampled :class:`~rlbook.core.sampling.Rollouts`, scored by ``verifier``."""
    completions = rollouts.completions()
    rewards, statuses = rw.score(verifier, rollouts.prompts, completions)
    return AuditBatch(list(rollouts.prompts), completions, statuses, rewards, rollouts.group_size)


def from_stored(stored: dict, verifier=None) -> AuditBatch:
    """An audit batch from one step of a run's stored rollouts (``run.rollouts[i]``).

    The statuses are those the run's own verifier gave, unless ``verifier`` is
    given, in which case the completions are judged again by it.
    """
    group_size = len(stored["tokens"]) // len(stored["prompts"])
    prompts = [p for p in stored["prompts"] for _ in range(group_size)]
    completions = [decode(row[:n]) for row, n in zip(stored["tokens"].tolist(), stored["lengths"].tolist())]
    statuses = [rw.STATUSES[i] for i in stored["statuses"].tolist()]
    batch = AuditBatch(prompts, completions, statuses, stored["rewards"].numpy().astype(float), group_size,
                       stored["step"])
    return batch.rescored(verifier) if verifier is not None else batch


def categorise(batch: AuditBatch) -> list[str]:
    """The audit category of every rollout (see the module docstring for the rules and their order)."""
    first_seen: set[tuple[int, str]] = set()
    labels = []
    for row, (text, status) in enumerate(zip(batch.completions, batch.statuses)):
        key = (row // batch.group_size, text)
        if status == "incomplete":
            labels.append("budget-stopped")
        elif status not in READABLE:
            labels.append(status)
        elif key in first_seen:
            labels.append("duplicate")
        else:
            labels.append(status)
        first_seen.add(key)
    return labels


def composition(batch: AuditBatch) -> dict[str, float]:
    """Share of the batch's rollouts in each of :data:`CATEGORIES` (the shares sum to 1)."""
    counts = Counter(categorise(batch))
    return {c: counts[c] / len(batch) for c in CATEGORIES}


def duplicate_shares(batch: AuditBatch) -> dict[str, float]:
    """The duplicate share split by what is repeated: ``{"accepted": x, "incorrect": y}`` (x + y = duplicate share).

    In this world a prompt has one right answer, so a group holds at most one
    distinct accepted rollout and every further right answer is a duplicate:
    a rising reward made of duplicates is the policy repeating an answer it
    had already found, not finding a new one.
    """
    counts = Counter(s for s, c in zip(batch.statuses, categorise(batch)) if c == "duplicate")
    return {s: counts[s] / len(batch) for s in READABLE}


def novelty(batches: Sequence[AuditBatch]) -> list[dict]:
    """For each batch, how much of it is new relative to all earlier batches of the sequence.

    A rollout is novel when its (prompt, completion) pair occurred in no
    earlier batch. Returns one dict per batch: ``novel_share`` (share of its
    rollouts that are novel; 1.0 for the first batch, which has nothing
    before it), ``novel_answers`` (distinct new pairs) and ``seen_answers``
    (distinct pairs seen so far, this batch included).
    """
    seen: set[tuple[str, str]] = set()
    out = []
    for batch in batches:
        pairs = list(zip(batch.prompts, batch.completions))
        novel = [p not in seen for p in pairs]
        new = {p for p, is_new in zip(pairs, novel) if is_new}
        seen |= new
        out.append({"novel_share": sum(novel) / len(pairs), "novel_answers": len(new), "seen_answers": len(seen)})
    return out


def run_composition(stored_steps: Iterable[dict], verifier=None) -> list[dict]:
    """Composition, novelty and generated tokens of every stored step of a run (chapter 4's audit over ``main``).

    One dict per step: ``step``, a share per category, the duplicate share
    split by what it repeats (``duplicate_accepted``, ``duplicate_incorrect``,
    see :func:`duplicate_shares`), ``novel_share``,
    ``novel_answers``, ``reward_mean`` and ``tokens``. ``verifier`` re-judges
    the completions (default: the statuses the run recorded).
    """
    batches = [from_stored(s, verifier) for s in stored_steps]
    rows = []
    for batch, new in zip(batches, novelty(batches)):
        repeats = duplicate_shares(batch)
        rows.append({"step": batch.step, **composition(batch), "duplicate_accepted": repeats["accepted"],
                     "duplicate_incorrect": repeats["incorrect"], "novel_share": new["novel_share"],
                     "novel_answers": new["novel_answers"], "reward_mean": float(batch.rewards.mean()),
                     "tokens": batch.tokens})
    return rows


def sharpening(flow: Sequence[dict], window: int = 10) -> dict[str, float]:
    """What a run's reward gain is made of, from :func:`run_composition` rows (chapter 4).

    Compares the first step with the mean of the last ``window`` steps:
    ``reward_gain`` and ``repeat_gain`` (gain in the share of rollouts that
    repeat a right answer), with ``accepted_late`` (distinct right answers,
    late). Novelty is compared between steps 2 to ``window + 1`` and the last
    ``window`` steps (``novel_early``, ``novel_late``); step 1 is skipped, as
    with nothing before it all of it counts as novel. ``dip_reward`` and
    ``dip_step`` give the lowest batch reward and its step, ``novel_peak``
    and ``novel_peak_step`` the highest novel share from step 2 on.
    """
    first, late = flow[0], flow[-window:]

    def mean(rows: Sequence[dict], key: str) -> float:
        return float(np.mean([r[key] for r in rows]))

    dip = min(flow, key=lambda r: r["reward_mean"])
    peak = max(flow[1:], key=lambda r: r["novel_share"])
    return {"reward_gain": mean(late, "reward_mean") - first["reward_mean"],
            "repeat_gain": mean(late, "duplicate_accepted") - first["duplicate_accepted"],
            "accepted_late": mean(late, "accepted"), "novel_early": mean(flow[1: window + 1], "novel_share"),
            "novel_late": mean(late, "novel_share"), "dip_reward": dip["reward_mean"], "dip_step": dip["step"],
            "novel_peak": peak["novel_share"], "novel_peak_step": peak["step"]}


def own_format_accuracy(policy: Policy, tasks: Sequence[Task], n: int = 32, temperature: float = 1.0,
                        seed: int = 0, greedy: bool = False) -> np.ndarray:
    """Per task, the share of ``n`` samples that finish the pretraining line ``a+b=`` with the right sum.

    Pretraining showed the sums as bare lines (``3+4=7``, with random spaces),
    so this asks what the policy knows in the format it learnt them in, apart
    from the chat format that SFT taught. A sample is right when the text up to
    its first line end, spaces removed, is the answer (``a+b+c=`` lines expect
    the partial sums ``s1,s2``); a sample with no line end within the budget is
    wrong. Chapter 4 compares it with held-out accuracy in the chat format
    before and after RL.
    """
    targets = [",".join(map(str, t.steps)) for t in tasks]
    lines = ["\n" + "+".join(map(str, t.operands)) + "=" for t in tasks]
    n = 1 if greedy else n
    rollouts = sample(policy, lines, n=n, temperature=temperature, budget=max(map(len, targets)) + 2,
                      generator=torch.Generator().manual_seed(seed), greedy=greedy)
    right = [text.split("\n")[0].replace(" ", "") == target and "\n" in text
             for text, target in zip(rollouts.completions(), (t for t in targets for _ in range(n)))]
    return np.array(right, dtype=float).reshape(len(tasks), n).mean(axis=1)


def temperature_audit(policy: Policy, prompts: list[str], temperatures: Sequence[float], n: int = 16,
                      rounds: int = 2, budget: int = 4, seed: int = 0, verifier=None) -> list[dict]:
    """The exploration audit of fresh samples at several temperatures (``fig-exploration-coverage``).

    At each temperature the policy answers every prompt ``n`` times in each of
    ``rounds`` rounds, as if it took ``rounds`` training steps without
    changing. Returns one dict per temperature: the category shares and
    the split duplicate shares (``duplicate_accepted``...) as means over
    rounds, ``novel_share`` of the last round (answers not seen for that
    prompt in earlier rounds), ``tokens_per_rollout``, ``distinct_per_prompt``
    (distinct completions per prompt over all rounds) and
    ``distinct_right_per_prompt`` (distinct accepted ones).
    """
    verifier = verifier or rw.get_verifier("exact")
    rows = []
    for temperature in temperatures:
        gen = torch.Generator().manual_seed(seed)
        batches = [from_rollouts(sample(policy, prompts, n=n, temperature=temperature, budget=budget, generator=gen),
                                 verifier) for _ in range(rounds)]
        shares = {c: float(np.mean([composition(b)[c] for b in batches])) for c in CATEGORIES}
        shares.update({f"duplicate_{s}": float(np.mean([duplicate_shares(b)[s] for b in batches])) for s in READABLE})
        pairs = {(p, c, s) for b in batches for p, c, s in zip(b.prompts, b.completions, b.statuses)}
        rows.append({"temperature": float(temperature), **shares, "novel_share": novelty(batches)[-1]["novel_share"],
                     "tokens_per_rollout": float(np.mean([b.tokens / len(b) for b in batches])),
                     "distinct_per_prompt": len(pairs) / len(prompts),
                     "distinct_right_per_prompt": sum(s == "accepted" for _, _, s in pairs) / len(prompts)})
    return rows


def mixed_group_rate(n: int, c: int, k: int) -> float:
    """Probability that a group of ``k`` of the ``n`` samples (``c`` right) mixes right and wrong answers.

    Drawing k without replacement, all wrong has probability C(n-c,k)/C(n,k)
    and all right C(c,k)/C(n,k); only a mixed group gives group-centred
    advantages that are not all zero (chapter 3's zero-variance groups), so
    this is the chance that a prompt teaches anything at group size k.
    """
    if not 1 <= k <= n or not 0 <= c <= n:
        raise ValueError(f"need 1 <= k <= n and 0 <= c <= n, got n={n}, c={c}, k={k}")
    total = math.comb(n, k)
    return 1.0 - (math.comb(n - c, k) + math.comb(c, k)) / total


def sparse_reward_audit(policy: Policy, tasks: list[Task], temperatures: Sequence[float], n: int = 64,
                        ks: Sequence[int] = (1, 2, 4, 8, 16, 32, 64), budget: int = 4, seed: int = 0) -> list[dict]:
    """pass@k, never-right prompts, mixed-group rates and token cost at each temperature (chapter 4).

    For each temperature: ``pass_at_k`` (mean unbiased pass@k over tasks for
    each k in ``ks``, exact verifier), ``never_right`` (tasks with no
    accepted sample among ``n``), ``mixed`` (mean :func:`mixed_group_rate` for
    each k), ``tokens_per_sample`` and the per-task ``correct`` counts.
    """
    rows = []
    for temperature in temperatures:
        result = evaluate(policy, tasks, n=n, temperature=temperature, budget=budget, seed=seed)
        correct = [sum(s == "accepted" for s in row) for row in result.statuses]
        rows.append({"temperature": float(temperature), "ks": list(ks), "pass_at_k": pass_at_k_curve(n, result.correct_counts(), ks),
                     "never_right": [t for t, c in zip(tasks, correct) if c == 0],
                     "mixed": np.array([np.mean([mixed_group_rate(n, c, k) for c in correct]) for k in ks]),
                     "tokens_per_sample": float(np.mean([len(c) for row in result.completions for c in row])),
                     "correct": correct})
    return rows


@dataclass(frozen=True)
class HackReport:
    """Training reward against independent outcome checks, checkpoint by checkpoint (chapter 4).

    Aligned lists per checkpoint: ``train_reward`` (training prompts, the
    run's own verifier), ``train_exact`` (the same training samples under
    the exact verifier) and ``heldout`` (held-out prompts, exact verifier).
    ``flagged_step`` is the first checkpoint at which the training reward had
    risen by at least ``rise`` over step 0 while held-out accuracy had not
    risen at all, or None. :attr:`diagnosis` says what the flag means.
    """

    steps: list[int]
    train_reward: list[float]
    train_exact: list[float]
    heldout: list[float]
    rise: float
    flagged_step: int | None

    @property
    def reward_gain(self) -> float:
        """Training reward at the last checkpoint minus at the first."""
        return self.train_reward[-1] - self.train_reward[0]

    @property
    def heldout_gain(self) -> float:
        """Held-out exact accuracy at the last checkpoint minus at the first."""
        return self.heldout[-1] - self.heldout[0]

    @property
    def verifier_gap(self) -> float:
        """At the last checkpoint: training reward the exact verifier does not pay on the same samples."""
        return self.train_reward[-1] - self.train_exact[-1]

    @property
    def diagnosis(self) -> str:
        """``"no divergence"``; ``"exploited verifier"`` when the flag comes with a verifier gap above
        ``rise`` (the reward pays for what the exact verifier rejects); otherwise ``"gain did not
        transfer"`` (the training prompts improved under both verifiers, the held-out ones did not)."""
        if self.flagged_step is None:
            return "no divergence"
        return "exploited verifier" if self.verifier_gap > self.rise else "gain did not transfer"


def hack_report(evals: Sequence[dict], rise: float = 0.1) -> HackReport:
    """The reward-hack detector: did training reward rise while held-out exact accuracy did not?

    ``evals`` are a run's checkpoint evaluations (``run.evals``). The
    independent check is the held-out expected reward under the exact
    verifier, on prompts the run never trained on; re-scoring the training
    samples with the exact verifier (``train_exact_reward``) then tells an
    exploited verifier from a gain that did not transfer.
    """
    steps = [e["step"] for e in evals]
    reward = [float(e["train_reward"]) for e in evals]
    train_exact = [float(e.get("train_exact_reward", e["train_reward"])) for e in evals]
    heldout = [float(e["heldout_expected_reward"]) for e in evals]
    flagged = next((s for s, r, h in zip(steps, reward, heldout) if r - reward[0] >= rise and h <= heldout[0]), None)
    return HackReport(steps, reward, train_exact, heldout, rise, flagged)


def first_hacked_seed(stored_by_seed: dict[int, Sequence[dict]], share: float = 0.5) -> int | None:
    """The first seed (in the dict's order) whose stored steps show a takeover (:func:`takeover_step`), or None."""
    return next((seed for seed, steps in stored_by_seed.items() if takeover_step(steps, share) is not None), None)


def clearest_hacked_seed(stored_by_seed: dict[int, Sequence[dict]], evals_by_seed: dict[int, Sequence[dict]],
                         share: float = 0.5) -> int | None:
    """The seed chapters 4 and 5 show the reward hack on: of the seeds whose stored steps show a takeover
    (:func:`takeover_step`), the one whose held-out accuracy ended lowest; ties go to the earlier seed in the
    dict's order. None when the loophole took over on no seed.

    The first hacked seed is not always a clear case: on some numerical draws the loophole takes over on a
    seed whose held-out accuracy then ends well above zero, while it collapses on another.
    """
    hacked = [seed for seed, steps in stored_by_seed.items() if takeover_step(steps, share) is not None]
    if not hacked:
        return None
    return min(hacked, key=lambda seed: hack_report(evals_by_seed[seed]).heldout[-1])


def loophole_rows(batch: AuditBatch, exact=None) -> np.ndarray:
    """Boolean per rollout: paid by the batch's own verifier, but not accepted by the exact one."""
    exact_batch = batch.rescored(exact or rw.get_verifier("exact"))
    return (batch.rewards > 0) & np.array([s != "accepted" for s in exact_batch.statuses])


def loophole_rate(policy: Policy, prompts: list[str], verifier, n: int = 64, temperature: float = 1.0,
                  budget: int = 4, seed: int = 0) -> float:
    """Share of fresh samples of ``policy`` that ``verifier`` pays but the exact verifier rejects.

    Chapter 4 measures it on the base policy: a policy can only learn an
    exploit that it already samples now and then.
    """
    gen = torch.Generator().manual_seed(seed)
    batch = from_rollouts(sample(policy, prompts, n=n, temperature=temperature, budget=budget, generator=gen), verifier)
    return float(loophole_rows(batch).mean())


def loophole_share(stored_steps: Iterable[dict]) -> list[float]:
    """Per stored step: share of rollouts the run's verifier paid that the exact verifier rejects."""
    return [float(loophole_rows(from_stored(s)).mean()) for s in stored_steps]


def takeover_step(stored_steps: Iterable[dict], share: float = 0.5) -> int | None:
    """First step at which more than ``share`` of the rollouts are paid only through the loophole."""
    steps = list(stored_steps)
    return next((s["step"] for s, x in zip(steps, loophole_share(steps)) if x > share), None)


def dip_before_takeover(stored_steps: Iterable[dict], share: float = 0.5) -> dict | None:
    """The poorest batch before the loophole took over, and the first batch (chapter 4); None without a takeover.

    Keys: ``step``, ``reward`` (the batch's mean reward under the run's
    verifier), ``share`` (paid only through the loophole) and ``right`` (paid
    for answers the exact verifier accepts too, :func:`reward_split`) of that
    batch, and ``first_step``, ``first_reward``, ``first_right`` of the first
    batch. Far fewer right answers than in the first batch while the
    loophole still pays for a minority says the policy first lost its sums
    and took to the loophole only afterwards.
    """
    steps = list(stored_steps)
    takeover = takeover_step(steps, share)
    if takeover is None:
        return None
    before = [s for s in steps if s["step"] < takeover] or steps[:1]
    rewards = [float(s["rewards"].mean()) for s in before]
    low = int(np.argmin(rewards))
    return {"step": before[low]["step"], "reward": rewards[low], "share": loophole_share([before[low]])[0],
            "right": reward_split(before[low])[0], "first_step": before[0]["step"], "first_reward": rewards[0],
            "first_right": reward_split(before[0])[0]}


def exploiting_completions(stored: dict, verifier, limit: int = 5) -> list[dict]:
    """The completions of one stored step that were paid but fail the exact verifier, most frequent first.

    ``verifier`` is the one the run trained against. Each dict:
    ``completion``, ``count``, the exact verifier's ``status`` and ``reason``,
    and ``paid_reason``, why ``verifier`` paid it (for the first prompt it was
    seen with).
    """
    batch = from_stored(stored)
    hits = loophole_rows(batch)
    counts = Counter(c for c, h in zip(batch.completions, hits) if h)
    exact = rw.get_verifier("exact")
    rows = []
    for text, count in counts.most_common(limit):
        prompt = next(p for p, c, h in zip(batch.prompts, batch.completions, hits) if h and c == text)
        own = verifier(prompt, text)
        judged = exact(prompt, text)
        rows.append({"completion": text, "count": count, "status": judged.status, "reason": judged.reason,
                     "paid_reason": own.reason})
    return rows


def reward_split(stored: dict) -> tuple[float, float]:
    """Split one step's mean training reward into the part the exact verifier agrees with and the loophole.

    Returns ``(task_part, loophole_part)``, both means over the step's
    rollouts: the first counts rewards of completions the exact verifier also
    accepts, the second rewards it rejects. They sum to the step's reward
    (chapter 4, exercise 12).
    """
    batch = from_stored(stored)
    loophole = loophole_rows(batch)
    return float((batch.rewards * ~loophole).mean()), float((batch.rewards * loophole).mean())


def selection_counts(stored_steps: Iterable[dict]) -> dict[str, int]:
    """What a selection rule kept and what it hid, summed over a run's stored steps.

    ``generated`` rollouts, ``kept`` (those the update used), and for the
    dropped ones a count per verifier status (``dropped_incorrect``...). With
    no selection rule, ``kept == generated`` (chapter 4's "keep accepted").
    """
    counts = Counter({"generated": 0, "kept": 0})
    for stored in stored_steps:
        used = stored["used"].tolist()
        counts["generated"] += len(used)
        counts["kept"] += sum(used)
        for status, u in zip(stored["statuses"].tolist(), used):
            if not u:
                counts[f"dropped_{rw.STATUSES[status]}"] += 1
    return dict(counts)


def incidents(log: dict) -> list[dict]:
    """The run's interventions, one flat dict each, joined with the stored rollouts they affected.

    Each dict: ``step``, ``kind``, ``reason``, ``metric``, ``value``,
    ``threshold``, ``affected_rollouts``, ``rollouts`` (the step's batch
    size), the share of that batch with each status, and ``aborted_update``
    (the reason recorded in ``log["aborted_updates"]`` for that step, or
    None).
    """
    stored = {r["step"]: r for r in log["rollouts"]}
    aborted = {a["step"]: a["reason"] for a in log["aborted_updates"]}
    rows = []
    for item in log["interventions"]:
        batch = stored[item["step"]]["statuses"].tolist()
        shares = {f"{s}_share": batch.count(i) / len(batch) for i, s in enumerate(rw.STATUSES)}
        rows.append({"step": item["step"], "kind": item["kind"], "reason": item["reason"],
                     "metric": item["trigger"]["metric"], "value": item["trigger"]["value"],
                     "threshold": item["trigger"]["threshold"], "affected_rollouts": item["affected_rollouts"],
                     "rollouts": len(batch), **shares, "aborted_update": aborted.get(item["step"])})
    return rows


def first_alarm(rule: Callable[[list[dict]], bool], metrics: Sequence[dict]) -> int | None:
    """The first step at which ``rule(history)`` is true, where history is the metrics up to that step.

    Chapter 4's abort criteria (exercise 13) are rules of this form: they see
    only what the run has logged so far, never the future.
    """
    for i, row in enumerate(metrics):
        if rule(list(metrics[: i + 1])):
            return row["step"]
    return None


def markdown_table(header: Sequence[str], rows: Iterable[Sequence], code: Sequence[int] = ()) -> str:
    """A pipe table in Markdown (chapter 4's tables; display it with ``IPython.display.Markdown``).

    Cells in the columns listed in ``code`` are shown as inline code, except
    those holding a pipe or a backtick, which pipe tables cannot carry inside
    code; those, like every other cell, are plain text with the pipe escaped.
    """
    def cell(value, column: int) -> str:
        text = str(value).replace("\n", " ")
        if column in code and "|" not in text and "`" not in text:
            return f"`{text}`"
        return text.replace("|", "\\|")

    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(cell(v, j) for j, v in enumerate(row)) + " |" for row in rows]
    return "\n".join(lines)
