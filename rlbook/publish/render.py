"""The website from the executed notebooks, by pandoc or by Quarto, swapped in for ``_book/`` only whole.

Used by ``rlbook build`` (:func:`rlbook.publish.build.build_book`) once
every page has executed. The new site is written beside the old one and
replaces it (:func:`swap_in`) only when every page is there, every citation
resolved and no page has a hole (:func:`publishable`, on
:mod:`rlbook.publish.holes`); anything else leaves the previous ``_book/`` as
it was. The pandoc site itself is :mod:`rlbook.publish.site`; Quarto runs
the book's pre-render step (:mod:`rlbook.publish.prerender`), which copies the
notebooks, the book's wheel and the web workshop into its output folder, and
its post-render step (:mod:`rlbook.publish.postrender`), which writes the
notebooks from Quarto's own execution of the pages, gives the figures their
dark variant and drops the TeX of formulas from the search index.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from rlbook.publish.config import Page, read_config
from rlbook.publish.holes import site_holes
from rlbook.publish.site import output_href, render_site
from rlbook.publish.wheel import book_wheel

CITEPROC_MISSING = re.compile(r"Citeproc: citation (\S+) not found")
"""The warning pandoc's citeproc gives for a citation key that is not in the bibliography."""


def pandoc_path() -> str:
    """The pandoc binary: the one the ``pypandoc-binary`` wheel ships, else ``pandoc`` on PATH."""
    try:
        import pypandoc

        return pypandoc.get_pandoc_path()
    except (ImportError, OSError):
        found = shutil.which("pandoc")
        if not found:
            raise RuntimeError("pandoc is not available: install pypandoc-binary") from None
        return found


def render_pandoc(
    root: Path,
    pages: list[Page],
    notebooks: dict,
    out: Callable[[str], None],
    never_run: frozenset[str],
    downloads: dict,
) -> int:
    """Render the site beside the old one and swap it in only when every page is there, every citation
    resolved and no page has a hole (:func:`publishable`). ``downloads`` are the notebooks for Jupyter.

    Anything that stops the render (pandoc failing, a path outside the book,
    a full disk) is one line, exit 1, and the previous ``_book/`` as it was.
    """
    staging = Path(tempfile.mkdtemp(prefix="site-", dir=root / "_build"))
    unknown: list[str] = []

    def watch(line: str) -> None:  # citeproc only warns about a key it cannot find, in a cell's output say
        found = CITEPROC_MISSING.search(line)
        if found and found.group(1) not in unknown:
            unknown.append(found.group(1))
        out(line)

    try:
        missing = render_site(root, pages, notebooks, staging, read_config(root), pandoc_path(), watch, downloads)
        book_wheel(staging / "notebooks")
        for label in sorted(set(missing)):
            out(f"  warning: @{label} refers to no label in the book")
        absent = [output_href(page) for page in pages if not (staging / output_href(page)).is_file()]
        if unknown:
            raise ValueError(
                f"citation @{unknown[0]} is not in the bibliography (pandoc found it in the rendered pages)"
            )
        if absent:
            raise ValueError(
                f"the new site lacks {absent[0]}" + (f" and {len(absent) - 1} more pages" if absent[1:] else "")
            )
        if not publishable(staging, out, never_run):
            return 1
        swap_in(staging, root / "_book")
    except (RuntimeError, ValueError, OSError) as err:
        out(f"rlbook build: {err}")
        out("The previous _book/ was left as it was.")
        return 1
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return 0


def publishable(site: Path, out: Callable[[str], None], never_run: frozenset[str] = frozenset()) -> bool:
    """Whether no page of the new site has a hole (:mod:`rlbook.publish.holes`); each hole is printed.

    ``never_run`` are the pages shown without outputs because no build has executed them yet.
    """
    holes = site_holes(site, never_run)
    for hole in holes:
        out(f"  hole: {hole}")
    if holes:
        out(f"The book was not published: {len(holes)} hole(s) in its pages. The previous _book/ was left as it was.")
    return not holes


KERNEL_WARNING = "Kernel is running over TCP without encryption"
"""What ipykernel logs when it starts without CurveZMQ keys, as the kernels Quarto's Jupyter engine starts do."""


def render_quarto(
    root: Path, page: Page | None, notebooks_dir: Path, out: Callable[[str], None], check: Callable[[], bool]
) -> int:
    """``quarto render`` with this Python (QUARTO_PYTHON), which executes each page once, in its own kernel.

    Quarto's pre-render step (:mod:`rlbook.publish.prerender`) copies the
    notebooks and the workshop in, and its post-render step
    (:mod:`rlbook.publish.postrender`) writes each rendered page's executed
    notebook to ``_build/executed/`` and its notebook for Jupyter. ``check``
    then reads those (:func:`rlbook.publish.build.readable`): a whole-book
    render that fails it, or that has a hole, is discarded and the previous
    ``_book/`` kept. One page (``page``) is rendered into ``_book/`` in
    place, as Quarto renders a single file, so there ``check`` can only
    report. Quarto's output is passed to ``out`` line by line, except the
    kernels' warning that they talk over TCP without encryption
    (:data:`KERNEL_WARNING`), which is counted and explained once.
    """
    env = {**os.environ, "QUARTO_PYTHON": sys.executable}
    if page is not None:
        command, target = ["quarto", "render", page.source], root / "_book"
    else:
        target = Path(tempfile.mkdtemp(prefix="quarto-", dir=root / "_build"))
        command = ["quarto", "render", "--output-dir", target.relative_to(root).as_posix()]
    code, warned = run_quarto(command, root, env, out)
    if warned:
        out(
            f"({warned} kernel start(s) logged ipykernel's warning that the kernel runs over TCP without "
            "encryption: Quarto's Jupyter engine gives its kernels no CurveZMQ keys, and the traffic stays on this "
            "machine's loopback address; rlbook's pandoc backend gives its kernels keys)"
        )
    missing = [p.name for p in sorted(notebooks_dir.glob("*.ipynb")) if not (target / "notebooks" / p.name).is_file()]
    if not code and missing:
        out(f"rlbook build: the pre-render step did not put {missing[0]} into the site's notebooks/")
        code = 1
    if code:
        out(f"quarto render failed (exit {code}); the previous _book/ was left as it was.")
        if page is None:
            shutil.rmtree(target, ignore_errors=True)
        return 1
    if not check():
        if page is None:
            shutil.rmtree(target, ignore_errors=True)
        return 1
    if page is None:
        if not publishable(target, out):
            shutil.rmtree(target, ignore_errors=True)
            return 1
        swap_in(target, root / "_book")
    return 0


def run_quarto(command: list[str], root: Path, env: dict, out: Callable[[str], None]) -> tuple[int, int]:
    """Run Quarto in ``root``, its output to ``out`` but for :data:`KERNEL_WARNING` lines; (exit code, those lines)."""
    process = subprocess.Popen(
        command, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace"
    )
    assert process.stdout is not None  # stdout=PIPE
    warned = 0
    for line in process.stdout:
        if KERNEL_WARNING in line:
            warned += 1
        else:
            out(line.rstrip("\n"))
    return process.wait(), warned


def swap_in(new: Path, final: Path) -> None:
    """Replace the folder ``final`` by ``new`` with two renames, so that a reader never sees a half-built site.

    ``final`` may be a symbolic link to a folder (the link is kept and its
    folder replaced) and may lie on another filesystem than ``new`` (``new``
    is then copied beside it first, since a rename cannot cross devices).
    The new folder gets the permissions of any new folder (``0o777`` less the
    umask), not the private ``0o700`` of a temporary one, so that a web
    server or another user can read the site. The old folder is parked
    beside the new one until it is deleted.
    """
    target = final.resolve() if final.is_symlink() else final
    target.parent.mkdir(parents=True, exist_ok=True)
    if new.stat().st_dev != target.parent.stat().st_dev:
        beside = Path(tempfile.mkdtemp(prefix=f".{target.name}-new-", dir=target.parent))
        shutil.copytree(new, beside, dirs_exist_ok=True)
        shutil.rmtree(new, ignore_errors=True)
        new = beside
    umask = os.umask(0)
    os.umask(umask)
    new.chmod(0o777 & ~umask)
    old = target.with_name(f".{target.name}.old-{os.getpid()}")
    shutil.rmtree(old, ignore_errors=True)
    if target.exists():
        target.rename(old)
    new.rename(target)
    shutil.rmtree(old, ignore_errors=True)
