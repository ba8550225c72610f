"""Quarto's pre-render step: what a plain ``quarto render`` needs before the pages (``_quarto.yml``'s ``pre-render``).

Quarto runs this file with its Python before it renders (``project:
pre-render``), in the project's folder, with the output folder in
``QUARTO_PROJECT_OUTPUT_DIR``. Quarto itself executes each page it renders,
once, in its own kernel; this step readies what that needs and writes into
the output folder the files that the pages link to but Quarto does not make:

- on a whole-book render, the book's missing runs are trained first, several
  at a time, as ``rlbook build`` trains them (the pages would otherwise train
  them one by one inside their cells);
- the notebooks Quarto kept from an earlier render that stopped half-way
  (``<page>.quarto_ipynb``, ``execute: keep-ipynb``) are deleted, so that the
  notebook beside a page after the render is the one Quarto executed in it;
- ``notebooks/<page>.ipynb``, the notebooks for Jupyter that an earlier render
  or build left in ``_build/notebooks/``, and the book's wheel that their first
  cell names; the post-render step (:mod:`rlbook.publish.postrender`) writes
  the notebooks of the pages rendered now from Quarto's execution;
- ``workshop/``, chapter 1's web workshop: its script, the checkpoints
  exported from the run cache, and its style.

The notebook-link filter (``assets/notebook-link.lua``) then links a page to
its notebook only when the file is in the output folder or Quarto has just
executed the page, so no page links to a file that is not there.
``rlbook build --backend quarto`` runs a plain ``quarto render`` after
training the runs itself, so the training here finds nothing left to do. A
page that needs a missing extra stops the render with one line.
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


def kept_notebooks(root: Path, page: Page) -> list[Path]:
    """The notebooks Quarto executed ``page`` in and kept beside it (``keep-ipynb``): ``<page>.quarto_ipynb``,
    and the ``<page>.quarto_ipynb_1``, ... that it writes when an earlier one is still there."""
    source = root / page.source
    return sorted(source.parent.glob(f"{source.stem}.quarto_ipynb*"))


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
    if environ.get("QUARTO_PROJECT_RENDER_ALL") == "1":
        prefetch_runs(root, None, out)
    for page in pages:
        for kept in kept_notebooks(root, page):
            kept.unlink()
    copied, workshop = copy_site_files(root, pages, site)
    out(
        f"rlbook pre-render: {len(copied)} notebooks, the book's wheel{' and the web workshop' if workshop else ''} "
        f"written to {site}"
    )
    return 0


if __name__ == "__main__":
    os.environ.setdefault("RLBOOK_BUILDING", "1")  # as rlbook build: the runs trained ahead show no progress bars
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # several runs side by side (rlbook.publish.build)
    raise SystemExit(prerender(Path.cwd(), os.environ))
