"""Reusing a page's executed notebook when nothing its execution reads has changed since the last build.

Used by :func:`rlbook.publish.notebooks.execute_pages` (``rlbook build``).
Executing a page reads its own text, the ``rlbook`` package its kernel
imports, the book's configuration, the runs and facts in the run cache, the
environment and the installed libraries. :func:`execution_key` hashes all of them; the key is
written beside the executed notebook (``_build/executed/<name>.key``), and
a later build whose key for the page is the same reuses that notebook
instead of starting a kernel, as Quarto's ``freeze`` does. ``rlbook build
--fresh`` executes every page regardless.

The key is conservative: any new or replaced entry in the run cache, any
edit to any file of the package or to the book's configuration and any
change of a library's version execute every page again. A page that reads a file outside its own text,
the package and the run cache would escape it; none of the book's pages
does (their code imports ``rlbook`` and reads its facts).
"""

from __future__ import annotations

import hashlib
import os
import platform
import sys
from importlib import metadata
from pathlib import Path

import nbformat

import rlbook
from rlbook.publish.wheel import source_key

KEY_SUFFIX = ".key"
"""The file beside ``<name>.ipynb`` that holds the key the notebook was executed under."""

_PASSING = (".lock", ".holder")
"""Endings of the run cache's files that come and go while runs are read or trained (never an entry)."""
_SILENT = ("RLBOOK_PROGRESS",)
"""The book's variables that change no page: progress bars, which a page's kernel never draws in a build."""
BOOK_FILES = ("_quarto.yml", "references.bib")
"""The book's own files beside its pages that a page's execution may read (its configuration and its
bibliography): their text enters every page's key, beside the package's sources."""
_UNREAD = ("wheels",)
"""Folders of the run cache that no page's execution reads: the book's wheels (:mod:`rlbook.publish.wheel`),
written after the pages have executed."""


def kernel_package(root: Path) -> Path:
    """The ``rlbook`` folder a page's kernel imports: the checkout's at ``root`` when it has one (the build puts
    ``root`` first on the kernels' ``PYTHONPATH``), else the one this process imported."""
    here = root / "rlbook"
    return here if (here / "__init__.py").is_file() else Path(rlbook.__file__).resolve().parent


def cache_listing(folder: Path) -> str:
    """The run cache's entries as one text: each entry's name and the time it was written, one a line.

    Entries are renamed into place whole and never changed (:mod:`rlbook.runs.cache`), so a new, deleted or
    replaced entry changes the listing; the locks, their holders, the half-written temporaries and the wheels
    (:data:`_UNREAD`) do not count.
    """
    if not folder.is_dir():
        return ""
    lines = []
    for entry in os.scandir(folder):
        name = entry.name
        if name.endswith(_PASSING) or ".tmp-" in name or name.startswith(".") or name in _UNREAD:
            continue
        lines.append(f"{name} {entry.stat(follow_symlinks=False).st_mtime_ns}")
    return "\n".join(sorted(lines))


def machine_text() -> str:
    """The processor the kernels compute on: its architecture, model and flags (the flags pick its kernels)."""
    model = flags = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                key, _, value = line.partition(":")
                if key.strip() == "model name" and not model:
                    model = value.strip()
                elif key.strip() == "flags" and not flags:
                    flags = value.strip()
    except OSError:  # not Linux: the platform's words stand in
        model = platform.processor()
    return f"{platform.machine()} {model} {flags} {os.cpu_count()}"


def libraries_text() -> str:
    """The Python that runs the kernels and every installed distribution, with its version, one a line."""
    names = sorted(f"{d.metadata['Name']}=={d.version}" for d in metadata.distributions() if d.metadata["Name"])
    return "\n".join([sys.executable, sys.version, *names])


def environment_text() -> str:
    """The environment variables that can change what a page computes or prints: the book's own
    (``RLBOOK_*``: the draw, the cache, strictness; not :data:`_SILENT`) and the numerical libraries' (kernels
    and threads)."""
    numeric = ("ATEN_", "MKL_", "ONEDNN_", "OMP_NUM_THREADS", "OPENBLAS_", "PYTHONHASHSEED")
    chosen = sorted(
        (k, v) for k, v in os.environ.items() if (k.startswith("RLBOOK_") and k not in _SILENT) or k.startswith(numeric)
    )
    return "\n".join(f"{k}={v}" for k, v in chosen)


def execution_key(text: str, figures: str | None, shared: str) -> str:
    """The key a page is executed under: its text, the figures' format and ``shared``
    (:func:`shared_inputs`, what every page of one build reads alike)."""
    digest = hashlib.sha256()
    for part in (text, figures or "", shared):
        digest.update(part.encode() + b"\0")
    return digest.hexdigest()


def shared_inputs(root: Path) -> str:
    """What every page of a build at ``root`` reads alike, as one text: the package's sources
    (:func:`rlbook.publish.wheel.source_key`: the package, ``pyproject.toml`` and the README), the book's files
    (:data:`BOOK_FILES`), the run cache's entries, the environment, the libraries and the machine."""
    package = kernel_package(root)
    # The kernel's cache, which is this process's unless root holds an rlbook of its own.
    cache = Path(os.environ.get("RLBOOK_CACHE") or package.parent / ".rlbook-cache")
    files = [(root / name).read_text(encoding="utf-8") if (root / name).is_file() else "" for name in BOOK_FILES]
    return "\n\n".join(
        [source_key(package.parent), *files, cache_listing(cache), environment_text(), libraries_text(), machine_text()]
    )


def reusable(folder: Path, stem: str, key: str) -> nbformat.NotebookNode | None:
    """The executed notebook ``folder/<stem>.ipynb`` if it was executed under ``key``, else None."""
    notebook, saved = folder / f"{stem}.ipynb", folder / f"{stem}{KEY_SUFFIX}"
    try:
        if saved.read_text(encoding="utf-8").strip() != key:
            return None
        return nbformat.read(notebook, as_version=4)
    except (OSError, ValueError):  # never executed, or its notebook is gone or unreadable: execute it
        return None


def record(folder: Path, stem: str, key: str) -> None:
    """Note that ``folder/<stem>.ipynb`` was just executed under ``key`` (written whole, after the notebook)."""
    saved = folder / f"{stem}{KEY_SUFFIX}"
    temporary = saved.with_name(f".{saved.name}.tmp-{os.getpid()}")
    temporary.write_text(key + "\n", encoding="utf-8")
    temporary.replace(saved)


def forget(folder: Path, stem: str) -> None:
    """Drop the key of ``folder/<stem>.ipynb`` before it is executed again, so that a build stopped midway never
    leaves an old key beside a new notebook (or the other way round)."""
    (folder / f"{stem}{KEY_SUFFIX}").unlink(missing_ok=True)
