"""Train the runs the book needs before its pages ask for them, several at a time.

A page trains the runs it loads one after another, so a build from an empty
cache used to leave a core idle while one chapter trained its comparison runs.
This module orders runs (the runs that others start from first, the costly
ones early) and trains them in a pool of worker processes, so that every core
stays busy. Which runs the book needs is not listed here: it is whatever the
chapters' facts read (:func:`rlbook.book.prefetch.book_runs`), and
``python -m rlbook.book.prefetch`` hands those to this pool. A process that
asks for a run a worker is training waits for it on the cache's lock;
nothing is ever trained twice. ``rlbook bench`` times the same pool.
"""

from __future__ import annotations

import contextlib
import functools
import multiprocessing
import os
import resource
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import NamedTuple

from rlbook import runs
from rlbook.core.world import split

MAX_JOBS = 64
"""The most runs ``--jobs`` trains at once (each is a process of a few hundred megabytes)."""


def usable_cores() -> int:
    """The cores this process may run on: the default number of runs trained at once (one thread each)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS and Windows have no affinity call
        return os.cpu_count() or 1


def depth(name: str) -> int:
    """How many runs ``name`` descends from: 0 for ``base``, 1 for ``main`` or ``process-base``, and so on."""
    parent = runs.spec(name).parent
    return 0 if parent is None else 1 + depth(parent)


def relative_cost(name: str) -> float:
    """A rough guide to an RL run's training time, used only to start the costly runs early.

    Its steps times the forward passes each makes (one per update, one for
    the reference, one for sampling) times the tokens of its rollouts.
    """
    rl = runs.spec(name).rl
    if rl is None:
        raise ValueError(f"{name!r} is not an RL run")
    prompts = rl.prompts_per_step or len(split("train", rl.world))
    return rl.steps * (rl.updates_per_batch + 2) * prompts * rl.group_size * rl.budget


def root(name: str) -> str:
    """The run without a parent that ``name`` descends from (itself when it has none): the root of its line."""
    parent = runs.spec(name).parent
    return name if parent is None else root(parent)


def training_order(pairs: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """``pairs`` ordered so that a worker seldom waits: parents before children, costly runs first.

    A *line* is a run without a parent and every run that descends from
    it: ``base``'s, and chapter 7's worked world's. First the first seed of
    each line's root (it trains the pretraining that every seed shares, see
    :data:`rlbook.runs.PRETRAIN_SEED`), the largest line first; then line
    by line, the largest first, so that a smaller line's pretraining trains
    while the other workers have the larger line's runs to train. Within a
    line, generation by generation (:func:`depth`); within one, the first
    seed of each base run, then RL runs by falling :func:`relative_cost`,
    then the other seeds of the base runs, which only fine-tune once that
    pretraining is there, so that no worker waits for it while RL runs are
    left to train. The last runs to start are cheap, and the workers finish
    nearly together.
    """
    first_seed = {name: min(seed for n, seed in pairs if n == name) for name, _ in pairs}
    size = Counter(root(name) for name, _ in pairs)

    def key(pair: tuple[str, int]) -> tuple:
        name, seed = pair
        rl, line = runs.spec(name).rl, root(name)
        rank = 1 if rl is not None else (0 if seed == first_seed[name] else 2)
        starts_line = name == line and rank == 0
        return not starts_line, -size[line], line, depth(name), rank, 0.0 if rl is None else -relative_cost(name), seed

    return sorted(pairs, key=key)


def is_cached(name: str, seed: int, threads: int) -> bool:
    """Whether the cache holds a finished entry for the run (its checksums are checked only when it is loaded)."""
    return (runs.entry_path(name, seed, threads) / "manifest.json").is_file()


def peak_memory_mb() -> float:
    """This process's peak resident memory in MB.

    On Linux it reads ``VmHWM``, the peak of the process's own address
    space: ``ru_maxrss`` would also count the pages a spawned worker shared
    with its parent before it started Python afresh, so every worker would
    seem as large as the process that started it.
    """
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # kB on Linux, bytes on macOS
    return peak / (1024 * 1024 if sys.platform == "darwin" else 1024)


class Trained(NamedTuple):
    """What :func:`train_all` reports: its wall time and the largest peak memory of a process that trained."""

    seconds: float
    peak_memory_mb: float


def _train_one(pair: tuple[str, int], threads: int) -> tuple[str, int, float, float]:
    started = time.perf_counter()
    runs.load(pair[0], pair[1], threads)
    return pair[0], pair[1], time.perf_counter() - started, peak_memory_mb()


def train_all(
    pairs: list[tuple[str, int]],
    threads: int = runs.DEFAULT_THREADS,
    jobs: int | None = None,
    out: Callable[[str], None] = print,
) -> Trained:
    """Train (or find cached) every run of ``pairs``, ``jobs`` at a time; return the wall time and peak memory.

    ``jobs`` defaults to :func:`usable_cores`, so each core trains one run.

    Set ``OMP_WAIT_POLICY=PASSIVE`` before calling (the workers inherit the
    environment): idle OpenMP threads then sleep rather than spin, and the
    workers do not steal each other's cores.
    """
    jobs = usable_cores() if jobs is None else jobs
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, got {jobs}")
    todo = training_order(pairs)
    train = functools.partial(_train_one, threads=threads)
    started = time.perf_counter()
    with contextlib.ExitStack() as stack:
        finished: Iterable[tuple[str, int, float, float]]
        if jobs == 1:  # one at a time needs no worker processes
            finished = map(train, todo)
        else:
            pool = stack.enter_context(multiprocessing.get_context("spawn").Pool(jobs))
            finished = pool.imap_unordered(train, todo)
        peak = 0.0
        for done, (name, seed, seconds, memory) in enumerate(finished, 1):
            out(f"[{done}/{len(todo)}] {name} seed {seed}: {seconds:.1f} s")
            peak = max(peak, memory)
    return Trained(time.perf_counter() - started, peak)
