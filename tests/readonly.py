"""Running a test's code where a folder cannot be written, even when the tests run as root.

Root writes through any permission bit, so as root the code runs in a forked
child that has become the unprivileged user ``nobody``, for whom a folder
that root owns is read-only; as any other user the folder's tree is made
read-only for the call and given back its permissions afterwards.
"""

from __future__ import annotations

import multiprocessing
import os
import stat
import tempfile
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

NOBODY = 65534


def shared_folder() -> Path:
    """A new folder under the system's temporary folder that every user may read and enter."""
    folder = Path(tempfile.mkdtemp(prefix="rlbook-readonly-"))
    folder.chmod(0o755)
    return folder


def _child(fn: Callable[[], Any], results) -> None:
    try:
        os.setgroups([])
        os.setgid(NOBODY)
        os.setuid(NOBODY)
        results.put(("ok", fn()))
    except BaseException as err:  # noqa: BLE001 - reported to the parent, which raises it
        results.put(("error", f"{type(err).__name__}: {err}\n{traceback.format_exc()}"))


def run_read_only(fn: Callable[[], Any], folder: Path) -> Any:
    """``fn()`` where ``folder`` (made by :func:`shared_folder`, with what it holds) cannot be written.

    Raises AssertionError with the child's traceback when ``fn`` raised.
    """
    if os.geteuid() == 0:
        results = multiprocessing.get_context("fork").Queue()
        child = multiprocessing.get_context("fork").Process(target=_child, args=(fn, results))
        child.start()
        kind, value = results.get(timeout=300)
        child.join(timeout=60)
        if kind == "error":
            raise AssertionError(value)
        return value
    modes = {p: p.stat().st_mode for p in [folder, *folder.rglob("*")]}
    for path, mode in modes.items():
        path.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    try:
        return fn()
    finally:
        for path, mode in modes.items():
            path.chmod(mode)
