"""The live panels in a book built by ``rlbook build`` with the pandoc backend, read from file://.

A small book whose chapters hold the book's panel blocks (each chapter with
panels gives its blocks to one chapter here) is built as the real book is;
its pages must carry the panels, its site the workshop's files, and the
panels must work where the build put them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rlbook.bench import browser as bench
from rlbook.publish import webworkshop
from rlbook.publish.build import build_book


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """The built site, and for each panel kind the page that carries it."""
    root = tmp_path_factory.mktemp("book")
    (root / "chapters").mkdir()
    (root / "index.qmd").write_text("# Preface {.unnumbered}\n\nA few chapters.\n")
    where, listed = {}, []
    for k, (stem, blocks) in enumerate(bench.panel_pages().items(), start=1):
        body = "\n\nSome prose.\n\n".join(f"```{{=html}}\n{block}```" for block in blocks)
        (root / "chapters" / f"{stem}.qmd").write_text(f"# Panels {k} {{#sec-panels-{k}}}\n\n{body}\n")
        listed.append(f"    - chapters/{stem}.qmd")
        for block in blocks:
            where[block.split('data-panel="')[1].split('"')[0]] = f"chapters/{stem}.html"
    (root / "_quarto.yml").write_text(
        'project:\n  type: book\nbook:\n  title: "Panels"\n  chapters:\n    - index.qmd\n' + "\n".join(listed) + "\n"
    )
    lines: list[str] = []
    assert build_book(root, backend="pandoc", out=lines.append) == 0, "\n".join(lines)
    return root / "_book", where


def test_the_pandoc_build_carries_the_panels_and_the_workshops_files(built):
    site, where = built
    assert sorted(where) == ["advantages", "hack", "lab", "sample"]
    for kind, page in where.items():
        html = (site / page).read_text()
        assert f'data-panel="{kind}"' in html and '<script src="../workshop/workshop.js"></script>' in html
    for name in (webworkshop.SCRIPT, webworkshop.DATA, webworkshop.MAIN, webworkshop.STYLE):
        assert (site / webworkshop.SITE_FOLDER / name).stat().st_size > 0
    assert not (site / "index.html").read_text().count("rlbook-workshop")


def test_the_built_pages_run_their_panels_from_file_offline(page, built):
    site, where = built
    page.goto((site / where["sample"]).as_uri())
    page.wait_for_function("document.querySelectorAll('[data-panel=sample] .rw-chip').length === 32")
    assert page.inner_text("[data-panel=sample] .rw-readout").startswith("Expected reward ")
    page.wait_for_function("document.querySelector('[data-panel=lab]').dataset.ready === 'true'")
    for kind in ("advantages", "hack"):
        page.goto((site / where[kind]).as_uri())
        page.wait_for_function(f"document.querySelector('[data-panel={kind}]').dataset.ready === 'true'")
    assert page.locator("[data-panel=advantages] td").count() or page.locator("[data-panel=hack] .rw-chip").count()
    assert not page.log.refused
