"""The run cache: where a run's files live, the key that names them, and how they are written and read.

An entry is a folder named after the run, its seed, its thread count and
its key. The key covers the run's configuration, its parent's key, the seed,
the thread count and the code that trains it (:func:`code_hash`), so editing
the engine never serves a stale result, while editing a chapter's table or a
plot retrains nothing. Entries are written atomically with a manifest of
checksums and hold only tensors and plain data, so loading one never runs
code from the file.
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from rlbook import record as rec
from rlbook.core.policy import Checkpoint
from rlbook.core.source import closure_hash

from .catalogue import PRETRAIN_SEED, spec

#: The module that trains a run: the cache key hashes its import closure.
TRAINING_ENTRY = ("rlbook.runs.training",)
#: The lists every run log holds.
LOG_LISTS = ("metrics", "evals", "checkpoints", "rollouts", "interventions", "aborted_updates")

def cache_root() -> Path:
    """The cache folder: ``$RLBOOK_CACHE`` or ``.rlbook-cache`` at the project root."""
    env = os.environ.get("RLBOOK_CACHE")
    return Path(env) if env else Path(__file__).resolve().parents[2] / ".rlbook-cache"


def code_hash() -> str:
    """Short SHA-256 of the code that can change a run's result: the import closure of the training module.

    It is computed from the source files (:func:`rlbook.core.source.closure_hash`),
    comments and docstrings left out, once per process, when this module is
    imported: a process that imported older code never files its results
    under the key of newer code.
    """
    return closure_hash(TRAINING_ENTRY)


def cache_key(name: str, seed: int, threads: int) -> str:
    """Hash of the run's configuration, its parent's key, seed, threads and code (:func:`code_hash`)."""
    s = spec(name)
    parent = cache_key(s.parent, seed, threads) if s.parent else ""
    text = json.dumps([repr(s.pretrain), repr(s.sft), repr(s.rl), parent, seed, threads, code_hash()])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def pretrained_key(name: str, threads: int) -> str:
    """Hash of a base run's pretraining: its configuration, the pretraining it continues, threads and code.

    It leaves out the run's seed: every seed shares the pretraining (:data:`PRETRAIN_SEED`).
    """
    s = spec(name)
    if s.pretrain is None:
        raise ValueError(f"{name!r} is not a base run")
    parent = pretrained_key(s.parent, threads) if s.parent else ""
    text = json.dumps([repr(s.pretrain), parent, PRETRAIN_SEED, threads, code_hash()])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def entry_path(name: str, seed: int, threads: int) -> Path:
    return cache_root() / f"{name}-seed{seed}-t{threads}-{cache_key(name, seed, threads)}"


def pretrained_path(name: str, threads: int) -> Path:
    """The cache entry of base run ``name``'s pretrained policy, shared by every seed."""
    return cache_root() / f"{name}-pretrained-t{threads}-{pretrained_key(name, threads)}"


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_entry(entry: Path, read: Callable[[Path], Any]) -> Any:
    """``read(entry)`` of a cache entry, or None when it is absent or fails its checksums."""
    manifest = entry / "manifest.json"
    if not entry.exists():
        return None
    if not manifest.exists():
        warnings.warn(f"cache entry {entry.name} is damaged (no manifest); rebuilding it", stacklevel=3)
        return None
    try:
        sums = json.loads(manifest.read_text())
        for file, digest in sums.items():
            if _digest(entry / file) != digest:
                raise ValueError(f"checksum mismatch in {file}")
        return read(entry)
    except Exception as err:  # noqa: BLE001 - any damage means: rebuild
        warnings.warn(f"cache entry {entry.name} is damaged ({err}); rebuilding it", stacklevel=3)
        return None


def write_entry(entry: Path, write: Callable[[Path], None]) -> None:
    """Write a cache entry atomically: ``write(folder)`` fills a temporary folder, which is then renamed into place."""
    tmp = entry.with_name(entry.name + f".tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    write(tmp)
    sums = {f.name: _digest(f) for f in sorted(tmp.iterdir())}
    (tmp / "manifest.json").write_text(json.dumps(sums, indent=1))
    shutil.rmtree(entry, ignore_errors=True)
    os.replace(tmp, entry)


@contextlib.contextmanager
def locked(path: Path):
    """Hold an exclusive lock so two processes never build the same entry at once."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def plain(log: dict) -> dict:
    """``log`` (a whole run log, or some of its lists) with each checkpoint as plain data (:meth:`Checkpoint.to_data`)."""
    if "checkpoints" not in log:
        return log
    return dict(log, checkpoints=[dict(c, checkpoint=c["checkpoint"].to_data()) for c in log["checkpoints"]])


def unplain(log: dict) -> dict:
    """The log that :func:`plain` wrote, its checkpoints made :class:`Checkpoint` objects again."""
    for c in log.get("checkpoints", []):
        if not isinstance(c, dict) or "checkpoint" not in c:
            raise ValueError("a checkpoint entry of the run log holds no checkpoint")
        c["checkpoint"] = Checkpoint.from_data(c["checkpoint"])
    return log


def save_log(log: dict, path: Path) -> None:
    """Write a run log as tensors and plain data (:func:`plain`)."""
    torch.save(plain(log), path)


def load_log(path: Path, lists: tuple[str, ...] = LOG_LISTS) -> dict:
    """The run log :func:`save_log` wrote, read without running code from the file (``weights_only=True``).

    A ValueError says what is wrong when it is not a dict, lacks one of
    ``lists`` or holds a checkpoint that is not a checkpoint.
    """
    log = torch.load(path, weights_only=True)
    if not isinstance(log, dict):
        raise ValueError(f"a run log is a dict, not a {type(log).__name__}")
    missing = [k for k in lists if not isinstance(log.get(k), list)]
    if missing:
        raise ValueError(f"the run log lacks its list(s) {', '.join(missing)}")
    return unplain(log)


def read_run(entry: Path) -> tuple[dict, dict]:
    """The record and the log of a run's cache entry."""
    return rec.load(entry / "record.json"), load_log(entry / "log.pt")


def write_run(record: dict, log: dict) -> Callable[[Path], None]:
    """What :func:`write_entry` writes for a run: its log and its record."""
    def write(folder: Path) -> None:
        save_log(log, folder / "log.pt")
        rec.save(record, folder / "record.json")
    return write


code_hash()  # fix the cache key to the code this process has imported
