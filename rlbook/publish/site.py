"""The book as a website without Quarto: every page rendered, numbered, cross-linked and written with its navigation.

Used by ``rlbook build`` when Quarto is not installed (the pandoc backend).
Each executed notebook becomes pandoc markdown (:mod:`rlbook.publish.markdown`),
is parsed by pandoc and rewritten as Quarto would render it
(:mod:`rlbook.publish.page`), and is written as HTML through the book's
template (``assets/book.html``) with the chapter list, the page's contents
and links to the neighbouring chapters. Citations are left to pandoc's
citeproc with ``references.bib``; math is written as MathML so that nothing
is fetched when a page is read offline.
"""

from __future__ import annotations

import html
import json
import re
import shutil
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import nbformat

from rlbook.publish import search, webworkshop
from rlbook.publish.config import Page
from rlbook.publish.inputs import confined, within
from rlbook.publish.markdown import CELL_DEFAULTS, front_matter, notebook_markdown
from rlbook.publish.page import (
    Target,
    breakable_names,
    build_figures,
    cited_keys,
    natural_tables,
    nocite,
    number_page,
    qmd_links_to_html,
    relative_href,
    render_callouts,
    resolve_crossrefs,
    scroll_boxes,
)
from rlbook.publish.pandoc_ast import attr, div, elements, inlines, pandoc_run

ASSETS = Path(__file__).resolve().parent / "assets"
SITE_ASSETS = ("book.css", "book.js")
"""The site's own style and script, copied to its root."""
PANDOC_JOBS = 2
"""Pandoc processes run at once while rendering (one per page)."""


@dataclass
class RenderedPage:
    """A page between parsing and writing: where it goes, its syntax tree and what it needs."""

    page: Page
    href: str  # output path relative to the book's root, e.g. "chapters/01-rl-loop.html"
    doc: dict
    has_code: bool
    title: str = ""


def output_href(page: Page) -> str:
    """Where a page's HTML goes in ``_book/``: beside where its ``.qmd`` sits in the repository."""
    return str(Path(page.source).with_suffix(".html").as_posix())


def render_site(
    root: Path,
    pages: list[Page],
    notebooks: dict[str, dict],
    dest: Path,
    config: dict,
    pandoc: str,
    out: Callable[[str], None] = print,
    downloads: dict[str, dict] | None = None,
) -> list[str]:
    """Write the whole book as HTML into ``dest`` and return the labels that no reference could resolve.

    ``notebooks`` maps each page's stem to its executed notebook; ``downloads``
    (the notebooks for Jupyter, by stem; ``notebooks`` when None) are copied
    to ``dest/notebooks`` for the "Download this chapter" links.
    """
    dest.mkdir(parents=True, exist_ok=True)
    defaults = {**CELL_DEFAULTS, **_execute_options(config), **_html_options(config)}
    with ThreadPoolExecutor(max_workers=PANDOC_JOBS) as pool:  # each page is its own pandoc process
        rendered = list(
            pool.map(lambda page: _parse_page(page, notebooks[page.stem], dest, defaults, pandoc, out), pages)
        )
    targets: dict[str, Target] = {}
    for item in rendered:
        item.doc["blocks"], item.title = number_page(item.page, item.href, item.doc["blocks"], targets)
        item.title = item.title or item.page.title
    missing: list[str] = []
    cited: list[str] = []
    for item in rendered:
        item.doc["blocks"] = breakable_names(
            qmd_links_to_html(resolve_crossrefs(item.doc["blocks"], item.href, targets, missing))
        )
        cited += [key for key in cited_keys(item.doc["blocks"]) if key not in cited]
    bibliography = root / "references.bib"
    for item in rendered:
        if any(div["c"][0][0] == "refs" for div in elements(item.doc["blocks"], "Div")):
            if cited:
                item.doc["meta"]["nocite"] = nocite(cited)
        elif cited_keys(item.doc["blocks"]):
            item.doc["blocks"] += [
                {"t": "Header", "c": [2, attr("references", ["unnumbered"]), inlines("References")]},
                div([], [], "refs"),
            ]
        _copy_local_images(root, item, dest)
    with ThreadPoolExecutor(max_workers=PANDOC_JOBS) as pool:
        pages_html = list(
            pool.map(
                lambda i: _page_html(rendered[i], rendered, i, config, bibliography, pandoc, out), range(len(rendered))
            )
        )
    for item, page_html in zip(rendered, pages_html):
        target = confined(dest, item.href, f"{item.page.source}: the output page {item.href!r}")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(page_html, encoding="utf-8")
    (dest / "notebooks").mkdir(exist_ok=True)
    for stem, nb in (notebooks if downloads is None else downloads).items():
        nbformat.write(nbformat.from_dict(nb), dest / "notebooks" / f"{stem}.ipynb")
    for asset in SITE_ASSETS:
        shutil.copyfile(ASSETS / asset, dest / asset)
    webworkshop.add_to_site(root, [page.source for page in pages], dest)
    out(f"  search: {search.index_site(dest)} pages indexed")
    return missing


def site_root(here: str) -> str:
    """The relative path from output page ``here`` to the site's root folder: "" or "../" (with its slash)."""
    return "../" * here.count("/")


def _execute_options(config: dict) -> dict:
    execute = config.get("execute") or {}
    return {key: execute[key] for key in ("echo", "output", "include", "warning") if key in execute}


def _html_options(config: dict) -> dict:
    html_format = (config.get("format") or {}).get("html") or {}
    return {"code-fold": html_format["code-fold"]} if "code-fold" in html_format else {}


def _parse_page(
    page: Page, nb: dict, dest: Path, defaults: dict, pandoc: str, out: Callable[[str], None]
) -> RenderedPage:
    href = output_href(page)
    media_href = relative_href(href, f"media/{page.stem}")
    page_defaults = {**defaults, **_execute_options(front_matter(nb))}
    source = notebook_markdown(nb, page, dest / "media" / page.stem, media_href, page_defaults)
    doc = json.loads(pandoc_run(pandoc, ["-f", "markdown", "-t", "json"], source.markdown, out))
    blocks = scroll_boxes(natural_tables(build_figures(render_callouts(doc["blocks"]), source.alt_text)))
    for label in source.alt_text:
        if not any(f["c"][0][0] == label and list(elements(f, "Image")) for f in elements(blocks, "Figure")):
            out(f"  warning: {page.source}: figure cell {label} produced no image")
    doc["blocks"] = blocks
    return RenderedPage(page, href, doc, source.has_code)


def _copy_local_images(root: Path, item: RenderedPage, dest: Path) -> None:
    """Copy images that the prose links by relative path (e.g. a diagram file) beside the page's HTML."""
    page_dir = (root / item.page.source).parent
    for image in elements(item.doc["blocks"], "Image"):
        src = image["c"][2][0]
        if re.match(r"^[a-z]+:|^/|^\.\./media/|^media/", src):
            continue
        found = page_dir / src
        if found.is_file():
            target = dest / Path(item.href).parent / src
            if not (within(root, found) and within(dest, target)):
                raise ValueError(f"{item.page.source}: image {src!r} lies outside the book")
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(found, target)


def _page_html(
    item: RenderedPage,
    rendered: list[RenderedPage],
    index: int,
    config: dict,
    bibliography: Path,
    pandoc: str,
    out: Callable[[str], None],
) -> str:
    book = config.get("book") or {}
    here = item.href
    args = [
        "-f",
        "json",
        "-t",
        "html5",
        "--standalone",
        "--template",
        str(ASSETS / "book.html"),
        "--mathml",
        "--toc",
        "--toc-depth=3",
        "-V",
        f"book-title={html.escape(str(book.get('title', '')))}",
        "-V",
        f"root={site_root(here)}",
        "-V",
        f"home={relative_href(here, 'index.html')}",
        "-V",
        f"sidebar={_sidebar(item, rendered)}",
        "-V",
        f"pager={_pager(rendered, index)}",
    ]
    if item.page.part == "front":
        args += [
            "-V",
            f"subtitle={html.escape(str(book.get('subtitle', '')))}",
            "-V",
            f"author={html.escape(str(book.get('author', '')))}",
            "-V",
            "is-index=true",
        ]
    if item.has_code:
        args += ["-V", f"notebook={relative_href(here, f'notebooks/{item.page.stem}.ipynb')}"]
    if bibliography.is_file():
        args += ["--citeproc", "--bibliography", str(bibliography)]
    item.doc["meta"]["pagetitle"] = {"t": "MetaString", "c": item.title}
    item.doc["meta"]["link-citations"] = {"t": "MetaBool", "c": True}
    return pandoc_run(pandoc, args, json.dumps(item.doc), out)


def _sidebar(item: RenderedPage, rendered: list[RenderedPage]) -> str:
    lines = []
    in_appendix = False
    for other in rendered:
        if other.page.part == "appendix" and not in_appendix:
            in_appendix = True
            lines.append('<li class="sidebar-part">Appendices</li>')
        current = ' class="current" aria-current="page"' if other is item else ""
        href = relative_href(item.href, other.href)
        lines.append(f'<li><a href="{href}"{current}>{html.escape(other.title)}</a></li>')
    return "<ul>\n" + "\n".join(lines) + "\n</ul>"


def _pager(rendered: list[RenderedPage], index: int) -> str:
    here = rendered[index].href
    links = []
    if index > 0:
        prev = rendered[index - 1]
        href = relative_href(here, prev.href)
        links.append(f'<a class="pager-prev" rel="prev" href="{href}">&larr; {html.escape(prev.title)}</a>')
    if index + 1 < len(rendered):
        nxt = rendered[index + 1]
        href = relative_href(here, nxt.href)
        links.append(f'<a class="pager-next" rel="next" href="{href}">{html.escape(nxt.title)} &rarr;</a>')
    return "\n".join(links)
