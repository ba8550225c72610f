"""What a batch of rollouts is made of: chapter 6's exploration audit.

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

from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np

from .batch import AuditBatch, from_stored

CATEGORIES = ("accepted", "incorrect", "duplicate", "malformed", "budget-stopped", "unverifiable")
"""The exploration audit's categories, in the order they are stacked in a figure."""

READABLE = ("accepted", "incorrect")
"""Statuses of answers the verifier could read, the only ones that can be duplicates."""


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
    """Composition, novelty and generated tokens of every stored step of a run (chapter 6's audit over ``main``).

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
        rows.append(
            {
                "step": batch.step,
                **composition(batch),
                "duplicate_accepted": repeats["accepted"],
                "duplicate_incorrect": repeats["incorrect"],
                "novel_share": new["novel_share"],
                "novel_answers": new["novel_answers"],
                "reward_mean": float(batch.rewards.mean()),
                "tokens": batch.tokens,
            }
        )
    return rows


def sharpening(flow: Sequence[dict], window: int = 10) -> dict[str, float]:
    """What a run's reward gain is made of, from :func:`run_composition` rows (chapter 6).

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
    return {
        "reward_gain": mean(late, "reward_mean") - first["reward_mean"],
        "repeat_gain": mean(late, "duplicate_accepted") - first["duplicate_accepted"],
        "accepted_late": mean(late, "accepted"),
        "novel_early": mean(flow[1 : window + 1], "novel_share"),
        "novel_late": mean(late, "novel_share"),
        "dip_reward": dip["reward_mean"],
        "dip_step": dip["step"],
        "novel_peak": peak["novel_share"],
        "novel_peak_step": peak["step"],
    }
