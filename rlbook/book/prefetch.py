"""Train the runs the book needs and compute every chapter's facts, as soon as each can be, on every core.

``rlbook build`` and ``make test`` run ``python -m rlbook.book.prefetch``
before the pages: one pool of worker processes trains the runs that the
chapters' facts need (:func:`rlbook.book.needs`) and the cache lacks, and
computes a chapter's facts the moment the last run it reads is trained,
while other runs are still training. A chapter whose facts are kept seed by
seed (a facts module with ``seed_part``, chapters 3, 10 and 11) has each seed's
part computed as a task of its own, as soon as that seed's runs are there,
so its seeds share the cores. The pages then only load their facts.
A run is trained once even when several processes ask for it (the cache's
lock), and facts that are cached are not computed again.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import signal
import sys
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, wait

from rlbook import book, runs
from rlbook.book import store
from rlbook.book._available import available_topics
from rlbook.book.needs import Need
from rlbook.core import processes
from rlbook.core.arguments import bounded_int
from rlbook.runs import prefetch as run_prefetch


def needed_runs(topics: list[str], seeds: tuple[int, ...] = book.SEEDS) -> dict[str, set[tuple[str, int]]]:
    """The catalogue runs each chapter's facts read: topic -> {(run, seed)}.

    A result outside the catalogue that a chapter's facts read (the
    appendix's TRL runs) is left to the facts' ``compute``, which makes it.
    """
    return {t: {(n.name, n.seed) for n in book.chapter(t).needs(seeds) if isinstance(n, Need)} for t in topics}


def book_runs(topics: list[str] | None = None, seeds: tuple[int, ...] = book.SEEDS) -> list[tuple[str, int]]:
    """The runs the book needs: every catalogue (run, seed) pair that the facts of ``topics`` read, sorted.

    ``topics`` defaults to every chapter this Python can compute the facts of
    (:func:`rlbook.book._available.available_topics`). No list of runs is kept
    anywhere else: a run no chapter reads is not trained, and a run a new
    chapter reads is trained without being registered (``rlbook build``,
    ``make test`` and ``rlbook bench`` all take this list).
    """
    return sorted(set().union(*needed_runs(topics or available_topics(), seeds).values()))


def facts_cached(topic: str, threads: int, seeds: tuple[int, ...] = book.SEEDS) -> bool:
    """Whether the cache holds a finished entry of ``topic``'s facts under today's key."""
    module = book.chapter(topic)
    key = store.facts_key(module.__name__, seeds, threads, tuple(module.needs(seeds)))
    return (store.entry_path(topic, seeds, threads, key) / "manifest.json").is_file()


def _train(pair: tuple[str, int], threads: int) -> tuple[str, float, float]:
    started = time.perf_counter()
    with processes.worker_task():
        runs.load(pair[0], pair[1], threads)
    return f"{pair[0]} seed {pair[1]}", time.perf_counter() - started, run_prefetch.peak_memory_mb()


def _part(topic: str, seed: int, threads: int) -> tuple[str, float, float]:
    started = time.perf_counter()
    import torch

    with processes.worker_task():
        before = torch.get_num_threads()
        torch.set_num_threads(threads)
        try:
            book.chapter(topic).seed_part(seed)
        finally:
            torch.set_num_threads(before)
    return f"facts of {topic}, seed {seed}", time.perf_counter() - started, run_prefetch.peak_memory_mb()


def seed_parts(topic: str, seeds: tuple[int, ...] = book.SEEDS) -> list[tuple[str, str, int]]:
    """The parts of ``topic``'s facts that can be computed seed by seed, as task keys ``("part", topic, seed)``:
    one per seed when its facts module keeps them so (``seed_part``), none otherwise."""
    return [("part", topic, s) for s in seeds] if hasattr(book.chapter(topic), "seed_part") else []


def _facts(topic: str, threads: int, seeds: tuple[int, ...] = book.SEEDS) -> tuple[str, float, float]:
    started = time.perf_counter()
    with processes.worker_task():
        book.load(topic, seeds, threads=threads, check=False)
    return f"facts of {topic}", time.perf_counter() - started, run_prefetch.peak_memory_mb()


def prefetch_book(
    topics: list[str] | None = None,
    jobs: int | None = None,
    threads: int = runs.DEFAULT_THREADS,
    out: Callable[[str], None] = print,
    executor: Executor | None = None,
    seeds: tuple[int, ...] = book.SEEDS,
    keep_going: bool = False,
) -> float:
    """Train the missing runs of ``topics`` (default: every chapter this Python can compute the facts of,
    :func:`rlbook.book._available.available_topics`) and compute their missing facts.

    ``jobs`` workers (default: the usable cores) take runs in
    :func:`rlbook.runs.prefetch.training_order` and a chapter's facts as soon
    as its runs are there; ``executor`` (default: a pool of ``jobs`` spawned
    processes) runs them. ``seeds`` are the book's by default; the audit
    (:mod:`rlbook.book.check`) passes its own, with ``keep_going``: a
    chapter whose facts fail is reported in one line and the rest go on.
    Returns the wall time in seconds.
    """
    started = time.perf_counter()
    topics = topics or available_topics()
    jobs = jobs or run_prefetch.usable_cores()
    needs = needed_runs(topics, seeds)
    wanted = sorted(set().union(*needs.values()))
    missing = run_prefetch.training_order([p for p in wanted if not run_prefetch.is_cached(*p, threads)])
    waiting: dict[str, set] = {t: needs[t] & set(missing) for t in topics if not facts_cached(t, threads, seeds)}
    # A seed's part waits for that seed's runs; the chapter's facts wait for their runs and every part.
    parts: dict[tuple, set] = {}
    for topic in list(waiting):
        for key in seed_parts(topic, seeds):
            parts[key] = {p for p in waiting[topic] if p[1] == key[2]}
            waiting[topic].add(key)
    tasks = len(missing) + len(waiting) + len(parts)
    if not tasks:
        return 0.0
    spawn = multiprocessing.get_context("spawn")
    with executor or ProcessPoolExecutor(jobs, mp_context=spawn, initializer=processes.die_with_parent) as pool:
        running: set[Future] = set()
        queue = list(missing)

        def submit_ready() -> None:
            for key in [k for k, left in parts.items() if not left]:
                future = pool.submit(_part, key[1], key[2], threads)
                future.pair = key  # type: ignore[attr-defined]
                running.add(future)
                del parts[key]
            for topic in [t for t, left in waiting.items() if not left]:
                running.add(pool.submit(_facts, topic, threads, seeds))
                del waiting[topic]
            while queue and len(running) < jobs:
                pair = queue.pop(0)
                future = pool.submit(_train, pair, threads)
                future.pair = pair  # type: ignore[attr-defined]
                running.add(future)

        try:
            _drain(running, submit_ready, [*waiting.values(), *parts.values()], out, tasks, keep_going)
        except BaseException:  # Ctrl-C or SIGTERM: the workers stop too, keeping what they trained
            processes.stop_children()
            pool.shutdown(wait=False, cancel_futures=True)
            processes.stop_children()  # a worker the pool started while the first ones were stopping
            raise
    return time.perf_counter() - started


def _drain(
    running: set[Future],
    submit_ready: Callable[[], None],
    waiting: list[set],
    out: Callable[[str], None],
    tasks: int,
    keep_going: bool,
) -> None:
    """Wait for the prefetch's tasks, report each as it ends, and start those that became ready."""
    done = 0
    submit_ready()
    while running:
        finished, _ = wait(running, return_when=FIRST_COMPLETED)
        for future in finished:
            running.discard(future)
            done += 1
            failed = future.exception()
            pair = getattr(future, "pair", None)
            if keep_going and (pair is None or pair[0] == "part") and failed is not None:
                out(f"[{done}/{tasks}] facts failed: {type(failed).__name__}: {failed}")
                if pair is None:
                    continue
            else:
                what, seconds, _memory = future.result()
                out(f"[{done}/{tasks}] {what}: {seconds:.1f} s")
            for left in waiting:
                left.discard(pair)
        submit_ready()


def main(argv: list[str] | None = None) -> int:
    """``python -m rlbook.book.prefetch [--jobs N]``: the book's missing runs and facts; 0 when all are there."""
    parser = argparse.ArgumentParser(prog="python -m rlbook.book.prefetch", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--jobs",
        type=bounded_int(1, run_prefetch.MAX_JOBS),
        default=run_prefetch.usable_cores(),
        help="runs or facts computed at once (default: the usable cores, here %(default)s)",
    )
    args = parser.parse_args(argv)
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    signal.signal(signal.SIGTERM, _interrupt)  # stopped like Ctrl-C: its workers go with it
    try:
        seconds = prefetch_book(jobs=args.jobs, out=lambda line: print(line, flush=True))
    except KeyboardInterrupt:
        processes.stop_children()
        print(
            "python -m rlbook.book.prefetch: interrupted; the runs and facts it finished are cached, "
            "and a run stopped mid-training resumes from its last checkpoint next time",
            file=sys.stderr,
            flush=True,
        )
        sys.stdout.flush()
        os._exit(130)  # not sys.exit: at exit Python would wait for the pool's manager thread, which can wait forever
    if seconds:
        print(f"the book's runs and facts are ready after {seconds:.1f} s, {args.jobs} at a time", flush=True)
    return 0


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


if __name__ == "__main__":
    sys.exit(main())
