"""The run cache: where a run's files live, the key that names them, and how they are written and read.

An entry is a folder named after the run, its seed, its thread count and
its key. The key covers the run's configuration, its parent's key, the seed,
the thread count and the code that trains it (:func:`code_hash`), so editing
the engine never serves a stale result, while editing a chapter's table or a
plot retrains nothing. Entries are written atomically with a manifest of
checksums and hold only tensors and plain data, so loading one never runs
code from the file.

What cannot be used is said in one line (:class:`CacheError`): a file where
the cache folder should be, a lock that is a folder or a symbolic link
(never followed), a full disk. A read-only cache serves the runs it holds.
Every file is written with the permissions of a new file (``0o666`` less
the umask), through a temporary name that a failed write removes.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import hashlib
import io
import json
import os
import pickle
import shutil
import stat
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from rlbook import record as rec
from rlbook.core import numerics
from rlbook.core.policy import Checkpoint
from rlbook.core.reward_model import JudgeVerifier
from rlbook.core.source import closure_hash

from .catalogue import JUDGE, JUDGE_PARENT, PRETRAIN_SEED, spec
from .records import check_against_log

#: The module that trains a run: the cache key hashes its import closure.
TRAINING_ENTRY = ("rlbook.runs.training",)
#: Modules of that closure whose code the key leaves out: the catalogue's runs, its pretraining seed and
#: its judge enter each key by value (:func:`cache_key`), so adding or editing one run retrains only it
#: and the runs that start from it.
BY_VALUE = ("rlbook.runs.catalogue",)
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
    return closure_hash(TRAINING_ENTRY, by_value=BY_VALUE)


@functools.cache
def draw() -> str:
    """The numerical draw this process trains in (:func:`rlbook.core.numerics.draw`), fixed at its first call.

    Every run key holds it, so runs of the pinned configuration and of a
    machine's own kernels (``RLBOOK_NUMERICS=native``) never share an entry.
    """
    return numerics.draw()


def cache_key(name: str, seed: int, threads: int) -> str:
    """Hash of the run's configuration, its parent's key, seed, threads, code (:func:`code_hash`) and :func:`draw`.

    A base run's key also holds its pretraining's key (:func:`pretrained_key`),
    and a run trained against the learned judge the judge's (:func:`judge_key`):
    the catalogue's text is not part of :func:`code_hash` (:data:`BY_VALUE`).
    """
    s = spec(name)
    parent = cache_key(s.parent, seed, threads) if s.parent else ""
    shared = [pretrained_key(name, threads)] if s.pretrain is not None else []
    if s.rl is not None and s.rl.verifier == JudgeVerifier.name:
        shared.append(judge_key(seed, threads))
    text = json.dumps([repr(s.pretrain), repr(s.sft), repr(s.rl), parent, *shared, seed, threads, code_hash(), draw()])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def pretrained_key(name: str, threads: int) -> str:
    """Hash of a base run's pretraining: its configuration, the pretraining it continues, threads and code.

    It leaves out the run's seed: every seed shares the pretraining (:data:`PRETRAIN_SEED`).
    """
    s = spec(name)
    if s.pretrain is None:
        raise ValueError(f"{name!r} is not a base run")
    parent = pretrained_key(s.parent, threads) if s.parent else ""
    text = json.dumps([repr(s.pretrain), parent, PRETRAIN_SEED, threads, code_hash(), draw()])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def judge_key(seed: int, threads: int) -> str:
    """Hash of chapter 4's learned judge: its configuration, the key of the run it learns from, seed, threads, code."""
    text = json.dumps([repr(JUDGE), cache_key(JUDGE_PARENT, seed, threads), seed, threads, code_hash(), draw()])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def judge_path(seed: int, threads: int) -> Path:
    """The cache entry of the learned judge of ``seed`` (chapter 4), shared by the runs that train against it."""
    return cache_root() / f"judge-seed{seed}-t{threads}-{judge_key(seed, threads)}"


def entry_path(name: str, seed: int, threads: int) -> Path:
    return cache_root() / f"{name}-seed{seed}-t{threads}-{cache_key(name, seed, threads)}"


def pretrained_path(name: str, threads: int) -> Path:
    """The cache entry of base run ``name``'s pretrained policy, shared by every seed."""
    return cache_root() / f"{name}-pretrained-t{threads}-{pretrained_key(name, threads)}"


class CacheError(OSError):
    """A cache folder, lock or entry that cannot be used, or a write that failed, in one line (its ``strerror``)."""

    def __str__(self) -> str:
        return self.strerror or super().__str__()


def problem(err: OSError) -> str:
    """What went wrong in ``err``, plainly: "no space left on device" for a full disk."""
    if err.errno == errno.ENOSPC:
        return "no space left on device"
    return err.strerror or " ".join(str(err).split())


def write_file(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file that replaces it, or is removed if the write fails.

    The file gets the permissions of any new file (``0o666`` less the umask),
    as the run record and the run log both do.
    """
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        handle = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def save_tensors(value: Any, path: Path) -> None:
    """``torch.save`` of ``value`` to ``path`` by :func:`write_file`, so that a full disk is an ENOSPC error."""
    buffer = io.BytesIO()
    torch.save(value, buffer)
    write_file(path, buffer.getvalue())


def _digest(path: Path) -> str:
    if path.is_symlink() or not path.is_file():
        raise ValueError(f"{path.name} is not a regular file")
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_entry(entry: Path, read: Callable[[Path], Any]) -> Any:
    """``read(entry)`` of a cache entry, or None when it is absent or fails its checksums.

    The manifest must list every file of the entry, each a regular file
    whose checksum matches; anything else is reported and rebuilt.
    """
    manifest = entry / "manifest.json"
    if not entry.exists() and not entry.is_symlink():
        return None
    if not entry.is_dir() or entry.is_symlink():
        warnings.warn(f"cache entry {entry.name} is damaged (not a folder); rebuilding it", stacklevel=3)
        return None
    if not manifest.exists():
        warnings.warn(f"cache entry {entry.name} is damaged (no manifest); rebuilding it", stacklevel=3)
        return None
    try:
        sums = json.loads(manifest.read_text())
        files = sorted(p.name for p in entry.iterdir() if p.name != manifest.name)
        if not isinstance(sums, dict) or sorted(sums) != files:
            raise ValueError(
                f"the manifest lists {sorted(sums) if isinstance(sums, dict) else sums} where the entry holds {files}"
            )
        for file, digest in sums.items():
            if _digest(entry / file) != digest:
                raise ValueError(f"checksum mismatch in {file}")
        return read(entry)
    except Exception as err:  # noqa: BLE001 - any damage means: rebuild
        warnings.warn(f"cache entry {entry.name} is damaged ({_damage(err)}); rebuilding it", stacklevel=3)
        return None


def read_whole(entry: Path, read: Callable[[Path], Any]) -> Any:
    """:func:`read_entry` without the entry's lock and without a word: ``read(entry)``, or None when the entry is
    absent, half removed or damaged now.

    An entry is renamed into place whole (:func:`write_entry`) and never
    changed after, so a process that finds one whole needs no lock to read
    it, and many processes load the same run at once without waiting for one
    another. On None the caller takes the lock and reads again with
    :func:`read_entry`, which reports damage and leads to a rebuild.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return read_entry(entry, read)


def _damage(err: Exception) -> str:
    """What is wrong with an entry, in one line; a file that holds more than tensors is refused, never loaded."""
    if isinstance(err, pickle.UnpicklingError) or "weights_only" in str(err):
        return "a file holds objects other than tensors and plain data, so it is refused and never unpickled"
    return " ".join(str(err).split())[:300] or type(err).__name__


def _remove(path: Path) -> None:
    """Remove what is at ``path``: a folder with its files, or a file or link (never what a link points to)."""
    if path.is_symlink() or (path.exists() and not path.is_dir()):
        path.unlink()
    elif path.exists():
        shutil.rmtree(path)


def write_entry(entry: Path, write: Callable[[Path], None]) -> None:
    """Write a cache entry atomically: ``write(folder)`` fills a temporary folder, which is then renamed into place.

    Called under the entry's lock (:func:`locked`), so every other temporary
    folder of the entry is a leftover of a writer that died, and is removed.
    A failed write removes its own temporary folder and raises
    :class:`CacheError` saying why.
    """
    for stale in entry.parent.glob(f"{entry.name}.tmp-*"):
        _remove(stale)
    tmp = entry.with_name(entry.name + f".tmp-{os.getpid()}")
    try:
        tmp.mkdir(parents=True)
        write(tmp)
        sums = {f.name: _digest(f) for f in sorted(tmp.iterdir())}
        write_file(tmp / "manifest.json", json.dumps(sums, indent=1).encode())
        _remove(entry)
        os.replace(tmp, entry)
    except BaseException as err:
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(err, OSError) and not isinstance(err, CacheError):
            raise CacheError(err.errno, f"{problem(err)}: cannot write the cache entry {entry}") from err
        raise


def _folder(root: Path) -> None:
    """Make the cache folder ``root`` if it is missing; CacheError when it cannot be a folder."""
    try:
        root.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise CacheError(errno.ENOTDIR, f"the run cache {root} (RLBOOK_CACHE) is not a folder") from None
    except OSError as err:
        raise CacheError(err.errno, f"cannot make the run cache folder {root}: {problem(err)}") from None


def _open_lock(path: Path) -> int | None:
    """A descriptor of the lock file ``path``, opened without following a link; None in a cache that cannot be written.

    A cache this process may not write (read-only, or another user's) is
    opened for reading, which still takes the lock, or not at all when the
    lock file is missing and cannot be made; such a cache only serves runs.
    """
    flags = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        try:
            handle = os.open(path, os.O_RDWR | os.O_CREAT | flags, 0o666)
        except OSError as err:
            if err.errno not in (errno.EACCES, errno.EPERM, errno.EROFS):
                raise
            try:
                handle = os.open(path, os.O_RDONLY | flags)
            except FileNotFoundError:
                return None
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise CacheError(
                err.errno, f"the cache lock {path} is a symbolic link, which is never followed; remove it"
            ) from None
        if err.errno == errno.EISDIR:
            raise CacheError(err.errno, f"the cache lock {path} is a folder, not a file; remove it") from None
        raise CacheError(err.errno, f"cannot open the cache lock {path}: {problem(err)}") from None
    if not stat.S_ISREG(os.fstat(handle).st_mode):
        os.close(handle)
        raise CacheError(errno.EINVAL, f"the cache lock {path} is not a regular file; remove it")
    return handle


def check_writable(folder: Path, what: str) -> None:
    """Raise CacheError unless this process can make files in ``folder`` (tried, not read from permission bits).

    Called before training ``what``, so that a read-only cache says so at
    once rather than after the training it could not keep.
    """
    probe = folder / f".write-probe-{os.getpid()}"
    try:
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666))
    except OSError as err:
        raise CacheError(
            err.errno,
            f"the run cache {folder} cannot be written ({problem(err)}) and does not hold "
            f"{what}; point RLBOOK_CACHE at a folder you can write",
        ) from None
    probe.unlink()


@contextlib.contextmanager
def locked(path: Path):
    """Hold an exclusive lock so two processes never build the same entry at once.

    In a cache this process cannot write, the lock is taken on a descriptor
    opened for reading, or not at all when the lock file is missing: there
    it can only serve what the cache holds (:func:`check_writable`).
    """
    _folder(path.parent)
    handle = _open_lock(path)
    if handle is None:
        yield
        return
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"rlbook: waiting for {_holder(path)}, which is building {path.stem}", file=sys.stderr, flush=True)
            fcntl.flock(handle, fcntl.LOCK_EX)
        _sign(path)
        yield
    finally:
        with contextlib.suppress(OSError, ValueError):
            if int(_holder_file(path).read_text()) == os.getpid():
                _holder_file(path).unlink()
        os.close(handle)  # closing the descriptor releases the lock


def _holder_file(path: Path) -> Path:
    return path.with_name(path.name + ".holder")


def _sign(path: Path) -> None:
    """Name this process as the holder of lock ``path`` (in ``<lock>.holder``, replaced whole, never written
    through a link; the lock file itself is left as it is), so that a process that waits can say whom for."""
    holder = _holder_file(path)
    temp = holder.with_name(f".{holder.name}.tmp-{os.getpid()}")
    with contextlib.suppress(OSError):
        temp.write_text(str(os.getpid()))
        os.replace(temp, holder)
    with contextlib.suppress(OSError):
        temp.unlink(missing_ok=True)


def _holder(path: Path) -> str:
    """The process that holds the lock ``path``, as a waiting process can name it (and whether it is stopped)."""
    try:
        pid = int(_holder_file(path).read_text().strip())
    except (OSError, ValueError):
        return "another process"
    try:
        import psutil

        status = psutil.Process(pid).status()
    except Exception:  # noqa: BLE001 - the holder may have gone, or psutil may not see it
        return f"process {pid}"
    if status == psutil.STATUS_STOPPED:
        return f"process {pid}, which is stopped (resume it with kill -CONT {pid}, or end it)"
    return f"process {pid}"


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
    """Write a run log as tensors and plain data (:func:`plain`), by :func:`save_tensors`."""
    save_tensors(plain(log), path)


def load_log(path: Path, lists: tuple[str, ...] = LOG_LISTS) -> dict:
    """The run log :func:`save_log` wrote, read without running code from the file (``weights_only=True``).

    A ValueError says what is wrong when it is not a dict, lacks one of
    ``lists`` or holds a checkpoint that is not a checkpoint.
    """
    log = torch.load(path, weights_only=True)
    if not isinstance(log, dict):
        raise ValueError(f"a run log is a dict, not a {type(log).__name__}")  # noqa: TRY004
    missing = [k for k in lists if not isinstance(log.get(k), list)]
    if missing:
        raise ValueError(f"the run log lacks its list(s) {', '.join(missing)}")
    return unplain(log)


def read_run(entry: Path) -> tuple[dict, dict]:
    """The record and the log of a run's cache entry, the record held against the log (``check_against_log``)."""
    record, log = rec.load(entry / "record.json"), load_log(entry / "log.pt")
    check_against_log(record, log)
    return record, log


def write_run(record: dict, log: dict) -> Callable[[Path], None]:
    """What :func:`write_entry` writes for a run: its log and its record."""

    def write(folder: Path) -> None:
        save_log(log, folder / "log.pt")
        rec.save(record, folder / "record.json")

    return write


code_hash()  # fix the cache key to the code this process has imported
draw()  # and to the draw it computes in
