"""rlbook.book.prefetch: runs first, each chapter's facts as soon as the runs it reads are trained."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from rlbook import runs
from rlbook.book import prefetch


def test_facts_wait_for_their_runs_and_only_for_them(monkeypatch):
    events: list[str] = []
    monkeypatch.setattr(
        prefetch,
        "needed_runs",
        lambda topics, seeds=(0, 1, 2): {
            "one": {("base", 0)},
            "two": {("base", 0), ("main", 0)},
            "cached": {("base", 0)},
        },
    )
    monkeypatch.setattr(prefetch.run_prefetch, "is_cached", lambda name, seed, threads: False)
    monkeypatch.setattr(prefetch, "facts_cached", lambda topic, threads, seeds: topic == "cached")
    monkeypatch.setattr(prefetch, "seed_parts", lambda topic, seeds: [])
    monkeypatch.setattr(prefetch, "_train", lambda pair, threads: events.append(f"run {pair[0]}") or (pair[0], 0.0, 0))
    monkeypatch.setattr(
        prefetch, "_facts", lambda topic, threads, seeds: events.append(f"facts {topic}") or (topic, 0.0, 0)
    )
    lines: list[str] = []
    prefetch.prefetch_book(["one", "two", "cached"], jobs=1, out=lines.append, executor=ThreadPoolExecutor(1))
    assert events.index("facts one") > events.index("run base")
    assert events.index("facts two") > events.index("run main")
    assert "facts cached" not in events and len(lines) == 4 and lines[-1].startswith("[4/4]")


def test_a_chapter_kept_seed_by_seed_has_each_seed_s_part_computed_once_its_runs_are_there(monkeypatch):
    events: list[str] = []
    monkeypatch.setattr(
        prefetch, "needed_runs", lambda topics, seeds=(0, 1): {"split": {("base", 0), ("base", 1)}, "whole": set()}
    )
    monkeypatch.setattr(prefetch.run_prefetch, "is_cached", lambda name, seed, threads: False)
    monkeypatch.setattr(prefetch, "facts_cached", lambda topic, threads, seeds: False)
    monkeypatch.setattr(
        prefetch, "seed_parts", lambda topic, seeds: [("part", topic, s) for s in seeds] if topic == "split" else []
    )
    monkeypatch.setattr(prefetch, "_train", lambda pair, threads: events.append(f"run {pair[1]}") or ("", 0.0, 0))
    monkeypatch.setattr(prefetch, "_part", lambda topic, seed, threads: events.append(f"part {seed}") or ("", 0.0, 0))
    monkeypatch.setattr(
        prefetch, "_facts", lambda topic, threads, seeds: events.append(f"facts {topic}") or ("", 0.0, 0)
    )
    lines: list[str] = []
    prefetch.prefetch_book(["split", "whole"], jobs=1, out=lines.append, executor=ThreadPoolExecutor(1), seeds=(0, 1))
    assert sorted(events) == ["facts split", "facts whole", "part 0", "part 1", "run 0", "run 1"]
    assert events.index("part 0") > events.index("run 0") and events.index("part 1") > events.index("run 1")
    assert events.index("facts split") > max(events.index("part 0"), events.index("part 1"))
    assert len(lines) == 6 and lines[-1].startswith("[6/6]")


def test_nothing_to_do_is_quick(monkeypatch):
    monkeypatch.setattr(prefetch, "needed_runs", lambda topics, seeds=(0, 1, 2): {"one": {("base", 0)}})
    monkeypatch.setattr(prefetch.run_prefetch, "is_cached", lambda name, seed, threads: True)
    monkeypatch.setattr(prefetch, "facts_cached", lambda topic, threads, seeds: True)
    assert prefetch.prefetch_book(["one"], out=lambda line: None) == 0.0


def test_the_book_runs_are_the_runs_the_facts_read(monkeypatch):
    monkeypatch.setattr(
        prefetch,
        "needed_runs",
        lambda topics, seeds=(0, 1, 2): {"one": {("main", 1), ("base", 0)}, "two": {("base", 0), ("faults", 0)}},
    )
    assert prefetch.book_runs(["one", "two"]) == [("base", 0), ("faults", 0), ("main", 1)]


def test_every_catalogue_run_is_read_by_some_chapter():
    # A run in the catalogue that no chapter's facts read would never be trained or shown: it is dead weight.
    assert {name for name, _ in prefetch.book_runs()} == set(runs.RUNS)
    assert {seed for _, seed in prefetch.book_runs()} == {0, 1, 2}


def test_the_command_prints_nothing_and_returns_0_when_every_run_and_fact_is_there(monkeypatch, capsys):
    monkeypatch.setattr(prefetch, "needed_runs", lambda topics, seeds=(0, 1, 2): {"one": {("base", 0)}})
    monkeypatch.setattr(prefetch.run_prefetch, "is_cached", lambda name, seed, threads: True)
    monkeypatch.setattr(prefetch, "facts_cached", lambda topic, threads, seeds: True)
    assert prefetch.main([]) == 0
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize(
    "jobs, message",
    [
        ("0", "must be positive, got 0"),
        ("65", "must be at most 64, got 65"),
        ("1000000", "must be at most 64"),
        ("\uff12", "expected a whole number"),
    ],
)
def test_the_command_refuses_a_number_of_jobs_out_of_bounds(jobs, message, capsys):
    with pytest.raises(SystemExit) as err:
        prefetch.main(["--jobs", jobs])
    assert err.value.code == 2 and f"argument --jobs: {message}" in capsys.readouterr().err
