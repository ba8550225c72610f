"""The book's pages as notebooks: each executed in a fresh kernel, several at once, and the notebooks for Jupyter.

Used by ``rlbook build`` (:mod:`rlbook.publish.build`) and by Quarto's
pre-render step (:mod:`rlbook.publish.prerender`). Each page is read as a
notebook and executed in its own kernel, whose working directory is the
page's folder (:mod:`rlbook.publish.execute`), ``jobs`` pages at a time, the
slowest first; the executed notebooks are written to
``_build/executed/<name>.ipynb``, which the website is rendered from, and
the notebooks a reader opens in Jupyter are written from them to
``_build/notebooks/<name>.ipynb`` (:mod:`rlbook.publish.jupyter`). A plain
``quarto render`` executes each page once, in Quarto's own kernel: its
post-render step (:mod:`rlbook.publish.postrender`) reads the notebook Quarto
executed (``keep-ipynb``) back into the same executed notebook
(:func:`executed_by_quarto`).
"""

from __future__ import annotations

import ast
import copy
import json
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

import nbformat

from rlbook.publish import frozen
from rlbook.publish.config import Page, read_config
from rlbook.publish.execute import execute_notebook, inline_expressions, qmd_to_notebook
from rlbook.publish.jupyter import student_notebooks
from rlbook.publish.qmd import cell_options
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
    root: Path,
    pages: list[Page],
    selected: list[Page],
    notebooks_dir: Path,
    out: Callable[[str], None],
    jobs: int = 1,
    fresh: bool = False,
) -> dict[str, nbformat.NotebookNode]:
    """Execute the selected pages, ``jobs`` at a time, into ``notebooks_dir``, and read the others' executed
    notebooks from there (the last build).

    A selected page whose last execution read what this one would read (:mod:`rlbook.publish.frozen`) is
    reused, not executed, unless ``fresh``. The first page to fail stops the rest at their next cell and is raised.
    """
    notebooks = earlier_notebooks(root, pages, selected, notebooks_dir, out)
    logs = root / "_build" / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    figures = figure_format(read_config(root))
    shared = frozen.shared_inputs(root)
    keys = {page.stem: frozen.execution_key(page_text(root, page), figures, shared) for page in selected}
    if not fresh:
        for number, page in enumerate(pages, 1):
            kept = frozen.reusable(notebooks_dir, page.stem, keys[page.stem]) if page in selected else None
            if kept is not None:
                notebooks[page.stem] = kept
                out(
                    f"[{number}/{len(pages)}] {page.source}: reused, nothing it reads has changed since it was executed"
                )
        selected = [page for page in selected if page.stem not in notebooks]
    stop = threading.Event()
    seconds_file = root / "_build" / "page-seconds.json"
    seconds = json.loads(seconds_file.read_text()) if seconds_file.is_file() else {}

    def execute(number: int, page: Page) -> tuple[str, nbformat.NotebookNode]:
        tick = time.perf_counter()
        text = page_text(root, page)
        frozen.forget(notebooks_dir, page.stem)
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
        frozen.record(notebooks_dir, page.stem, keys[page.stem])
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


def page_text(root: Path, page: Page) -> str:
    """The ``.qmd`` text of ``page``."""
    return (root / page.source).read_text(encoding="utf-8")


def earlier_notebooks(
    root: Path, pages: list[Page], selected: list[Page], notebooks_dir: Path, out: Callable[[str], None]
) -> dict[str, nbformat.NotebookNode]:
    """The executed notebooks of the pages not in ``selected``, by stem: the last build's from ``notebooks_dir``,
    or the page unexecuted (said in a line to ``out``) where no build has executed it."""
    notebooks = {}
    for number, page in enumerate(pages, 1):
        if page in selected:
            continue
        saved = notebooks_dir / f"{page.stem}.ipynb"
        if saved.is_file():
            notebooks[page.stem] = nbformat.read(saved, as_version=4)
        else:
            out(f"[{number}/{len(pages)}] {page.source}: not executed in this build, shown without outputs")
            notebooks[page.stem] = qmd_to_notebook((root / page.source).read_text(encoding="utf-8"))
    return notebooks


def executed_by_quarto(text: str, kept: nbformat.NotebookNode, page: str) -> nbformat.NotebookNode:
    """The executed notebook of the page whose ``.qmd`` is ``text``, as :func:`execute_pages` writes it, from
    ``kept``, the notebook Quarto executed the page in (``keep-ipynb``), as ``nbformat.read`` reads it. Used by
    Quarto's post-render step (:mod:`rlbook.publish.postrender`).

    The page is read as :func:`rlbook.publish.execute.qmd_to_notebook` reads it; each code cell takes the
    outputs of Quarto's cell at the same place (a cell with ``eval: false`` none), and each inline expression
    of the prose the value Quarto's kernel gave it there (:func:`inline_value`). Quarto's notebook must hold
    the page's code cells with the same code, else ValueError names the first that differs (``page`` says where).
    """
    nb = qmd_to_notebook(text)
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    ran = [cell for cell in kept["cells"] if cell["cell_type"] == "code"]
    if len(code) != len(ran):
        raise ValueError(f"{page}: Quarto executed {len(ran)} code cells, the page has {len(code)}")
    for index, (cell, done) in enumerate(zip(code, ran, strict=True), 1):
        options, source = cell_options(cell.source)
        if source.strip() != cell_options(_text(done["source"]))[1].strip():
            raise ValueError(f"{page}: code cell {index} is not the one Quarto executed")
        evaluated = options.get("eval", True) is not False
        cell.outputs = copy.deepcopy(done.get("outputs", [])) if evaluated else []
        cell.execution_count = done.get("execution_count") if evaluated else None
    values = [
        (str(found["expression"]).strip(), inline_value(found["result"]))
        for cell in kept["cells"]
        if cell["cell_type"] == "markdown"
        for found in cell.get("metadata", {}).get("user_expressions", [])
    ]
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        source = cell.source
        matches = inline_expressions(source)
        printed = [_take(values, match.group(1).strip(), page) for match in matches]
        for match, value in reversed(list(zip(matches, printed, strict=True))):
            source = source[: match.start()] + value + source[match.end() :]
        cell.source = source
    return nb


def _take(values: list[tuple[str, str]], expression: str, page: str) -> str:
    """The value of the first of ``values`` whose expression is ``expression``; it and those before it are taken."""
    for position, (found, value) in enumerate(values):
        if found == expression:
            del values[: position + 1]
            return value
    raise ValueError(f"{page}: Quarto evaluated no inline expression `{{python}} {expression}`")


def inline_value(result: dict) -> str:
    """What an inline expression prints in the page (``str`` of its value, as
    :func:`rlbook.publish.execute.execute_notebook` writes it), from the result Quarto's kernel returned.

    A value with Markdown of its own (``_repr_markdown_``, the facts' numbers and wordings) gives that; any
    other gives its ``repr``, which is its ``str`` for numbers and is read back into the string for a string.
    An expression that raised raises ValueError with its error.
    """
    if result.get("status") != "ok":
        raise ValueError(f"an inline expression raised {result.get('ename')}: {result.get('evalue')}")
    data = result.get("data", {})
    if "text/markdown" in data:
        return _text(data["text/markdown"])
    shown = _text(data.get("text/plain", ""))
    if shown[:1] in ("'", '"'):
        return str(ast.literal_eval(shown))
    return shown


def _text(source: str | list[str]) -> str:
    return "".join(source) if isinstance(source, list) else source


def longest_first(pages: list[Page], selected: list[Page], seconds: dict[str, float]) -> list[tuple[int, Page]]:
    """The selected pages with their numbers, the slowest in the last build first (new pages before all).

    With several pages executing at once, starting the long ones first keeps
    a short page from being the only one left running at the end.
    """
    numbered = [(number, page) for number, page in enumerate(pages, 1) if page in selected]
    return sorted(numbered, key=lambda item: -seconds.get(item[1].stem, float("inf")))
