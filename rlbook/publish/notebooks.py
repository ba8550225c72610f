"""The book's pages as notebooks: each executed in a fresh kernel, several at once, and the notebooks for Jupyter.

Used by ``rlbook build`` (:mod:`rlbook.publish.build`) and by Quarto's
pre-render step (:mod:`rlbook.publish.prerender`). Each page is read as a
notebook and executed in its own kernel, whose working directory is the
page's folder (:mod:`rlbook.publish.execute`), ``jobs`` pages at a time, the
slowest first; the executed notebooks are written to
``_build/executed/<name>.ipynb``, which the website is rendered from, and
the notebooks a reader opens in Jupyter are written from them to
``_build/notebooks/<name>.ipynb`` (:mod:`rlbook.publish.jupyter`).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

import nbformat

from rlbook.publish.config import Page, read_config
from rlbook.publish.execute import execute_notebook, qmd_to_notebook
from rlbook.publish.jupyter import student_notebooks
from rlbook.publish.render import pandoc_path
from rlbook.publish.wheel import book_wheel

DEFAULT_JOBS = 2
"""Pages executed at once unless ``--jobs`` says otherwise. A page's operations
are too small to split well over cores, so two kernels side by side finish the
book sooner. (The runs trained ahead of the pages go one per usable core:
:func:`rlbook.runs.prefetch.usable_cores`.)"""


def figure_format(config: dict) -> str | None:
    """The format of the book's figures: ``_quarto.yml``'s ``format: html: fig-format`` (Quarto's option), or None."""
    value = ((config.get("format") or {}).get("html") or {}).get("fig-format")
    return str(value) if value else None


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
