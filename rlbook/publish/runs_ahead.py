"""``rlbook build``'s first step: train the book's missing runs and compute its facts ahead of the pages.

Used by ``rlbook build`` (:mod:`rlbook.publish.build`) for a whole-book
build and by Quarto's pre-render step (:mod:`rlbook.publish.prerender`) for a
whole-book render. It runs ``python -m rlbook.book.prefetch`` in a process
of its own, which trains the runs on every usable core, and remembers in
``_build/prefetch-done`` the code and cache it trained for, so that later
builds skip it until either changes.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from rlbook.core import processes
from rlbook.core.source import package_hash


def prefetch_runs(root: Path, jobs: int | None, out: Callable[[str], None]) -> None:
    """Train the book's missing runs and compute its facts before the pages run, ``jobs`` at a time
    (``python -m rlbook.book.prefetch``).

    ``jobs=None`` leaves the number to the prefetch: one run per usable core.

    A page trains the runs it loads one after another; the prefetch keeps
    every core busy instead, and the pages then find their runs cached. Its
    progress lines are passed to ``out``. When it succeeds, the fingerprint
    of the code and cache it trained for is written to
    ``_build/prefetch-done``, and later builds skip it (without even starting
    Python with torch) until the fingerprint changes. If it fails, the pages
    still train what they need themselves.
    """
    marker = root / "_build" / "prefetch-done"
    marker.parent.mkdir(parents=True, exist_ok=True)  # a fresh clone has no _build/ yet
    fingerprint = prefetch_fingerprint()
    if marker.is_file() and marker.read_text() == fingerprint:
        return
    process = subprocess.Popen(
        prefetch_command(jobs),
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=dict(os.environ, RLBOOK_PROGRESS="0"),
        start_new_session=True,  # so that stopping it stops its workers too
    )
    assert process.stdout is not None  # stdout=PIPE
    try:
        for line in process.stdout:
            out(line.rstrip())
        code = process.wait()
    except BaseException:  # Ctrl-C or SIGTERM on the build: the prefetch and its workers stop with it
        processes.stop_group(process)
        raise
    if code != 0:
        out(f"rlbook build: training the runs ahead of the pages failed (exit {code}); the pages train what they need")
        return
    marker.write_text(fingerprint)


def prefetch_command(jobs: int | None) -> list[str]:
    """The command :func:`prefetch_runs` runs."""
    return [sys.executable, "-m", "rlbook.book.prefetch", *([] if jobs is None else ["--jobs", str(jobs)])]


def prefetch_fingerprint() -> str:
    """A hash of what the cached runs depend on that can be read without importing torch.

    rlbook's source files (a superset of the modules in a run's cache key)
    and the ``RLBOOK_CACHE`` setting. Deleting cache entries by hand does not
    change it: the pages then retrain those runs themselves.
    """
    text = json.dumps([os.environ.get("RLBOOK_CACHE", ""), package_hash()])
    return hashlib.sha256(text.encode()).hexdigest()[:16]
