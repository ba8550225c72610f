"""Quarto's pre-render step: what a plain ``quarto render`` needs besides the pages (``_quarto.yml``'s ``pre-render``).

Quarto runs this file with its Python before it renders (``project:
pre-render``), in the project's folder, with the output folder in
``QUARTO_PROJECT_OUTPUT_DIR`` and the pages it is about to render in
``QUARTO_PROJECT_INPUT_FILES``. It writes into the output folder the files
that the pages link to but Quarto does not make:

- ``notebooks/<page>.ipynb``, the notebooks for Jupyter, and the book's wheel
  that their first cell names: the pages about to be rendered are executed
  as ``rlbook build`` executes them (the book's missing runs trained first,
  on a whole-book render) and their notebooks written to
  ``_build/notebooks/``; the other pages' notebooks are taken from there if
  an earlier build left them;
- ``workshop/``, chapter 1's web workshop: its script, the checkpoints
  exported from the run cache, and its style.

The notebook-link filter (``assets/notebook-link.lua``) then links a page to
its notebook only when the file is in the output folder, so no page links to
a file that is not there. ``rlbook build --backend quarto`` has executed the
pages already and sets ``RLBOOK_PAGES_EXECUTED=1``, and the step then only
copies. A page that needs a missing extra stops the render with one line.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

if __package__ in (None, ""):  # run by Quarto as a file: import the rlbook it belongs to, not its siblings
    _here = Path(__file__).resolve().parent
    sys.path[:] = [str(_here.parents[1])] + [entry for entry in sys.path if Path(entry or ".").resolve() != _here]

from rlbook.publish.config import Page, book_pages
from rlbook.publish.extras import unmet_needs

EXECUTED = "RLBOOK_PAGES_EXECUTED"
"""Set to 1 by ``rlbook build`` when it has executed the pages and written their notebooks itself."""


def input_files(environ: Mapping[str, str]) -> list[str]:
    """The pages Quarto is about to render, relative to the project, from its environment.

    Quarto passes them one a line in ``QUARTO_PROJECT_INPUT_FILES``, or in the
    file that ``QUARTO_USE_FILE_FOR_PROJECT_INPUT_FILES`` names.
    """
    listed = environ.get("QUARTO_USE_FILE_FOR_PROJECT_INPUT_FILES")
    text = Path(listed).read_text(encoding="utf-8") if listed else environ.get("QUARTO_PROJECT_INPUT_FILES", "")
    return [Path(line.strip()).as_posix() for line in text.splitlines() if line.strip()]


def rendered_pages(pages: list[Page], environ: Mapping[str, str]) -> list[Page]:
    """The book's pages that this render covers: all of them on a whole-book render, else those listed."""
    if environ.get("QUARTO_PROJECT_RENDER_ALL") == "1":
        return list(pages)
    listed = set(input_files(environ))
    return [page for page in pages if page.source in listed]


def copy_site_files(root: Path, pages: list[Page], site: Path) -> tuple[list[str], bool]:
    """Copy each page's notebook from ``root/_build/notebooks`` (where there is one) and the book's wheel into
    ``site/notebooks``, and write the web workshop into ``site/workshop`` if a page holds a panel.

    Returns the stems of the pages whose notebook is now in the site, and whether the workshop was written.
    """
    from rlbook.publish import webworkshop  # torch and the run cache: imported once there is work to do
    from rlbook.publish.wheel import book_wheel

    built, target = root / "_build" / "notebooks", site / "notebooks"
    target.mkdir(parents=True, exist_ok=True)
    copied = []
    for page in pages:
        notebook = built / f"{page.stem}.ipynb"
        if notebook.is_file():
            shutil.copy2(notebook, target / notebook.name)
            copied.append(page.stem)
    book_wheel(target)
    return copied, webworkshop.add_to_site(root, [page.source for page in pages], site)


def prerender(root: Path, environ: Mapping[str, str], out: Callable[[str], None] = print) -> int:
    """The pre-render step for the project at ``root``; returns the exit code (0, or 1 with a line saying why)."""
    from rlbook.publish.execute import CellFailure
    from rlbook.publish.notebooks import DEFAULT_JOBS, execute_pages, write_student_notebooks
    from rlbook.publish.runs_ahead import prefetch_runs

    try:
        pages = book_pages(root)
        unmet = unmet_needs(root, pages)
    except ValueError as err:
        out(f"rlbook pre-render: {err}")
        return 1
    if unmet:
        out(f"rlbook pre-render: {unmet[0].line()}")
        return 1
    site = Path(environ.get("QUARTO_PROJECT_OUTPUT_DIR") or "_book")
    site = site if site.is_absolute() else root / site
    if environ.get(EXECUTED) != "1":
        selected = rendered_pages(pages, environ)
        if environ.get("QUARTO_PROJECT_RENDER_ALL") == "1":
            prefetch_runs(root, None, out)
        executed_dir = root / "_build" / "executed"
        executed_dir.mkdir(parents=True, exist_ok=True)
        try:
            notebooks = execute_pages(root, pages, selected, executed_dir, out, DEFAULT_JOBS)
            write_student_notebooks(root, pages, notebooks, root / "_build" / "notebooks")
        except CellFailure as failure:
            out(failure.report())
            return 1
        except (ValueError, RuntimeError) as err:
            out(f"rlbook pre-render: the notebooks for Jupyter: {err}")
            return 1
    copied, workshop = copy_site_files(root, pages, site)
    out(
        f"rlbook pre-render: {len(copied)} notebooks, the book's wheel{' and the web workshop' if workshop else ''} "
        f"written to {site}"
    )
    return 0


if __name__ == "__main__":
    os.environ.setdefault("RLBOOK_BUILDING", "1")  # as rlbook build: the kernels show no progress bars
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # two kernels side by side (rlbook.publish.build)
    raise SystemExit(prerender(Path.cwd(), os.environ))
