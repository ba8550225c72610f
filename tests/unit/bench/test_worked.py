"""What the worked world costs (rlbook.bench.worked): its runs, the book without them, and the report's rows."""

from __future__ import annotations

from rlbook.bench import book, worked
from rlbook.book.prefetch import book_runs
from rlbook.runs import prefetch


def test_the_chapter_runs_are_the_ones_chapter_7_reads_in_catalogue_order():
    assert worked.chapter_runs() == (
        "worked-base",
        "worked-direct-base",
        "worked",
        "worked-direct",
        "worked-rediscover",
    )
    assert worked.chapter_runs(rl=False) == ("worked-base", "worked-direct-base")
    assert worked.chapter_runs(rl=True) == ("worked", "worked-direct", "worked-rediscover")


def test_the_book_without_the_chapter_keeps_every_other_run():
    pairs = book_runs()
    before = worked.without_chapter(pairs)
    assert len(pairs) - len(before) == 5 * 3  # five runs, seeds 0 to 2
    assert ("main", 2) in before and not any(name in worked.chapter_runs() for name, _ in before)
    assert ("worked-tight", 0) in before  # chapter 9's runs in the same world are not chapter 7's cost


def test_the_added_seconds_are_the_difference_of_medians_with_the_widest_range():
    with_chapter = {"median": 150.0, "min": 140.0, "max": 160.0, "n": 3}
    before = {"median": 80.0, "min": 78.0, "max": 84.0, "n": 3}
    assert worked.added_seconds(with_chapter, before) == {"median": 70.0, "min": 56.0, "max": 82.0, "n": 3}


def test_base_s_pretraining_stays_the_head_that_the_book_waits_for():
    assert book.head_run() == "base" and prefetch.root("worked-rediscover") == "worked-base"
    logs = [
        ("base", {"timing": {"pretrain_seconds": 9.0, "pretrained_now": True, "sft_seconds": 1.0}}),
        ("worked-base", {"timing": {"pretrain_seconds": 20.0, "pretrained_now": True, "sft_seconds": 2.0}}),
    ]
    assert book.training_work(logs) == {"work_seconds": 32.0, "head_seconds": 9.0}


def test_the_report_lists_each_stage_and_what_the_chapter_adds():
    spread = {"median": 0.5, "min": 0.4, "max": 0.6, "n": 3}
    stages = {"pretrain_seconds": spread, "worked-base_sft_seconds": spread, "worked-direct-base_sft_seconds": spread}
    for name in worked.chapter_runs(rl=True):
        stages.update({f"{name}_seconds": spread, f"{name}_step_seconds": spread})
    report = {
        "worked": stages,
        "machine": {"runs_before_chapter": 62},
        "all_runs": {"seconds": {"median": 150.0, "min": 140.0, "max": 160.0, "n": 3}},
        "runs_before_chapter": {"jobs": 2, "seconds": {"median": 80.0, "min": 78.0, "max": 84.0, "n": 3}},
    }
    text = "\n".join(worked.rows(report))
    assert "| chapter 7: SFT (`worked-direct-base`) | 0.5 s (range 0.4-0.6, n=3) |" in text
    assert "| chapter 7: RL step (`worked-rediscover`) | 500 ms (range 400-600, n=3) |" in text
    assert "| every run the book needs but chapter 7's (62 runs), empty cache, 2 at a time | 80 s" in text
    assert "empty cache (difference of medians; range of the differences) | 70 s (range 56-82, n=3) |" in text
