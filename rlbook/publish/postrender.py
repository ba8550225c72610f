"""Quarto's post-render step: what a plain ``quarto render`` does after the pages (``_quarto.yml``'s ``post-render``).

Quarto runs this file with its Python once every page is rendered, in the
project's folder, with the output folder in ``QUARTO_PROJECT_OUTPUT_DIR`` and
the files it wrote in ``QUARTO_PROJECT_OUTPUT_FILES`` (or in the file that
``QUARTO_USE_FILE_FOR_PROJECT_OUTPUT_FILES`` names). Quarto has executed
each page once, in its own kernel, and kept the notebook it executed beside
the page (``execute: keep-ipynb``, ``<page>.quarto_ipynb``). This step

- writes the notebooks for Jupyter from those notebooks, as ``rlbook build``
  writes them from its own execution: each rendered page's executed notebook
  (:func:`rlbook.publish.notebooks.executed_by_quarto`) goes to
  ``_build/executed/``, every page's notebook for Jupyter to
  ``_build/notebooks/``, and the rendered pages' into the site's
  ``notebooks/`` with the book's wheel;
- gives the site's figures their dark variant and drops the TeX of formulas
  from the search index (:mod:`rlbook.publish.quarto_site`);
- deletes the kept notebooks, which Quarto would otherwise number anew on the
  next render.

``rlbook build --backend quarto`` reads the executed notebooks this step
writes to ``_build/executed/`` for its checks of what the reader reads.
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
from rlbook.publish.prerender import kept_notebooks
from rlbook.publish.qmd import cell_options
from rlbook.publish.site import output_href


def output_files(environ: Mapping[str, str]) -> list[str]:
    """The files Quarto wrote, relative to the project, from its environment: one a line in
    ``QUARTO_PROJECT_OUTPUT_FILES``, or in the file that ``QUARTO_USE_FILE_FOR_PROJECT_OUTPUT_FILES`` names."""
    listed = environ.get("QUARTO_USE_FILE_FOR_PROJECT_OUTPUT_FILES")
    text = Path(listed).read_text(encoding="utf-8") if listed else environ.get("QUARTO_PROJECT_OUTPUT_FILES", "")
    return [Path(line.strip()).as_posix() for line in text.splitlines() if line.strip()]


def rendered_pages(root: Path, pages: list[Page], site: Path, environ: Mapping[str, str]) -> list[Page]:
    """The book's pages whose HTML Quarto wrote in this render."""
    written = {(root / name).resolve() for name in output_files(environ)}
    return [page for page in pages if (site / output_href(page)).resolve() in written]


def _executes(text: str) -> bool:
    """Whether a page has anything for a kernel: a code cell to evaluate or an inline expression."""
    from rlbook.publish.execute import inline_expressions, qmd_to_notebook

    for cell in qmd_to_notebook(text).cells:
        if cell.cell_type == "code" and cell_options(cell.source)[0].get("eval", True) is not False:
            return True
        if cell.cell_type == "markdown" and inline_expressions(cell.source):
            return True
    return False


def write_notebooks(root: Path, pages: list[Page], rendered: list[Page], site: Path) -> int:
    """Write the notebooks for Jupyter from the notebooks Quarto executed the ``rendered`` pages in; returns how
    many went into ``site/notebooks``. A rendered page with code and no executed notebook raises ValueError."""
    import nbformat

    from rlbook.publish.execute import qmd_to_notebook
    from rlbook.publish.notebooks import earlier_notebooks, executed_by_quarto, write_student_notebooks
    from rlbook.publish.wheel import book_wheel

    executed_dir, folder = root / "_build" / "executed", root / "_build" / "notebooks"
    executed_dir.mkdir(parents=True, exist_ok=True)
    notebooks = earlier_notebooks(root, pages, rendered, executed_dir, lambda line: None)
    for page in rendered:
        text = (root / page.source).read_text(encoding="utf-8")
        kept = kept_notebooks(root, page)
        if kept:
            nb = executed_by_quarto(text, nbformat.read(kept[0], as_version=4), page.source)
        elif _executes(text):
            raise ValueError(f"{page.source}: Quarto kept no executed notebook (keep-ipynb in _quarto.yml)")
        else:
            nb = qmd_to_notebook(text)
        nbformat.write(nb, executed_dir / f"{page.stem}.ipynb")
        notebooks[page.stem] = nb
    write_student_notebooks(root, pages, notebooks, folder)
    target = site / "notebooks"
    target.mkdir(parents=True, exist_ok=True)
    for page in rendered:
        shutil.copy2(folder / f"{page.stem}.ipynb", target / f"{page.stem}.ipynb")
    book_wheel(target)
    return len(rendered)


def postrender(root: Path, environ: Mapping[str, str], out: Callable[[str], None] = print) -> int:
    """The post-render step for the project at ``root``; returns the exit code (0, or 1 with a line saying why)."""
    from rlbook.publish.quarto_site import clean_search, theme_figures

    site = Path(environ.get("QUARTO_PROJECT_OUTPUT_DIR") or "_book")
    site = site if site.is_absolute() else root / site
    try:
        pages = book_pages(root)
    except ValueError as err:
        out(f"rlbook post-render: {err}")
        return 1
    try:
        rendered = rendered_pages(root, pages, site, environ)
        written = write_notebooks(root, pages, rendered, site)
    except (ValueError, RuntimeError, OSError) as err:
        out(f"rlbook post-render: the notebooks for Jupyter: {err}")
        return 1
    finally:
        for page in pages:
            for kept in kept_notebooks(root, page):
                kept.unlink()
    figures, entries = theme_figures(site), clean_search(site)
    out(
        f"rlbook post-render: {written} notebooks written, {figures} figures given their dark variant, "
        f"{entries} search entries rid of TeX, in {site}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(postrender(Path.cwd(), os.environ))
