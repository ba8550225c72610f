"""``rlbook build``: execute every chapter in a fresh kernel and turn the book into a website in ``_book/``.

Used for the whole book. Each page listed in ``_quarto.yml`` is read as a
notebook (jupytext's R Markdown reader keeps Quarto's ``#|`` cell options),
executed in a fresh Python kernel whose working directory is the page's
folder, two pages at a time by default (:mod:`rlbook.publish.notebooks`, on
:mod:`rlbook.publish.execute`), and written to
``_build/executed/<name>.ipynb``, which the website is rendered from. The
notebooks a reader opens in Jupyter are written from them to
``_build/notebooks/<name>.ipynb`` (:mod:`rlbook.publish.jupyter`). Inline
expressions (```` `{python} expr` ````) in the prose are evaluated in the
same kernel at the point where they appear and replaced by ``str(value)``.
A whole-book build first trains the runs the pages read
(:mod:`rlbook.publish.runs_ahead`).

The website is then rendered by Quarto when it is on PATH, or else by pandoc
(:mod:`rlbook.publish.render`). The new site is built beside the old one and
swapped in only when every page succeeded and no page has a hole
(:mod:`rlbook.publish.holes`), so a failing cell leaves the previous
``_book/`` as it was. This module holds the build's steps in order
(:func:`build_book`) and the choices it reads from the command line.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import nbformat

from rlbook.publish.config import Page, book_pages, read_config
from rlbook.publish.execute import CellFailure
from rlbook.publish.extras import unmet_needs
from rlbook.publish.inputs import check_sources
from rlbook.publish.notebooks import DEFAULT_JOBS, execute_pages, write_student_notebooks
from rlbook.publish.prose import chapter_problems
from rlbook.publish.render import pandoc_path, render_pandoc, render_quarto
from rlbook.publish.runs_ahead import prefetch_runs
from rlbook.publish.site import output_href

BACKENDS = ("auto", "quarto", "pandoc")


def project_root() -> Path:
    """The book's root: the nearest folder above the working directory that holds ``_quarto.yml``,
    else the repository this package sits in."""
    for folder in (Path.cwd(), *Path.cwd().parents):
        if (folder / "_quarto.yml").is_file():
            return folder
    return Path(__file__).resolve().parents[2]


def choose_backend(backend: str) -> str:
    """ "quarto" or "pandoc": ``auto`` takes Quarto when the ``quarto`` command is on PATH."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}: choose one of {', '.join(BACKENDS)}")
    if backend == "auto":
        return "quarto" if shutil.which("quarto") else "pandoc"
    if backend == "quarto" and not shutil.which("quarto"):
        raise ValueError(
            "backend 'quarto' asked for, but the quarto command is not on PATH "
            "(install it from conda-forge, see environment.yml, or use --backend pandoc)"
        )
    return backend


def select_pages(pages: list[Page], only: str | None) -> list[Page]:
    """The pages to execute: all of them, or the one named by ``only`` (its stem, file name, path or number prefix)."""
    if not only:
        return pages
    wanted = only.strip().removesuffix(".qmd")
    chosen = [p for p in pages if wanted in (p.stem, p.source.removesuffix(".qmd"))]
    chosen = chosen or [p for p in pages if p.stem.split("-")[0] in (wanted, wanted.zfill(2))]
    if len(chosen) != 1:
        names = ", ".join(p.stem for p in pages)
        how_many = "no" if not chosen else "more than one"
        raise ValueError(f"--only {only!r} names {how_many} page; the pages are: {names}")
    return chosen


def build_book(
    root: Path | None = None,
    backend: str = "auto",
    only: str | None = None,
    out: Callable[[str], None] = print,
    jobs: int | None = None,
    prefetch: bool = False,
    strict: bool = False,
    fresh: bool = False,
) -> int:
    """Execute the book's pages and write the website to ``root/_book``; return the exit code.

    A law of the book that does not hold on this machine's runs is shown at
    its sentence and listed in the summary (:func:`law_notices`), and the
    book is published; with ``strict`` (``make test``, CI) its page fails
    instead, as when ``RLBOOK_STRICT`` is set.

    0: built. 1: a cell failed (its page, cell and traceback are printed and
    the previous ``_book/`` is left intact). 2: the request cannot be met (an
    unknown page for ``only``, Quarto asked for but missing, a page that
    ``_quarto.yml`` lists is missing). With ``only``, that page alone is
    executed; the other pages reuse their notebooks from the last build
    (``_build/executed``), or are shown without outputs when there is none.
    ``jobs`` pages (default :data:`rlbook.publish.notebooks.DEFAULT_JOBS`) are executed at once,
    each in its own kernel. With ``prefetch`` (``rlbook build`` sets it), a
    whole-book build also trains the book's missing runs before the pages,
    ``jobs`` at a time or, by default, one per usable core
    (:func:`rlbook.publish.runs_ahead.prefetch_runs`). A page whose last execution read the same page text,
    package, run cache, environment and libraries is reused rather than executed again
    (:mod:`rlbook.publish.frozen`); ``fresh`` executes every selected page.
    """
    started = time.perf_counter()
    if jobs is not None and jobs < 1:
        out(f"rlbook build: --jobs must be at least 1, got {jobs}")
        return 2
    os.environ["RLBOOK_BUILDING"] = "1"  # the kernels inherit it: no progress bars in the pages
    if os.environ.get("RLBOOK_CACHE"):  # the kernels run in the pages' folders: a relative cache would split
        os.environ["RLBOOK_CACHE"] = os.path.abspath(os.environ["RLBOOK_CACHE"])
    if strict:
        os.environ[STRICT] = "1"
    if jobs != 1:
        # Idle OpenMP threads sleep instead of spinning, so that two kernels do
        # not steal each other's cores (measured: two runs side by side took
        # 65 s spinning and 12 s sleeping; the numbers are the same either way).
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    root = Path(root or project_root()).resolve()
    if (root / "rlbook" / "__init__.py").is_file():
        # The kernels run in the pages' folders; they import the rlbook of this checkout, not another one installed.
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(root), os.environ.get("PYTHONPATH")) if p)
    try:
        chosen = choose_backend(backend)
        pages = book_pages(root)
        unmet = unmet_needs(root, pages)
        if unmet and (chosen == "quarto" or only):
            wanted = select_pages(pages, only)[0] if only else None
            blocking = [u for u in unmet if chosen == "quarto" or u.page == wanted]
            if blocking:
                raise ValueError(
                    blocking[0].line()
                    + (
                        "; install it, or build with --backend pandoc, which leaves the page out"
                        if chosen == "quarto"
                        else ""
                    )
                )
        for need in unmet:
            out(f"rlbook build: left out of this build: {need.line()}")
        pages = [page for page in pages if page not in {need.page for need in unmet}]
        selected = select_pages(pages, only)
        check_sources(root, read_config(root), pages, pandoc_path())
    except (ValueError, RuntimeError) as err:
        out(f"rlbook build: {err}")
        return 2
    executed_dir, notebooks_dir = root / "_build" / "executed", root / "_build" / "notebooks"
    executed_dir.mkdir(parents=True, exist_ok=True)
    never_run = frozenset(
        output_href(p) for p in pages if p not in selected and not (executed_dir / f"{p.stem}.ipynb").is_file()
    )
    if prefetch and only is None:
        prefetch_runs(root, jobs, out)
    if chosen == "quarto":  # Quarto executes each page once, in its own kernel (keep-ipynb, post-render step)
        code = render_quarto(
            root, selected[0] if only else None, notebooks_dir, out, lambda: readable(selected, executed_dir, out)
        )
    else:
        try:
            notebooks = execute_pages(root, pages, selected, executed_dir, out, jobs or DEFAULT_JOBS, fresh)
            students = write_student_notebooks(root, pages, notebooks, notebooks_dir)
        except CellFailure as failure:
            out(failure.report())
            out("The previous _book/ was left as it was.")
            return 1
        except (ValueError, RuntimeError) as err:
            out(f"rlbook build: the notebooks for Jupyter: {err}")
            out("The previous _book/ was left as it was.")
            return 1
        if not reader_checks(selected, notebooks, out):
            return 1
        code = render_pandoc(root, pages, notebooks, out, never_run, students)
    if code == 0:
        out(f"book written to {root / '_book' / 'index.html'} ({chosen}) in {time.perf_counter() - started:.1f} s")
    return code


def reader_checks(
    selected: list[Page], notebooks: dict[str, nbformat.NotebookNode], out: Callable[[str], None]
) -> bool:
    """Whether the executed ``selected`` pages may be published: the laws that failed are listed
    (:func:`law_notices`, published all the same) and a problem in what the reader reads
    (:func:`rlbook.publish.prose.chapter_problems`) stops the build, each printed."""
    for line in law_notices(selected, notebooks):
        out(line)
    problems = chapter_problems([(p.source, notebooks[p.stem]) for p in selected if p.number is not None], out)
    for problem in problems:
        out(f"  prose: {problem}")
    if problems:
        out(
            f"The book was not published: {len(problems)} problem(s) in what the reader reads. "
            "The previous _book/ was left as it was."
        )
    return not problems


def readable(selected: list[Page], executed_dir: Path, out: Callable[[str], None]) -> bool:
    """:func:`reader_checks` on the notebooks Quarto executed the ``selected`` pages in, which its post-render
    step wrote to ``executed_dir`` (:mod:`rlbook.publish.postrender`)."""
    notebooks = {p.stem: nbformat.read(executed_dir / f"{p.stem}.ipynb", as_version=4) for p in selected}
    return reader_checks(selected, notebooks, out)


STRICT = "RLBOOK_STRICT"
"""Set by ``--strict`` for the page kernels: a law that fails stops its page (:mod:`rlbook.book.claims`)."""

NOTICE = re.compile(r'\[((?:[^\]\\]|\\.)*)\]\{\.law-notice law="([^"]+)"\}')
"""The notice a page shows after a law that did not hold (:func:`rlbook.book.claims.notice`)."""


def law_notices(pages: list[Page], notebooks: dict[str, nbformat.NotebookNode]) -> list[str]:
    """The build's summary of the laws that did not hold on this machine's runs: a line per notice, by page.

    Nothing when every law held. The pages are published all the same, each
    notice at its sentence; ``--strict`` fails the build instead.
    """
    found = []
    for page in pages:
        nb = notebooks.get(page.stem)
        for cell in nb.cells if nb else []:
            if cell.cell_type == "markdown":
                found += [(page.source, m.group(2), m.group(1).replace("\\", "")) for m in NOTICE.finditer(cell.source)]
    if not found:
        return []
    lines = [f"rlbook build: {len(found)} law(s) of the book did not hold on this machine's runs; their pages say so:"]
    return lines + [f"  {source}: {name}: {text}" for source, name, text in found]
