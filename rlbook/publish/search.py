"""Search for the pandoc site: a Pagefind index of every page, written into the site's ``pagefind/`` folder.

Used by :func:`rlbook.publish.site.render_site` once every page is written.
Pagefind (PyPI's ``pagefind`` with its ``pagefind-bin`` binary, a
dependency of rlbook) reads the pages' ``data-pagefind-body`` element, splits
it at every heading that has an id, and writes a compressed index that the
browser fetches piece by piece; ``assets/book.js`` searches it from a box
in the sidebar. Each hit lists the sections that matched, each linking to its
heading. Only the prose is indexed (text, headings, captions, tables, the
glossary): code, printed outputs, the workshop's controls and the TeX source
of formulas are left out (:data:`IGNORED`), so a result is always credited to the section whose
text it quotes, and Pagefind's weights make a heading count more than the
body text. ``@`` is kept inside words, so that "pass@k" is one word;
``assets/book.js`` searches "pass@k" as the prefix "pass@", which finds
pass@1 and pass@4 too. The search box is the book's own (``assets/book.js``
over Pagefind's JavaScript API): it drops the words that only shape a
question ("why", "how", "the"), keeps only the pages and sections that hold
every word searched (Pagefind, given a word no page holds, would search a
shorter one: "markdown_table" would find "mark" and "table"), and lists a
page's sections best first.

Why Pagefind (issue 31): it is a well-kept static-search library that
installs from PyPI as a binary wheel on Linux, macOS and Windows, so the book
keeps no index of its own, only the box that asks it; when it was added it indexed the
whole book in about 1.5 s into about 1 MB. Like Quarto's search, it needs the
site served over HTTP: a browser does not let a page opened from ``file://``
fetch the index, and the sidebar then says how to serve the book.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

FOLDER = "pagefind"
"""The site's folder for the index and the search interface."""
IGNORED = ("pre", "div.sourceCode", ".cell-output", "details.code-fold > summary", ".rlbook-workshop", "annotation")
"""What search leaves out: code listings, printed outputs, the folds' "Code" labels, the workshop's panels and
the TeX source that each formula carries beside its MathML (a snippet would show the formula twice)."""
WORD_CHARACTERS = "@"
"""Characters indexed as part of a word (Pagefind splits words at any other punctuation)."""


def index_site(site: Path) -> int:
    """Index every HTML page under ``site`` into ``site/pagefind``; return the number of pages indexed.

    Raises RuntimeError when Pagefind indexed no page (the pages lack the
    ``data-pagefind-body`` element, or Pagefind failed). Works whether or not
    the caller is inside a running event loop.
    """
    from pagefind.index import IndexConfig, PagefindIndex

    async def run() -> int:
        config = IndexConfig(
            output_path=str(site / FOLDER),
            force_language="en",
            exclude_selectors=list(IGNORED),
            include_characters=WORD_CHARACTERS,
        )
        async with PagefindIndex(config=config) as index:
            done = await index.add_directory(str(site))
        return int(done["page_count"])

    # Pagefind's API is asynchronous. Its loop runs on a thread of its own, so that a caller that is
    # itself inside a running event loop (a Jupyter kernel, Playwright's sync API in the browser
    # tests) can still build the site: asyncio.run refuses to start inside a running loop.
    with ThreadPoolExecutor(max_workers=1) as pool:
        pages = pool.submit(asyncio.run, run()).result()
    if pages == 0:
        raise RuntimeError(f"Pagefind indexed no page of {site}")
    return pages
