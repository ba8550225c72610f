"""Training the book's runs ahead of its pages, several at a time (rlbook.runs.prefetch)."""
from __future__ import annotations

import os

import pytest

from rlbook import prefetch, runs


def test_book_runs_are_named_runs_for_the_book_seeds():
    pairs = prefetch.book_runs()
    assert len(pairs) == len(set(pairs))
    assert {name for name, _ in pairs} == set(runs.RUNS)
    assert {seed for _, seed in pairs} == set(prefetch.BOOK_SEEDS)
    assert ("main", 2) in pairs and ("faults", 0) in pairs and ("faults", 1) not in pairs
    assert prefetch.SEED_ZERO_ONLY <= set(runs.RUNS)


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
    order = prefetch.training_order(prefetch.book_runs())
    assert sorted(order) == sorted(prefetch.book_runs())
    for name, seed in order:
        parent = runs.spec(name).parent
        assert parent is None or order.index((parent, seed)) < order.index((name, seed))
    # Each line's shared pretraining starts at once, the largest line's first; then that line's runs.
    assert order[:4] == [("base", 0), ("worked-base", 0), ("base", 1), ("base", 2)]
    # Chapter 7's line trains its long pretraining while the workers train base's line, and comes after it.
    line = [pair for pair in order if prefetch.root(pair[0]) == "worked-base"]
    assert order[-len(line) + 1:] == line[1:] and order.index(("worked-base", 1)) > order.index(("main", 2))
    assert order.index(("process-base", 0)) < order.index(("main", 0))  # a parent of other runs goes first
    # The other seeds of process-base only fine-tune after seed 0's pretraining: they wait behind the RL runs.
    assert order.index(("ppo", 0)) < order.index(("process-base", 1)) < order.index(("process-shaped", 1))
    assert order.index(("ppo", 2)) < order.index(("pg", 0))  # the costly runs of a generation start first


def test_the_command_returns_0_when_every_book_run_is_cached(monkeypatch, capsys):
    monkeypatch.setattr(prefetch, "is_cached", lambda name, seed, threads: True)
    assert prefetch.main([]) == 0
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("jobs, message", [("0", "must be positive, got 0"), ("65", "must be at most 64, got 65"),
                                           ("1000000", "must be at most 64"), ("２", "expected a whole number")])
def test_the_command_refuses_a_number_of_jobs_out_of_bounds(jobs, message, capsys):
    with pytest.raises(SystemExit) as err:
        prefetch.main(["--jobs", jobs])
    assert err.value.code == 2 and f"argument --jobs: {message}" in capsys.readouterr().err


def test_usable_cores_is_the_affinity_set_or_the_cpu_count(monkeypatch):
    assert 1 <= prefetch.usable_cores() <= (os.cpu_count() or 1)
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: None)
    assert prefetch.usable_cores() == 1
