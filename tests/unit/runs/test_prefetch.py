"""Training the book's runs ahead of its pages, several at a time (rlbook.runs.prefetch)."""

from __future__ import annotations

import os

import pytest

from rlbook import prefetch, runs


def test_depth_counts_the_runs_a_run_descends_from():
    assert prefetch.depth("base") == 0
    assert prefetch.depth("main") == prefetch.depth("process-base") == 1
    assert prefetch.depth("process-shaped") == 2


def test_relative_cost_grows_with_updates_and_steps():
    assert prefetch.relative_cost("ppo") > prefetch.relative_cost("pg")  # 4 updates a batch against 1
    assert prefetch.relative_cost("main") > prefetch.relative_cost("pg")  # 100 steps against 60
    with pytest.raises(ValueError, match="not an RL run"):
        prefetch.relative_cost("base")


def test_training_order_puts_parents_first_and_costly_runs_early():
    pairs = [(name, seed) for name in runs.RUNS for seed in (0, 1, 2)]
    order = prefetch.training_order(pairs)
    assert sorted(order) == sorted(pairs)
    for name, seed in order:
        parent = runs.spec(name).parent
        assert parent is None or order.index((parent, seed)) < order.index((name, seed))
    # Each line's shared pretraining starts at once, the largest line's first; then that line's runs.
    assert order[:4] == [("base", 0), ("worked-base", 0), ("base", 1), ("base", 2)]
    # Chapter 7's line trains its long pretraining while the workers train base's line, and comes after it.
    line = [pair for pair in order if prefetch.root(pair[0]) == "worked-base"]
    assert order[-len(line) + 1 :] == line[1:] and order.index(("worked-base", 1)) > order.index(("main", 2))
    assert order.index(("process-base", 0)) < order.index(("main", 0))  # a parent of other runs goes first
    # The other seeds of process-base only fine-tune after seed 0's pretraining: they wait behind the RL runs.
    assert order.index(("ppo", 0)) < order.index(("process-base", 1)) < order.index(("process-shaped", 1))
    assert order.index(("ppo", 2)) < order.index(("pg", 0))  # the costly runs of a generation start first


def test_usable_cores_is_the_affinity_set_or_the_cpu_count(monkeypatch):
    assert 1 <= prefetch.usable_cores() <= (os.cpu_count() or 1)
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: None)
    assert prefetch.usable_cores() == 1
