"""Progress bars that appear only where someone is watching.

Long work (training, building the book) shows a tqdm bar when attached to a
terminal or a notebook and stays quiet otherwise (tests, CI, logs). Set
``RLBOOK_PROGRESS=0`` to silence it or ``=1`` to force it.
"""
from __future__ import annotations

import os
import sys
from collections.abc import Iterable


def _watched() -> bool:
    forced = os.environ.get("RLBOOK_PROGRESS")
    if forced is not None:
        return forced not in ("0", "", "false", "no")
    if "ipykernel" in sys.modules and os.environ.get("RLBOOK_BUILDING") != "1":
        return True
    return sys.stderr.isatty()


def progress(items: Iterable, desc: str = "", total: int | None = None) -> Iterable:
    """``items`` wrapped in a tqdm bar when watched, else unchanged."""
    if not _watched():
        return items
    from tqdm.auto import tqdm

    return tqdm(items, desc=desc, total=total, leave=False, dynamic_ncols=True)
