"""The web workshop in a book built by ``rlbook build`` with the pandoc backend, read from file://.

A one-chapter book whose chapter holds chapter 1's workshop blocks is built
as the real book is; its page must carry the panels, its site the workshop's
files, and the panels must work where the build put them.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from rlbook.publish.build import build_book
from rlbook.publish import webworkshop

CHAPTER = Path(__file__).resolve().parents[2] / "chapters" / "01-rl-loop.qmd"
QUARTO_YML = """\
project:
  type: book
book:
  title: "Workshop Book"
  chapters:
    - index.qmd
    - chapters/01-workshop.qmd
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("book")
    (root / "chapters").mkdir()
    (root / "_quarto.yml").write_text(QUARTO_YML)
    (root / "index.qmd").write_text("# Preface {.unnumbered}\n\nOne chapter.\n")
    blocks = webworkshop.page_blocks(CHAPTER.read_text())
    body = "\n\nSome prose.\n\n".join(f"```{{=html}}\n{block}```" for block in blocks)
    (root / "chapters" / "01-workshop.qmd").write_text(f"# The workshop {{#sec-workshop}}\n\n{body}\n")
    lines: list[str] = []
    assert build_book(root, backend="pandoc", out=lines.append) == 0, "\n".join(lines)
    return root / "_book"


def test_the_pandoc_build_carries_the_panels_and_the_workshops_files(built):
    html = (built / "chapters" / "01-workshop.html").read_text()
    assert 'data-panel="sample"' in html and 'data-panel="train"' in html
    assert '<script src="../workshop/workshop.js"></script>' in html
    for name in (webworkshop.SCRIPT, webworkshop.DATA, webworkshop.STYLE):
        assert (built / webworkshop.SITE_FOLDER / name).stat().st_size > 0
    assert not (built / "index.html").read_text().count("rlbook-workshop")


def test_the_built_page_samples_from_file_offline(page, built):
    page.goto((built / "chapters" / "01-workshop.html").as_uri())
    page.wait_for_function("document.querySelectorAll('.rw-chip').length === 32")
    assert page.inner_text(".rw-readout").startswith("Expected reward ")
    assert page.locator("[data-panel=train]").get_attribute("data-ready") == "true"
    assert not page.log.refused
