"""Selection counts, interventions and abort rules (rlbook.analysis.audit.incidents)."""

from __future__ import annotations

from audit_batches import P1, stored

from rlbook.analysis import audit
from rlbook.core import rewards as rw


def test_selection_counts_report_what_was_dropped():
    s = stored(1, [P1], ["7#", "8#", "#", "7"], used=[True, False, False, False])
    assert audit.selection_counts([s, s]) == {
        "generated": 8,
        "kept": 2,
        "dropped_incorrect": 2,
        "dropped_malformed": 2,
        "dropped_incomplete": 2,
    }


def test_incidents_join_interventions_with_their_rollouts():
    s = stored(8, [P1], ["7#", "8#", "7#", "7#"])
    s["statuses"][:] = rw.STATUSES.index("unverifiable")
    log = {
        "rollouts": [s],
        "aborted_updates": [],
        "interventions": [
            {
                "step": 8,
                "kind": "updates paused",
                "reason": "verifier raised",
                "trigger": {"metric": "verifier_error_rate", "value": 1.0, "threshold": 0.1},
                "affected_rollouts": 4,
            }
        ],
    }
    (row,) = audit.incidents(log)
    assert row["metric"] == "verifier_error_rate" and row["unverifiable_share"] == 1.0
    assert row["rollouts"] == 4 and row["aborted_update"] is None


def test_first_alarm_sees_only_the_past():
    metrics = [{"step": s, "x": x} for s, x in [(1, 0), (2, 5), (3, 0)]]
    seen = []

    def rule(history):
        seen.append(len(history))
        return history[-1]["x"] > 1

    assert audit.first_alarm(rule, metrics) == 2 and seen == [1, 2]
    assert audit.first_alarm(lambda h: False, metrics) is None
