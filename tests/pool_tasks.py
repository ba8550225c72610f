"""Tasks for a spawned worker pool in the tests of rlbook.core.processes (a spawned worker imports them by name)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from rlbook.core import processes


def long_task(started: str) -> None:
    """Mark that the task started, then work for a minute as one task of a pool worker."""
    with processes.worker_task():
        Path(started).write_text(str(os.getpid()))
        time.sleep(60)


def marking_task(marker: str) -> None:
    """Leave a file behind: proof that the worker took this task."""
    with processes.worker_task():
        Path(marker).write_text("ran")
