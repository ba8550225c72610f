"""rlbook.book.prefetch: runs first, each chapter's facts as soon as the runs it reads are trained."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from rlbook.book import prefetch


def test_facts_wait_for_their_runs_and_only_for_them(monkeypatch):
    events: list[str] = []
    monkeypatch.setattr(prefetch, "needed_runs", lambda topics, seeds=(0, 1, 2): {
        "one": {("base", 0)}, "two": {("base", 0), ("main", 0)}, "cached": {("base", 0)}})
    monkeypatch.setattr(prefetch.run_prefetch, "book_runs", lambda: [("base", 0), ("main", 0)])
    monkeypatch.setattr(prefetch.run_prefetch, "is_cached", lambda name, seed, threads: False)
    monkeypatch.setattr(prefetch, "facts_cached", lambda topic, threads: topic == "cached")
    monkeypatch.setattr(prefetch, "_train", lambda pair, threads: events.append(f"run {pair[0]}") or (pair[0], 0.0, 0))
    monkeypatch.setattr(prefetch, "_facts", lambda topic, threads: events.append(f"facts {topic}") or (topic, 0.0, 0))
    lines: list[str] = []
    prefetch.prefetch_book(["one", "two", "cached"], jobs=1, out=lines.append, executor=ThreadPoolExecutor(1))
    assert events.index("facts one") > events.index("run base")
    assert events.index("facts two") > events.index("run main")
    assert "facts cached" not in events and len(lines) == 4 and lines[-1].startswith("[4/4]")


def test_nothing_to_do_is_quick(monkeypatch):
    monkeypatch.setattr(prefetch, "needed_runs", lambda topics, seeds=(0, 1, 2): {"one": {("base", 0)}})
    monkeypatch.setattr(prefetch.run_prefetch, "book_runs", list)
    monkeypatch.setattr(prefetch.run_prefetch, "is_cached", lambda name, seed, threads: True)
    monkeypatch.setattr(prefetch, "facts_cached", lambda topic, threads: True)
    assert prefetch.prefetch_book(["one"], out=lambda line: None) == 0.0
