"""The entries of a run's events, written by one builder each: the RL loop's log and the run record both use them.

An intervention (pausing updates, excluding a batch...) and an update that
was not applied are logged by the RL loop (:mod:`rlbook.core.guard`,
:mod:`rlbook.core.rl`) and copied into the run record, whose builders
(:func:`rlbook.record.add_intervention`, :func:`rlbook.record.add_aborted_update`)
check the same entries against the record's schema (chapters 4 and 5).
"""

from __future__ import annotations


def intervention(
    step: int, kind: str, reason: str, metric: str, value: float, threshold: float, affected: int | list | tuple
) -> dict:
    """The entry of one intervention at ``step``: what was done (``kind``), why, and what it touched.

    It names its triggering measurement (``metric`` with its ``value`` and
    the ``threshold`` it crossed) and the rollouts it affected, as a count or
    a list of ids, so that later behaviour can be traced to the policy update
    or to the change in the training signal.
    """
    return {
        "step": step,
        "kind": kind,
        "reason": reason,
        "trigger": {"metric": metric, "value": float(value), "threshold": float(threshold)},
        "affected_rollouts": list(affected) if isinstance(affected, (list, tuple)) else affected,
    }


def aborted_update(step: int, reason: str, measurement: float | str | dict) -> dict:
    """The entry of an update that was not applied: its step, why, and the measurement that said so."""
    return {"step": step, "reason": reason, "measurement": measurement}
