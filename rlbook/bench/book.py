"""The whole-book measurements of ``rlbook bench``: every run from an empty cache, side by side, the whole
book built from an empty and from a warm cache, with the memory of every process the build starts, and each
chapter notebook's Run All with every run and fact cached.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

from rlbook import runs
from rlbook.runs import prefetch

from .kernels import environment, spread


def train_from_empty(pairs: list[tuple[str, int]], threads: int, jobs: int) -> dict:
    """Wall time to train the (run, seed) ``pairs`` from an empty cache, ``jobs`` at a time, and the work in it.

    The same worker pool that ``rlbook build`` uses (:func:`rlbook.runs.prefetch.train_all`);
    :func:`training_work` then reads from the runs how much training that wall time held.
    """
    # Set before the workers start, so that their torch sees it.
    with (
        tempfile.TemporaryDirectory() as tmp,
        environment(RLBOOK_CACHE=tmp, RLBOOK_PROGRESS="0", OMP_WAIT_POLICY="PASSIVE"),
    ):
        trained = prefetch.train_all(pairs, threads, jobs, out=lambda line: None)
        logs = [(name, runs.load(name, seed, threads).log) for name, seed in pairs]
    return {"seconds": trained.seconds, "worker_peak_memory_mb": trained.peak_memory_mb, **training_work(logs)}


def all_runs(pairs: list[tuple[str, int]], threads: int, jobs: int, repeats: int) -> dict:
    """:func:`train_from_empty` ``repeats`` times: the spread of each figure, and of the floor they imply.

    The floor is ``head + (work - head) / jobs`` (:func:`training_work`),
    taken in each repeat; memory is the largest peak of any repeat.
    """
    passes = [train_from_empty(pairs, threads, jobs) for _ in range(repeats)]
    floor = [p["head_seconds"] + (p["work_seconds"] - p["head_seconds"]) / jobs for p in passes]
    return {
        "jobs": jobs,
        "worker_peak_memory_mb": max(p["worker_peak_memory_mb"] for p in passes),
        **{key: spread([p[key] for p in passes]) for key in ("seconds", "work_seconds", "head_seconds")},
        "floor_seconds": spread(floor),
    }


def native_runs(pairs: list[tuple[str, int]], threads: int, jobs: int, repeats: int) -> dict:
    """:func:`all_runs` with the machine's own kernels (``RLBOOK_NUMERICS=native``): what the pinned
    configuration (:mod:`rlbook.core.numerics`) costs is the difference from :func:`all_runs`."""
    from rlbook.core import numerics

    unpinned = dict.fromkeys(numerics.PINNED)  # unset what this process's pin put there, for the workers
    with environment(**{numerics.SWITCH: "native"}, **unpinned):
        return all_runs(pairs, threads, jobs, repeats)


def training_work(logs: list[tuple[str, dict]]) -> dict:
    """The training seconds in freshly trained runs' (name, log) pairs, as each run timed itself, and what bounds them.

    ``work_seconds`` adds every run's training (a base run's SFT, and the
    shared pretraining in the one run that trained it; an RL run's steps
    and evaluations), leaving out loading, writing and waiting.
    ``head_seconds`` is the pretraining of :func:`head_run` (``base``):
    most runs descend from it, so while it trains the other workers have
    only the few runs of other lines to train (its second thread takes an
    idle core, see :class:`rlbook.core.train.PretrainConfig`). With ``jobs`` workers, the runs cannot
    finish sooner than ``head + (work - head) / jobs``.
    """
    work = head = 0.0
    first = head_run()
    for name, log in logs:
        timing = log.get("timing")
        if timing is None:
            work += log["wall_seconds"]
            continue
        pretrained = timing["pretrain_seconds"] if timing["pretrained_now"] else 0.0
        work += timing["sft_seconds"] + pretrained
        head += pretrained if name == first else 0.0
    return {"work_seconds": work, "head_seconds": head}


def head_run() -> str:
    """The run without a parent that the most named runs descend from (``base``; chapter 7's world has its own)."""
    roots = [name for name, s in runs.RUNS.items() if s.parent is None]
    return max(roots, key=lambda r: sum(prefetch.root(name) == r for name in runs.RUNS))


def tree_memory_mb(root: psutil.Process) -> float:
    """Memory of ``root`` and every process under it, in MB: the sum of their proportional set sizes (PSS).

    PSS divides each shared page among the processes that map it, so the
    libraries that every worker and kernel loads (torch above all) count
    once. Where the system does not report PSS (macOS, Windows), the unique
    set size stands in for it, which leaves the shared pages out.
    """
    total = 0
    for process in [root, *root.children(recursive=True)]:
        try:
            info = process.memory_full_info()
        except psutil.Error:  # it ended meanwhile, or is not ours to read
            continue
        total += getattr(info, "pss", info.uss)
    return total / 2**20


def book_run(root: Path, cache: str | None, fresh: bool = True) -> tuple[float, float]:
    """Wall time and peak memory of building the whole book (``rlbook build``) with the given run cache.

    With ``fresh`` every page is executed (``--fresh``); without it, a page whose inputs are those of its last
    execution is reused (:mod:`rlbook.publish.frozen`), as in a reader's second ``rlbook build``.

    The memory is the largest :func:`tree_memory_mb` of the build, sampled
    every 0.2 s: the build, the workers that train its runs and its pages'
    kernels together.
    """
    env = dict(os.environ, RLBOOK_PROGRESS="0")
    if cache:
        env["RLBOOK_CACHE"] = cache
    start = time.perf_counter()
    command = [sys.executable, "-m", "rlbook.cli", "build", "--backend", "pandoc", *(["--fresh"] if fresh else [])]
    build = subprocess.Popen(command, cwd=root, env=env, stdout=subprocess.DEVNULL)
    tree, peak = psutil.Process(build.pid), 0.0
    while True:
        try:
            build.wait(timeout=0.2)
            break
        except subprocess.TimeoutExpired:
            peak = max(peak, tree_memory_mb(tree))
    seconds = time.perf_counter() - start
    if build.returncode:
        raise subprocess.CalledProcessError(build.returncode, command)
    return seconds, peak


def notebook_run_all(notebooks: Path, timeout: int = 600) -> dict[str, float]:
    """Seconds each notebook in ``notebooks`` takes to run all its cells in a fresh kernel, by name.

    What a reader waits for after Jupyter's Run All on a chapter from
    ``_build/notebooks/`` once the book's runs and facts are cached (the
    target is 15 s a chapter). Measured with nbclient, without JupyterLab,
    in the environment of this process (so ``RLBOOK_CACHE`` applies); the
    kernel's start is included, as a reader waits for it too.
    """
    import nbformat
    from nbclient import NotebookClient

    seconds = {}
    for path in sorted(notebooks.glob("*.ipynb")):
        notebook = nbformat.read(path, as_version=4)
        client = NotebookClient(
            notebook, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
        )
        start = time.perf_counter()
        client.execute()
        seconds[path.stem] = time.perf_counter() - start
    return seconds
