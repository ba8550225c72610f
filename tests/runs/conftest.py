"""Shared fixtures of the reliability tests (test_cli, test_cache, test_interrupt, test_faults).

The project's cached seed-0 base, and a tiny run in a temporary cache: four
RL steps from that base, on one thread (the book's default, and the fastest
on a busy two-core machine, where two threads make the tiny tensors of these
runs tens of times slower). The base entry is copied from the project cache
into the temporary one, so no test ever retrains the base.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch

from rlbook import runs
from rlbook.core.rl import RLConfig

THREADS = 1
TINY = RLConfig(steps=4, group_size=2, checkpoint_every=2, eval_n=2, lr=1e-4)
TINY_SPEC = runs.RunSpec("tiny", "reliability tests: 4 RL steps from base, every train prompt", "base", rl=TINY)


def _fill(root: Path, base_entry: Path, mp: pytest.MonkeyPatch) -> Path:
    """Point the cache at ``root``, register the tiny run and put the base entry in place."""
    mp.setenv("RLBOOK_CACHE", str(root))
    mp.setitem(runs.RUNS, "tiny", TINY_SPEC)
    shutil.copytree(base_entry, runs.entry_path("base", 0, THREADS))
    return root


@pytest.fixture(scope="session")
def base_entry() -> Path:
    """The project cache's entry of the seed-0 base run (trained once if it is missing)."""
    runs.load("base", 0)
    return runs.entry_path("base", 0, runs.DEFAULT_THREADS)


@pytest.fixture
def tiny_cache(tmp_path, base_entry, monkeypatch) -> Path:
    """An empty temporary cache holding only the base entry; the tiny run is registered as ``tiny``."""
    threads = torch.get_num_threads()
    yield _fill(tmp_path / "cache", base_entry, monkeypatch)
    torch.set_num_threads(threads)


@pytest.fixture(scope="session")
def tiny_reference(tmp_path_factory, base_entry) -> runs.Run:
    """The tiny run of seed 0, built once without interruption in a cache of its own."""
    threads = torch.get_num_threads()
    with pytest.MonkeyPatch.context() as mp:
        _fill(tmp_path_factory.mktemp("reference") / "cache", base_entry, mp)
        run = runs.load("tiny", 0, THREADS)
    torch.set_num_threads(threads)
    return run
