"""rlbook.publish.search: a Pagefind index of a small site, and its failure when nothing can be indexed."""
from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

import pytest

from rlbook.publish import search

PAGE = """<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{title}</title></head><body>
<nav>Chapter list, not indexed</nav><main data-pagefind-body><h1 id="sec-{key}">{title}</h1>
<h2 id="sec-{key}-part">A part</h2><p>{text}</p></main></body></html>"""


def test_every_page_is_indexed_with_the_search_interface_beside_the_index(tmp_path):
    (tmp_path / "chapters").mkdir()
    (tmp_path / "index.html").write_text(PAGE.format(title="Preface", key="pre", text="Read this first."))
    (tmp_path / "chapters" / "03.html").write_text(PAGE.format(title="Credit", key="credit", text="CISPO caps ratios."))
    assert search.index_site(tmp_path) == 2
    bundle = tmp_path / search.FOLDER
    for name in ("pagefind.js", "pagefind-ui.js", "pagefind-ui.css", "pagefind-entry.json"):
        assert (bundle / name).stat().st_size > 0
    assert list(bundle.glob("index/*")) and list(bundle.glob("fragment/*"))


def test_a_site_without_pages_fails(tmp_path):
    with pytest.raises(RuntimeError, match="Pagefind indexed no page"):
        search.index_site(tmp_path)


def test_a_site_is_indexed_from_inside_a_running_event_loop(tmp_path):
    # Playwright's sync API and a Jupyter kernel both keep a loop running while the book is built.
    (tmp_path / "index.html").write_text(PAGE.format(title="Preface", key="pre", text="Read this first."))

    async def build_inside_a_loop() -> int:
        return search.index_site(tmp_path)

    # The loop runs on a thread of its own, as this test may itself run where Playwright's loop is running.
    with ThreadPoolExecutor(max_workers=1) as pool:
        assert pool.submit(asyncio.run, build_inside_a_loop()).result() == 1
