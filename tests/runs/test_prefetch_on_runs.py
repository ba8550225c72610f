"""Training the book's runs ahead of its pages, several at a time (rlbook.runs.prefetch)."""

from __future__ import annotations

import pytest

from rlbook import prefetch, runs
from rlbook.core.train import PretrainConfig, SFTConfig


def test_train_all_one_at_a_time_trains_in_this_process(tmp_path, monkeypatch):
    monkeypatch.setenv("RLBOOK_CACHE", str(tmp_path))
    monkeypatch.setenv("RLBOOK_PROGRESS", "0")
    tiny = runs.RunSpec(
        "tiny",
        "a tiny base run",
        pretrain=PretrainConfig(steps=2, batch=2, warmup=1),
        sft=SFTConfig(steps=1, replay_batch=2),
    )
    monkeypatch.setitem(runs.RUNS, "tiny", tiny)
    lines = []
    trained = prefetch.train_all([("tiny", 0)], threads=1, jobs=1, out=lines.append)
    assert trained.seconds > 0 and 0 < trained.peak_memory_mb <= prefetch.peak_memory_mb()
    assert len(lines) == 1 and lines[0].startswith("[1/1] tiny seed 0")
    assert prefetch.is_cached("tiny", 0, 1) and not prefetch.is_cached("tiny", 1, 1)
    with pytest.raises(ValueError, match="at least 1"):
        prefetch.train_all([("tiny", 0)], jobs=0)


def test_train_all_with_workers_finds_a_cached_run():
    runs.load("base", 0)  # cached by the other tests; the worker process loads it from the same cache
    lines = []
    trained = prefetch.train_all([("base", 0)], jobs=2, out=lines.append)
    assert 0 < trained.peak_memory_mb < 1024  # the worker's own peak, under the book's 1 GB a run
    assert len(lines) == 1 and lines[0].startswith("[1/1] base seed 0")
    assert prefetch.is_cached("base", 0, runs.DEFAULT_THREADS)
