"""The book's named runs and their cache (every chapter loads its runs from here).

``load(name, seed=...)`` returns a :class:`Run`, training it first when the
cache has no valid entry. The package reads in four parts:

- :mod:`~rlbook.runs.catalogue`: the named runs (:data:`RUNS`) and what each changes;
- :mod:`~rlbook.runs.cache`: the key, the entry folders, writing and reading them;
- :mod:`~rlbook.runs.training`: training a run, with its resume point;
- :mod:`~rlbook.runs.records`: the run record filled from a run's log.

:mod:`~rlbook.runs.prefetch` trains runs side by side (the book's are those its chapters' facts read).
"""

from __future__ import annotations

from .cache import cache_key, cache_root, code_hash, entry_path, pretrained_key, pretrained_path
from .catalogue import DEFAULT_THREADS, MAIN, MULTI, PRETRAIN_SEED, RUNS, RunSpec, spec
from .run import Run, RunLike
from .training import Judge, load, load_judge

__all__ = [
    "DEFAULT_THREADS",
    "MAIN",
    "MULTI",
    "PRETRAIN_SEED",
    "RUNS",
    "Judge",
    "Run",
    "RunLike",
    "RunSpec",
    "cache_key",
    "cache_root",
    "code_hash",
    "entry_path",
    "load",
    "load_judge",
    "pretrained_key",
    "pretrained_path",
    "spec",
]
