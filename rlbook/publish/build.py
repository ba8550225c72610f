"""``rlbook build``: execute every chapter in a fresh kernel and turn the book into a website in ``_book/``.

Used for the whole book. Each page listed in ``_quarto.yml`` is read as a
notebook (jupytext's R Markdown reader keeps Quarto's ``#|`` cell options),
executed with nbclient in a fresh Python kernel whose working directory is
the page's folder (two pages at a time by default, each in its own kernel, by
:mod:`rlbook.publish.execute`),
and written to ``_build/executed/<name>.ipynb``, which the website is
rendered from. The notebooks a reader opens in Jupyter are written from them
to ``_build/notebooks/<name>.ipynb`` (:mod:`rlbook.publish.jupyter`). Inline
expressions (```` `{python} expr` ````) in the prose are evaluated in the
same kernel at the point where they appear and replaced by ``str(value)``.

The website is then rendered by Quarto when it is on PATH, or else by pandoc
(:mod:`rlbook.publish.site`). Quarto runs the book's pre-render step
(:mod:`rlbook.publish.prerender`), which copies the notebooks, the book's wheel
and the web workshop into its output folder. The new site is built beside the
old one and swapped in only when every page succeeded and no page has a hole
(:mod:`rlbook.publish.holes`), so a failing cell leaves the previous ``_book/``
as it was.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

import nbformat

from rlbook.core import processes
from rlbook.core.source import package_hash
from rlbook.publish.config import Page, book_pages, read_config
from rlbook.publish.execute import CellFailure, execute_notebook, qmd_to_notebook
from rlbook.publish.extras import unmet_needs
from rlbook.publish.holes import site_holes
from rlbook.publish.inputs import check_sources
from rlbook.publish.jupyter import student_notebooks
from rlbook.publish.prose import chapter_problems
from rlbook.publish.site import output_href, render_site
from rlbook.publish.wheel import book_wheel

BACKENDS = ("auto", "quarto", "pandoc")
CITEPROC_MISSING = re.compile(r"Citeproc: citation (\S+) not found")

DEFAULT_JOBS = 2
"""Pages executed at once unless ``--jobs`` says otherwise. A page's operations
are too small to split well over cores, so two kernels side by side finish the
book sooner. (The runs trained ahead of the pages go one per usable core:
:func:`rlbook.runs.prefetch.usable_cores`.)"""


def project_root() -> Path:
    """The book's root: the nearest folder above the working directory that holds ``_quarto.yml``,
    else the repository this package sits in."""
    for folder in (Path.cwd(), *Path.cwd().parents):
        if (folder / "_quarto.yml").is_file():
            return folder
    return Path(__file__).resolve().parents[2]


def figure_format(config: dict) -> str | None:
    """The format of the book's figures: ``_quarto.yml``'s ``format: html: fig-format`` (Quarto's option), or None."""
    value = ((config.get("format") or {}).get("html") or {}).get("fig-format")
    return str(value) if value else None


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


def build_book(
    root: Path | None = None,
    backend: str = "auto",
    only: str | None = None,
    out: Callable[[str], None] = print,
    jobs: int | None = None,
    prefetch: bool = False,
    strict: bool = False,
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
    ``jobs`` pages (default :data:`DEFAULT_JOBS`) are executed at once,
    each in its own kernel. With ``prefetch`` (``rlbook build`` sets it), a
    whole-book build also trains the book's missing runs before the pages,
    ``jobs`` at a time or, by default, one per usable core
    (:func:`prefetch_runs`).
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
    try:
        notebooks = execute_pages(root, pages, selected, executed_dir, out, jobs or DEFAULT_JOBS)
        students = write_student_notebooks(root, pages, notebooks, notebooks_dir)
    except CellFailure as failure:
        out(failure.report())
        out("The previous _book/ was left as it was.")
        return 1
    except (ValueError, RuntimeError) as err:
        out(f"rlbook build: the notebooks for Jupyter: {err}")
        out("The previous _book/ was left as it was.")
        return 1
    for line in law_notices(selected, notebooks):
        out(line)
    problems = chapter_problems([(p.source, notebooks[p.stem]) for p in selected if p.number is not None], out)
    if problems:
        for problem in problems:
            out(f"  prose: {problem}")
        out(
            f"The book was not published: {len(problems)} problem(s) in what the reader reads. "
            "The previous _book/ was left as it was."
        )
        return 1
    if chosen == "quarto":
        code = _render_quarto(root, selected[0] if only else None, notebooks_dir, out)
    else:
        code = _render_pandoc(root, pages, notebooks, out, never_run, students)
    if code == 0:
        out(f"book written to {root / '_book' / 'index.html'} ({chosen}) in {time.perf_counter() - started:.1f} s")
    return code


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


def write_student_notebooks(
    root: Path, pages: list[Page], executed: dict[str, nbformat.NotebookNode], folder: Path
) -> dict[str, nbformat.NotebookNode]:
    """Write the notebooks a reader opens in Jupyter (:func:`rlbook.publish.jupyter.student_notebooks`) to ``folder``,
    with the book's wheel beside them (:func:`rlbook.publish.wheel.book_wheel`), which their first cell names.

    Returns them by page stem. A page whose notebook cannot be written raises ValueError or RuntimeError.
    """
    folder.mkdir(parents=True, exist_ok=True)
    wheel = book_wheel(folder)
    students = student_notebooks(
        root, pages, executed, pandoc_path(), read_config(root).get("bibliography"), wheel.name
    )
    for stem, nb in students.items():
        nbformat.write(nb, folder / f"{stem}.ipynb")
    return students


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


def execute_pages(
    root: Path, pages: list[Page], selected: list[Page], notebooks_dir: Path, out: Callable[[str], None], jobs: int = 1
) -> dict[str, nbformat.NotebookNode]:
    """Execute the selected pages, ``jobs`` at a time, into ``notebooks_dir``, and read the others' executed
    notebooks from there (the last build).

    The first page to fail stops the rest at their next cell and is raised.
    """
    notebooks = {}
    logs = root / "_build" / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    figures = figure_format(read_config(root))
    for number, page in enumerate(pages, 1):
        if page in selected:
            continue
        saved = notebooks_dir / f"{page.stem}.ipynb"
        if saved.is_file():
            notebooks[page.stem] = nbformat.read(saved, as_version=4)
        else:
            out(f"[{number}/{len(pages)}] {page.source}: not executed in this build, shown without outputs")
            notebooks[page.stem] = qmd_to_notebook((root / page.source).read_text(encoding="utf-8"))
    stop = threading.Event()
    seconds_file = root / "_build" / "page-seconds.json"
    seconds = json.loads(seconds_file.read_text()) if seconds_file.is_file() else {}

    def execute(number: int, page: Page) -> tuple[str, nbformat.NotebookNode]:
        tick = time.perf_counter()
        text = (root / page.source).read_text(encoding="utf-8")
        nb = execute_notebook(
            qmd_to_notebook(text),
            (root / page.source).parent,
            page.source,
            text,
            log=logs / f"{page.stem}.kernel.log",
            stop=stop,
            figures=figures,
        )
        nbformat.write(nb, notebooks_dir / f"{page.stem}.ipynb")
        seconds[page.stem] = time.perf_counter() - tick
        out(f"[{number}/{len(pages)}] {page.source}: executed in {seconds[page.stem]:.1f} s")
        return page.stem, nb

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(execute, number, page) for number, page in longest_first(pages, selected, seconds)]
        try:
            for future in as_completed(futures):
                stem, nb = future.result()
                notebooks[stem] = nb
        except BaseException:  # a failed page, or Ctrl-C: the other pages stop at their next cell
            stop.set()
            pool.shutdown(wait=True, cancel_futures=True)
            raise
    seconds_file.write_text(json.dumps(seconds, indent=1))
    return notebooks


def longest_first(pages: list[Page], selected: list[Page], seconds: dict[str, float]) -> list[tuple[int, Page]]:
    """The selected pages with their numbers, the slowest in the last build first (new pages before all).

    With several pages executing at once, starting the long ones first keeps
    a short page from being the only one left running at the end.
    """
    numbered = [(number, page) for number, page in enumerate(pages, 1) if page in selected]
    return sorted(numbered, key=lambda item: -seconds.get(item[1].stem, float("inf")))


def _render_pandoc(
    root: Path,
    pages: list[Page],
    notebooks: dict,
    out: Callable[[str], None],
    never_run: frozenset[str],
    downloads: dict,
) -> int:
    """Render the site beside the old one and swap it in only when every page is there, every citation
    resolved and no page has a hole (:func:`_publishable`). ``downloads`` are the notebooks for Jupyter.

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
        if not _publishable(staging, out, never_run):
            return 1
        swap_in(staging, root / "_book")
    except (RuntimeError, ValueError, OSError) as err:
        out(f"rlbook build: {err}")
        out("The previous _book/ was left as it was.")
        return 1
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return 0


def _publishable(site: Path, out: Callable[[str], None], never_run: frozenset[str] = frozenset()) -> bool:
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


def _render_quarto(root: Path, page: Page | None, notebooks_dir: Path, out: Callable[[str], None]) -> int:
    """``quarto render`` with this Python (QUARTO_PYTHON); its pre-render step copies the notebooks in.

    The pages were executed and their notebooks written already, so the
    pre-render step (:mod:`rlbook.publish.prerender`) is told to copy only
    (``RLBOOK_PAGES_EXECUTED=1``). Quarto's output is passed to ``out`` line by
    line, except the kernels' warning that they talk over TCP without
    encryption (:data:`KERNEL_WARNING`), which is counted and explained once.
    """
    env = {**os.environ, "QUARTO_PYTHON": sys.executable, "RLBOOK_PAGES_EXECUTED": "1"}
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
    if page is None:
        if not _publishable(target, out):
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
