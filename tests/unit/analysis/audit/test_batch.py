"""An audit batch from stored steps and rescored (rlbook.analysis.audit.batch)."""

from __future__ import annotations

from audit_batches import EIGHT, P1, P2, batch, stored

from rlbook.analysis import audit
from rlbook.core import rewards as rw


def test_from_stored_round_trips_the_rollouts():
    s = stored(3, [P1, P2], EIGHT)
    b = audit.from_stored(s)
    assert b.completions == EIGHT and b.group_size == 4 and b.step == 3
    assert b.prompts[:5] == [P1] * 4 + [P2]
    assert b.tokens == sum(len(c) for c in EIGHT)
    assert audit.composition(b) == audit.composition(batch([P1, P2], EIGHT))


def test_rescoring_a_fail_open_batch_with_the_exact_verifier():
    s = stored(1, [P1], ["#", "#", "7#", "8#"], verifier="fail-open")
    b = audit.from_stored(s)
    assert b.statuses == ["accepted", "accepted", "accepted", "incorrect"]
    assert audit.from_stored(s, rw.get_verifier("exact")).statuses == [
        "malformed",
        "malformed",
        "accepted",
        "incorrect",
    ]
    assert audit.loophole_rows(b).tolist() == [True, True, False, False]
