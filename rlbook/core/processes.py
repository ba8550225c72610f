"""No process left behind: worker processes die with their parent, and an interrupted command stops its children.

Used by the prefetch that trains the book's runs (:mod:`rlbook.book.prefetch`),
by ``rlbook build``, which starts that prefetch, and by the TRL appendix's
``torchrun`` launch (:mod:`rlbook.trl.launch`). A worker that trains a run
is stopped with SIGTERM, which training turns into an orderly interruption:
the run's partial state is kept and it resumes next time.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence

import psutil

PR_SET_PDEATHSIG = 1
"""Linux's prctl option that sends the calling process a signal when its parent exits."""


_PARENT: int | None = None
"""The parent of this pool worker, once :func:`die_with_parent` ran in it."""
_BUSY = False
"""Whether this pool worker is running a task (:func:`worker_task`)."""
_STOPPING = False
"""Whether this pool worker was told to stop while running a task."""


def die_with_parent() -> None:
    """Make this process a worker that stops with its parent: a pool's initializer (Linux; elsewhere in part).

    Ctrl-C is ignored: it reaches the parent, which stops its workers in
    order (:func:`stop_children`). SIGTERM stops the worker: at once when it
    is idle, and when it runs a task by a KeyboardInterrupt in the task, which
    training turns into an orderly interruption (the run's partial state is
    kept); the worker then exits instead of taking another task
    (:func:`worker_task`). A parent that is killed outright sends its workers
    SIGTERM (Linux's parent-death signal).
    """
    global _PARENT
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _stop_worker)
    _PARENT = os.getppid()
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != _PARENT:  # the parent died before the call above
        os.kill(os.getpid(), signal.SIGTERM)


def _stop_worker(signum: int, frame: object) -> None:
    global _STOPPING
    if not _BUSY:
        os._exit(128 + signum)
    _STOPPING = True
    raise KeyboardInterrupt(f"signal {signum}")


@contextlib.contextmanager
def worker_task() -> Iterator[None]:
    """Run one task of a pool worker (:func:`die_with_parent`): a worker that was told to stop, or whose
    parent is gone, takes no further task and exits, instead of training on for nobody."""
    global _BUSY
    if _STOPPING or (_PARENT is not None and os.getppid() != _PARENT):
        os._exit(128 + signal.SIGTERM)
    _BUSY = True
    try:
        yield
    finally:
        _BUSY = False
        if _STOPPING:
            sys.stderr.flush()
            os._exit(128 + signal.SIGTERM)


def stop_children(grace: float = 10.0) -> None:
    """Stop every descendant of this process: SIGTERM, then SIGKILL for those still alive after ``grace`` s.

    Python's resource tracker is left alone: it ignores SIGTERM, ends by
    itself once the processes it serves are gone, and one killed early is
    started again by the next process that frees a lock, which then prints
    tracebacks about locks it never saw.
    """
    tracker = _resource_tracker_pid()
    children = [c for c in psutil.Process().children(recursive=True) if c.pid != tracker]
    for child in children:
        with contextlib.suppress(psutil.NoSuchProcess):
            child.terminate()
    _, alive = psutil.wait_procs(children, timeout=grace)
    for child in alive:
        with contextlib.suppress(psutil.NoSuchProcess):
            child.kill()


def _resource_tracker_pid() -> int | None:
    """The pid of the resource tracker that :mod:`multiprocessing` started for this process, if any."""
    from multiprocessing import resource_tracker

    return getattr(resource_tracker._resource_tracker, "_pid", None)


def stop_group(process: subprocess.Popen, grace: float = 10.0) -> None:
    """Stop ``process`` (started with ``start_new_session=True``) and every process of its group."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, sig)
        try:
            process.wait(timeout=wait)
            break
        except subprocess.TimeoutExpired:
            continue
    deadline = time.monotonic() + grace
    while _group_alive(process.pid) and time.monotonic() < deadline:  # the resource tracker ends by itself
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)  # workers that outlived their leader


def _group_alive(group: int) -> bool:
    """Whether any process of process group ``group`` still runs."""
    try:
        os.killpg(group, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def run_group(command: Sequence[str], timeout: float | None, **kwargs) -> subprocess.CompletedProcess:
    """:func:`subprocess.run` whose command, and every process it starts, is stopped on a timeout or Ctrl-C.

    The command gets a session of its own, so a launcher's workers (torchrun's
    ranks) are stopped with it; output is captured as text.
    """
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True, **kwargs
    )
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except BaseException:
        stop_group(process)
        process.communicate()
        raise
    return subprocess.CompletedProcess(list(command), process.returncode, stdout, stderr)
