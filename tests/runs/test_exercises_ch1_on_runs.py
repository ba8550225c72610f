"""Chapter 1's Exercise 1.1 on the record the page prints: its first two actions differ, and counting them from 1
is named as the mistake it is."""

from __future__ import annotations

from rlbook.book import SEEDS
from rlbook.exercises import ch1


def test_the_shown_record_has_two_different_first_actions():
    record = ch1.shown_record(SEEDS)
    assert record["completion"][0] != record["completion"][1]
    assert ch1.check_rollout_labels(ch1.rollout_labels(record), record).passed


def test_counting_from_1_on_the_shown_record_is_named():
    record = ch1.shown_record(SEEDS)
    counted_from_1 = ch1.rollout_labels(record, step=0)
    labels = dict(ch1.rollout_labels(record), state=counted_from_1["state"], action=counted_from_1["action"])
    result = ch1.check_rollout_labels(labels, record)
    assert not result.passed
    assert "state: that is the state before action 0: you counted from 1" in result.message
    assert "action: that is action 0: you counted from 1" in result.message
