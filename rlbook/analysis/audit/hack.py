"""The reward hack of chapter 5: the detector, the loophole it finds and the seed the chapters show it on."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from rlbook.core import rewards as rw
from rlbook.core.policy import Policy
from rlbook.core.sampling import sample
from rlbook.core.world import BUDGET

from .batch import AuditBatch, from_rollouts, from_stored


@dataclass(frozen=True)
class HackReport:
    """Training reward against independent outcome checks, checkpoint by checkpoint (chapter 5).

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


def clearest_hacked_seed(
    stored_by_seed: dict[int, Sequence[dict]], evals_by_seed: dict[int, Sequence[dict]], share: float = 0.5
) -> int | None:
    """The seed chapter 5 shows the reward hack on: of the seeds whose stored steps show a takeover
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


def loophole_rate(
    policy: Policy,
    prompts: list[str],
    verifier,
    n: int = 64,
    temperature: float = 1.0,
    budget: int = BUDGET,
    seed: int = 0,
) -> float:
    """Share of fresh samples of ``policy`` that ``verifier`` pays but the exact verifier rejects.

    Chapter 5 measures it on the base policy: a policy can only learn an
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
    """The poorest batch before the loophole took over, and the first batch (chapter 5); None without a takeover.

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
    return {
        "step": before[low]["step"],
        "reward": rewards[low],
        "share": loophole_share([before[low]])[0],
        "right": reward_split(before[low])[0],
        "first_step": before[0]["step"],
        "first_reward": rewards[0],
        "first_right": reward_split(before[0])[0],
    }


def exploiting_completions(stored: dict, verifier, limit: int | None = 5) -> list[dict]:
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
        rows.append(
            {
                "completion": text,
                "count": count,
                "status": judged.status,
                "reason": judged.reason,
                "paid_reason": own.reason,
            }
        )
    return rows


def reward_split(stored: dict) -> tuple[float, float]:
    """Split one step's mean training reward into the part the exact verifier agrees with and the loophole.

    Returns ``(task_part, loophole_part)``, both means over the step's
    rollouts: the first counts rewards of completions the exact verifier also
    accepts, the second rewards it rejects. They sum to the step's reward
    (chapter 5, Exercise 5.2).
    """
    batch = from_stored(stored)
    loophole = loophole_rows(batch)
    return float((batch.rewards * ~loophole).mean()), float((batch.rewards * loophole).mean())
