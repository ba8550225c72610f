"""What a run hid and what it did about it: selection counts, logged interventions and abort rules (chapters 5 and 6)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence

from rlbook.core import rewards as rw


def selection_counts(stored_steps: Iterable[dict]) -> dict[str, int]:
    """What a selection rule kept and what it hid, summed over a run's stored steps.

    ``generated`` rollouts, ``kept`` (those the update used), and for the
    dropped ones a count per verifier status (``dropped_incorrect``...). With
    no selection rule, ``kept == generated`` (chapter 6's "keep accepted").
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
        rows.append(
            {
                "step": item["step"],
                "kind": item["kind"],
                "reason": item["reason"],
                "metric": item["trigger"]["metric"],
                "value": item["trigger"]["value"],
                "threshold": item["trigger"]["threshold"],
                "affected_rollouts": item["affected_rollouts"],
                "rollouts": len(batch),
                **shares,
                "aborted_update": aborted.get(item["step"]),
            }
        )
    return rows


def first_alarm(rule: Callable[[list[dict]], bool], metrics: Sequence[dict]) -> int | None:
    """The first step at which ``rule(history)`` is true, where history is the metrics up to that step.

    Chapter 5's abort criteria (Exercise 5.4) are rules of this form: they see
    only what the run has logged so far, never the future.
    """
    for i, row in enumerate(metrics):
        if rule(list(metrics[: i + 1])):
            return row["step"]
    return None
