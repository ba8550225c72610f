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
    if _in_notebook() and os.environ.get("RLBOOK_BUILDING") != "1":
        return True
    return sys.stderr.isatty()


def _in_notebook() -> bool:
    """True inside a running Jupyter kernel (not merely when ipykernel was imported)."""
    shell = sys.modules.get("IPython")
    ip = shell.get_ipython() if shell is not None and hasattr(shell, "get_ipython") else None
    return ip is not None and type(ip).__name__ == "ZMQInteractiveShell"


def progress(items: Iterable, desc: str = "", total: int | None = None) -> Iterable:
    """``items`` wrapped in a tqdm bar when watched, else unchanged."""
    if not _watched():
        return items
    from tqdm.auto import tqdm

    return tqdm(items, desc=desc, total=total, leave=False, dynamic_ncols=True)
