"""What chapter 7's worked world costs (``rlbook bench``): its runs from an empty cache, and what they add to the book.

The issue that brought the world in allows it at most 90 s more of the
whole book from an empty cache on 2 cores; the report measures that as the
difference between training every run the book needs and every run but the
worked world's, both from an empty cache with the same worker pool.
"""

from __future__ import annotations

import statistics
import tempfile

from rlbook import runs

from .kernels import environment, fmt, spread


def chapter_runs(rl: bool | None = None) -> tuple[str, ...]:
    """Chapter 7's runs, the ones its facts read, in catalogue order: all of them, or only its RL runs (``rl``) or its
    base runs (not). Chapter 9's runs in the same world are not chapter 7's cost."""
    from rlbook.book import working

    return tuple(
        name for name, s in runs.RUNS.items() if name in working.RUNS and (rl is None or rl == (s.rl is not None))
    )


def without_chapter(pairs: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """The (run, seed) ``pairs`` less chapter 7's runs: the book as it would be without chapter 7."""
    return [(name, seed) for name, seed in pairs if name not in chapter_runs()]


def pipeline(repeats: int, threads: int) -> dict:
    """Seconds of each stage of the worked world, seed 0, trained from an empty cache one run at a time.

    The pretraining (shared by every base run of the world, which continue
    the first one's), each base run's SFT, and each RL run's whole training
    (checkpoint evaluations included) and its median step.
    """
    measured: dict[str, list[float]] = {}
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as tmp, environment(RLBOOK_CACHE=tmp, RLBOOK_PROGRESS="0"):
            trained = {name: runs.load(name, 0, threads) for name in chapter_runs()}
        bases = chapter_runs(rl=False)
        measured.setdefault("pretrain_seconds", []).append(
            sum(trained[name].log["timing"]["pretrain_seconds"] for name in bases)
        )
        for name in bases:
            measured.setdefault(f"{name}_sft_seconds", []).append(trained[name].log["timing"]["sft_seconds"])
        for name in chapter_runs(rl=True):
            steps = trained[name].metrics
            measured.setdefault(f"{name}_seconds", []).append(trained[name].log["wall_seconds"])
            measured.setdefault(f"{name}_step_seconds", []).append(
                statistics.median(m["sample_seconds"] + m["update_seconds"] for m in steps)
            )
    return {key: spread(values) for key, values in measured.items()}


def added_seconds(with_chapter: dict, before_chapter: dict) -> dict:
    """What the worked world adds to training every run the book needs: the difference of the two medians,
    and the smallest and largest difference any pair of measurements allows."""
    return {
        "median": with_chapter["median"] - before_chapter["median"],
        "min": with_chapter["min"] - before_chapter["max"],
        "max": with_chapter["max"] - before_chapter["min"],
        "n": min(with_chapter["n"], before_chapter["n"]),
    }


def rows(report: dict) -> list[str]:
    """The worked world's rows of the benchmark table."""
    w = report["worked"]
    lines = [
        (
            f"| chapter 7: the worked world's pretraining, shared by its base runs and seeds | "
            f"{fmt(w['pretrain_seconds'], unit=' s')} |"
        )
    ]
    lines += [
        f"| chapter 7: SFT (`{name}`) | {fmt(w[f'{name}_sft_seconds'], unit=' s')} |" for name in chapter_runs(rl=False)
    ]
    for name in chapter_runs(rl=True):
        lines.append(
            f"| chapter 7: RL (`{name}`, incl. checkpoint evaluations) | {fmt(w[f'{name}_seconds'], unit=' s')} |"
        )
        lines.append(f"| chapter 7: RL step (`{name}`) | {fmt(w[f'{name}_step_seconds'], 1000, ' ms')} |")
    if "runs_before_chapter" in report:
        before = report["runs_before_chapter"]
        lines += [
            (
                f"| every run the book needs but chapter 7's ({report['machine']['runs_before_chapter']} runs), "
                f"empty cache, {before['jobs']} at a time | {fmt(before['seconds'], unit=' s')} |"
            ),
            (
                f"| chapter 7's runs add to every run the book needs, empty cache (difference of medians; range "
                f"of the differences) | {fmt(added_seconds(report['all_runs']['seconds'], before['seconds']), unit=' s')} |"
            ),
        ]
    return lines
