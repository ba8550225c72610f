"""The book's package as a wheel beside the notebooks, and the first cell that tells a reader to install it.

Used by ``rlbook build`` (both backends) and by the Quarto pre-render step
(:mod:`rlbook.publish.prerender`). A notebook downloaded from the site runs
on ``rlbook``, which a reader without the repository does not have; the site
ships the package as ``notebooks/rlbook-<version>-py3-none-any.whl`` and
every notebook starts with :func:`requirement_cell`, which, when ``rlbook``
cannot be imported, stops "Run All" with one line that names the wheel and
where it is, instead of a traceback on the first import.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SOURCES = ("pyproject.toml", "README.md", "rlbook")
"""What the wheel is built from, copied out of the repository so the build leaves nothing in it."""

PACKAGE_ROOT = Path(__file__).resolve().parents[2]
"""The repository that this ``rlbook`` comes from, which the book's wheel is built from."""


def package_version(root: Path) -> str:
    """The ``[project]`` version in ``root/pyproject.toml``; ValueError if it has none."""
    text = (Path(root) / "pyproject.toml").read_text(encoding="utf-8")
    project = text.split("[project]", 1)[-1].split("\n[", 1)[0]
    found = re.search(r'^version\s*=\s*"([^"]+)"', project, re.MULTILINE)
    if not found:
        raise ValueError("pyproject.toml gives the project no version")
    return found.group(1)


def wheel_version(root: Path) -> str:
    """The version of the book's wheel: the project's, with the :func:`source_key` as its local label.

    A wheel built from other code has another version, so ``pip install`` over
    an earlier download replaces it instead of answering "already installed".
    """
    return f"{package_version(root)}+{source_key(root)}"


def wheel_name(root: Path) -> str:
    """The file name of the book's wheel: ``rlbook-<version>+<source key>-py3-none-any.whl``."""
    return f"rlbook-{wheel_version(root)}-py3-none-any.whl"


def build_wheel(root: Path, folder: Path) -> Path:
    """Build the book's wheel into ``folder`` (pip, no network, no build isolation) and return its path.

    The repository's ``pyproject.toml``, ``README.md`` and ``rlbook/`` are
    copied to a temporary folder first, so setuptools' ``build/`` and
    ``*.egg-info`` never land in the checkout. RuntimeError with pip's last
    lines if it fails.
    """
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as temp:
        source = Path(temp) / "src"
        source.mkdir()
        for name in SOURCES:
            path = Path(root) / name
            if path.is_dir():
                shutil.copytree(path, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
            else:
                shutil.copy2(path, source / name)
        pyproject = source / "pyproject.toml"
        text = pyproject.read_text(encoding="utf-8")
        pyproject.write_text(
            text.replace(f'version = "{package_version(root)}"', f'version = "{wheel_version(root)}"', 1),
            encoding="utf-8",
        )
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "wheel",
                "--no-deps",
                "--no-build-isolation",
                "--no-index",
                "--quiet",
                "-w",
                temp,
                str(source),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        built = Path(temp) / wheel_name(root)
        if done.returncode or not built.is_file():
            tail = " | ".join((done.stdout + done.stderr).strip().splitlines()[-3:])
            raise RuntimeError(f"building the rlbook wheel failed: {tail}")
        target = folder / built.name
        shutil.copy2(built, target)
    return target


def source_key(root: Path = PACKAGE_ROOT) -> str:
    """A hash of everything the wheel is built from (:data:`SOURCES` under ``root``, caches left out); also part of
    the key under which a page's execution is reused (:mod:`rlbook.publish.frozen`)."""
    digest = hashlib.sha256()
    for name in SOURCES:
        path = Path(root) / name
        if path.is_dir():
            files = sorted(p for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
        else:
            files = [path] if path.is_file() else []  # an installed package has no pyproject.toml beside it
        for file in files:
            digest.update(file.relative_to(root).as_posix().encode() + b"\0" + file.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def digest(path: Path) -> str:
    """The SHA-256 of a file, in hex."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def sound(wheel: Path) -> bool:
    """Whether a kept wheel is whole: its checksum file (``<wheel>.sha256``) matches and it opens as a zip."""
    import zipfile

    checksum = wheel.with_name(wheel.name + ".sha256")
    try:
        if not checksum.is_file() or checksum.read_text().strip() != digest(wheel):
            return False
        with zipfile.ZipFile(wheel) as archive:
            return archive.testzip() is None
    except (OSError, zipfile.BadZipFile):
        return False


def book_wheel(folder: Path) -> Path:
    """The wheel of the ``rlbook`` that is running, copied into ``folder``; returns its path there.

    Built once per version of the package's files (:func:`source_key`) and kept in the run cache
    (``wheels/<key>/``) with its SHA-256, so the book's builds and tests copy it rather than build it
    again. A kept wheel that is damaged (truncated, edited, without its checksum) is rebuilt with a
    one-line notice, never published; the copy in ``folder`` is checked against the checksum too.
    """
    import warnings

    from rlbook.runs import cache_root

    kept = cache_root() / "wheels" / source_key()
    wheel = kept / wheel_name(PACKAGE_ROOT)
    if wheel.exists() and not sound(wheel):
        warnings.warn(f"the kept wheel {wheel} is damaged; building it again", stacklevel=2)
        wheel.unlink()
    if not wheel.is_file():
        kept.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=kept) as temp:
            built = build_wheel(PACKAGE_ROOT, Path(temp))
            Path(temp, "sum").write_text(digest(built) + "\n")
            os.replace(Path(temp, "sum"), wheel.with_name(wheel.name + ".sha256"))
            os.replace(built, wheel)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / wheel.name
    shutil.copy2(wheel, target)
    if digest(target) != wheel.with_name(wheel.name + ".sha256").read_text().strip():
        raise RuntimeError(f"the copy of the book's wheel in {folder} does not match its checksum")
    return target


def install_line(wheel: str, extra: str | None = None) -> str:
    """The one line a notebook prints when ``rlbook`` is missing: what to install and where to get it."""
    target = f'"{wheel}[{extra}]"' if extra else wheel
    return (
        f"This notebook needs the book's package rlbook: download {wheel} from the notebooks/ folder of the "
        f"book's website (beside this notebook), then run pip install {target} and restart the kernel "
        f'(or, in a clone of the book\'s repository: pip install -e ".{"[" + extra + "]" if extra else ""}")'
    )


def requirement_cell(wheel: str, extra: str | None = None) -> str:
    """The source of a notebook's first cell: nothing when ``rlbook`` imports, else :func:`install_line`.

    The cell raises an exception whose ``_render_traceback_`` (IPython's hook
    for showing an error) is that one line, so Jupyter shows the line, not a
    traceback, and "Run All" stops there.
    """
    needed = wheel.removeprefix("rlbook-").removesuffix("-py3-none-any.whl")
    return (
        f"# This notebook runs on the book's package, rlbook {needed}. If it is not installed, or another\n"
        "# build of it is, this cell says where to get it and stops.\n"
        "import importlib.metadata\n"
        "import importlib.util\n\n\n"
        "class RlbookMissing(Exception):\n"
        "    def _render_traceback_(self):\n"
        "        return [str(self)]\n\n\n"
        'if importlib.util.find_spec("rlbook") is None:\n'
        f"    raise RlbookMissing({install_line(wheel, extra)!r})\n"
        'installed = importlib.metadata.version("rlbook")\n'
        f'if "+" in installed and installed != {needed!r}:  # another wheel of the book; a clone has no "+"\n'
        f'    raise RlbookMissing(f"rlbook {{installed}} is installed; this notebook was built with {needed}. "\n'
        f"                        {install_line(wheel, extra)!r})"
    )
