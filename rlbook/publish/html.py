"""The book as HTML without Quarto: executed notebooks -> pandoc markdown -> pandoc AST -> HTML pages.

Used by ``rlbook build`` for every chapter when Quarto is not installed. Each
executed notebook is written out as pandoc markdown (prose as it is, code in
foldable blocks, outputs, figures and tables as labelled divs), parsed by
pandoc into its JSON syntax tree, and then rewritten here, in Python, to do
what Quarto does for a book:

* numbers chapters (1, 2, ...), appendices (A, ...) and their sections (3.2);
* turns figure cells into ``<figure id="fig-...">`` with "Figure 3.1: caption"
  and the cell's ``fig-alt`` as the image's alt text, and numbers tables;
* resolves ``@fig-``, ``@sec-`` and ``@tbl-`` references across pages;
* renders callouts (``.callout-note`` ...) as boxes, collapsed ones as ``<details>``;
* lists every cited work on the references page.

Citations are left to pandoc's citeproc with ``references.bib``; math is
written as MathML so that nothing is fetched when a page is read offline.
"""
from __future__ import annotations

import base64
import html
import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from rlbook.publish.lint import CROSSREF_KINDS, Page, cell_options, crossref_kind, normalise_ref
from rlbook.publish import webworkshop

ASSETS = Path(__file__).resolve().parent / "assets"
CALLOUT_TITLES = {"note": "Note", "tip": "Tip", "warning": "Warning", "important": "Important", "caution": "Caution"}
IMAGE_TYPES = {"image/png": "png", "image/svg+xml": "svg", "image/jpeg": "jpg"}
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
PANDOC_JOBS = 2
"""Pandoc processes run at once while rendering (one per page)."""
CELL_DEFAULTS = {"echo": True, "output": True, "include": True, "warning": True, "code-fold": False}


# ---------------------------------------------------------------- notebook -> markdown

@dataclass
class PageSource:
    """A page ready to be parsed: its markdown and the figure alt texts that stay out of it."""

    markdown: str
    alt_text: dict[str, str] = field(default_factory=dict)
    has_code: bool = False


def notebook_markdown(nb: dict, page: Page, media_dir: Path, media_href: str, defaults: dict) -> PageSource:
    """Pandoc markdown for one executed notebook; image outputs are written into ``media_dir``.

    ``defaults`` are the book's and the page's execute options (echo, output,
    include, warning, code-fold); each cell's ``#|`` options override them.
    """
    source = PageSource("")
    parts = []
    cells = nb["cells"]
    if cells and cells[0]["cell_type"] == "raw" and _text(cells[0]["source"]).startswith("---"):
        cells = cells[1:]
    if page.title and not _has_level_one_heading(cells):
        parts.append(f"# {page.title}" + (" {.unnumbered}" if page.number is None else ""))
    for index, cell in enumerate(cells):
        if cell["cell_type"] == "markdown":
            parts.append(_text(cell["source"]))
        elif cell["cell_type"] == "code":
            source.has_code = True
            options, code = cell_options(_text(cell["source"]))
            media = _Media(media_dir, media_href, f"{page.stem}-{index}")
            parts.append(_code_cell(code, cell.get("outputs", []), {**defaults, **options}, media, source))
    source.markdown = "\n\n".join(part for part in parts if part) + "\n"
    return source


def _text(source) -> str:
    return "".join(source) if isinstance(source, list) else source


def _has_level_one_heading(cells: list) -> bool:
    return any(re.search(r"^# ", _text(c["source"]), re.MULTILINE) for c in cells if c["cell_type"] == "markdown")


@dataclass
class _Media:
    directory: Path
    href: str
    prefix: str
    count: int = 0

    def save(self, mime: str, data) -> str:
        self.count += 1
        name = f"{self.prefix}-{self.count}.{IMAGE_TYPES[mime]}"
        self.directory.mkdir(parents=True, exist_ok=True)
        if mime == "image/svg+xml":
            (self.directory / name).write_text(_text(data), encoding="utf-8")
        else:
            (self.directory / name).write_bytes(base64.b64decode(_text(data)))
        return f"{self.href}/{name}"


def _code_cell(code: str, outputs: list, options: dict, media: _Media, source: PageSource) -> str:
    if options["include"] is False:
        return ""
    label = str(options.get("label") or "")
    parts = []
    if options["echo"] is not False and code.strip():
        block = _fenced(code.strip("\n"), "python")
        parts.append(_fold(block, options["code-fold"], options.get("code-summary", "Code")))
    images: list[str] = []
    shown = []
    if options["output"] is not False:
        for output in outputs:
            shown.append(_output(output, options, media, images if label.startswith("fig-") else None))
    if label.startswith("fig-"):
        source.alt_text[label] = str(options.get("fig-alt") or "")
        body = "\n\n".join(f"![]({src})" for src in images)
        parts += shown + [f"::: {{#{label} .rlbook-figure}}\n{body}\n\n::: {{.rlbook-caption}}\n"
                          f"{options.get('fig-cap') or ''}\n:::\n:::"]
    elif label.startswith("tbl-"):
        body = "\n\n".join(shown)
        parts.append(f"::: {{#{label} .rlbook-table}}\n::: {{.rlbook-caption}}\n{options.get('tbl-cap') or ''}\n:::\n\n"
                     f"{body}\n:::")
    else:
        parts += shown
    content = "\n\n".join(part for part in parts if part)
    return f":::: {{.cell}}\n{content}\n::::" if content else ""


def _fold(block: str, fold, summary: str) -> str:
    """Quarto's code-fold: false shows the code, "show" folds it open, true folds it closed."""
    if fold is False or fold is None:
        return block
    state = " open" if fold == "show" else ""
    summary_html = f"<summary>{html.escape(str(summary))}</summary>"
    return f'<details class="code-fold"{state}>\n{summary_html}\n\n{block}\n\n</details>'


def _fenced(text: str, classes: str) -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    info = classes if " " not in classes and not classes.startswith(".") else "{" + classes + "}"
    return f"{fence}{info}\n{text}\n{fence}"


def _output(output: dict, options: dict, media: _Media, images: list[str] | None) -> str:
    kind = output["output_type"]
    if kind == "stream":
        if output["name"] == "stderr" and options["warning"] is False:
            return ""
        text = ANSI.sub("", _text(output["text"])).rstrip("\n")
        if options["output"] == "asis":
            return text
        return _fenced(text, f".cell-output .cell-output-{output['name']}") if text else ""
    if kind == "error":
        return _fenced(ANSI.sub("", "\n".join(output.get("traceback", []))), ".cell-output .cell-output-error")
    data = output.get("data", {})
    for mime in IMAGE_TYPES:
        if mime in data:
            src = media.save(mime, data[mime])
            if images is not None:
                images.append(src)
                return ""
            return f"![]({src})"
    if "text/markdown" in data:
        return _text(data["text/markdown"])
    if "text/html" in data:
        return _fenced(_text(data["text/html"]), "{=html}")
    if "text/plain" in data:
        text = _text(data["text/plain"])
        return text if options["output"] == "asis" else _fenced(text, ".cell-output .cell-output-display")
    return ""


# ---------------------------------------------------------------- the pandoc AST

def walk(node, fn: Callable[[dict], list | None]):
    """Rewrite a pandoc JSON tree bottom-up: ``fn(element)`` returns a replacement list, or None to keep it."""
    if isinstance(node, list):
        result = []
        for item in node:
            item = walk(item, fn)
            replacement = fn(item) if isinstance(item, dict) and "t" in item else None
            result.extend([item] if replacement is None else replacement)
        return result
    if isinstance(node, dict):
        return {key: walk(value, fn) for key, value in node.items()}
    return node


def elements(node, kind: str) -> Iterator[dict]:
    """Every element of type ``kind`` in a pandoc JSON tree, in document order."""
    if isinstance(node, list):
        for item in node:
            yield from elements(item, kind)
    elif isinstance(node, dict):
        if node.get("t") == kind:
            yield node
        for value in node.values():
            yield from elements(value, kind)


def plain_text(inlines: list) -> str:
    """The text of pandoc inlines, as pandoc's ``stringify`` gives it (used for titles and alt text)."""
    words = []
    for inline in inlines:
        kind, content = inline["t"], inline.get("c")
        if kind in ("Str",):
            words.append(content)
        elif kind in ("Space", "SoftBreak", "LineBreak"):
            words.append(" ")
        elif kind in ("Code", "Math"):
            words.append(content[1])
        elif kind in ("Emph", "Strong", "Underline", "Strikeout", "SmallCaps", "Superscript", "Subscript"):
            words.append(plain_text(content))
        elif kind in ("Span", "Link", "Image", "Cite", "Quoted"):
            words.append(plain_text(content[1]))
    return "".join(words)


def _str(text: str) -> list:
    inlines: list = []
    for i, word in enumerate(text.split(" ")):
        if i:
            inlines.append({"t": "Space"})
        if word:
            inlines.append({"t": "Str", "c": word})
    return inlines


def _attr(identifier: str = "", classes: list | None = None, pairs: list | None = None) -> list:
    return [identifier, classes or [], pairs or []]


def _span(text: str, cls: str) -> dict:
    return {"t": "Span", "c": [_attr("", [cls]), _str(text)]}


def _raw(text: str) -> dict:
    return {"t": "RawBlock", "c": ["html", text]}


def _div(cls: list[str], blocks: list, identifier: str = "") -> dict:
    return {"t": "Div", "c": [_attr(identifier, cls), blocks]}


def pandoc_run(pandoc: str, args: list[str], text: str, out: Callable[[str], None]) -> str:
    """Run pandoc on ``text`` and return its output; its warnings are passed to ``out``."""
    done = subprocess.run([pandoc, *args], input=text, capture_output=True, text=True, check=False)
    for line in done.stderr.splitlines():
        out(f"  pandoc: {line}")
    if done.returncode:
        raise RuntimeError(f"pandoc {' '.join(args)} failed with exit {done.returncode}")
    return done.stdout


# ---------------------------------------------------------------- per-page rewriting

def render_callouts(blocks: list) -> list:
    """Quarto callouts (``::: {.callout-note}``) as titled boxes; ``collapse="true"`` ones as closed ``<details>``.

    The title is the callout's ``title`` attribute, else its first heading,
    else the kind ("Note", "Tip", ...); ``collapse="false"`` gives an open
    ``<details>``.
    """
    def rewrite(element: dict) -> list | None:
        if element["t"] != "Div":
            return None
        (identifier, classes, pairs), body = element["c"]
        kinds = [c[len("callout-"):] for c in classes if c.startswith("callout-") and c[8:] in CALLOUT_TITLES]
        if not kinds:
            return None
        attrs = dict(pairs)
        title = _str(attrs["title"]) if "title" in attrs else None
        if title is None and body and body[0]["t"] == "Header":
            title, body = body[0]["c"][2], body[1:]
        title = title or _str(CALLOUT_TITLES[kinds[0]])
        cls = f"callout callout-{kinds[0]}"
        collapse = attrs.get("collapse")
        if collapse not in ("true", "false"):
            parts = [_div(["callout-title"], [{"t": "Plain", "c": title}]), _div(["callout-body"], body)]
            return [_div(["callout", f"callout-{kinds[0]}"], parts, identifier)]
        opened = " open" if collapse == "false" else ""
        ident = f' id="{html.escape(identifier)}"' if identifier else ""
        return [_raw(f'<details class="{cls}"{ident}{opened}>'), _raw('<summary class="callout-title">'),
                {"t": "Plain", "c": title}, _raw("</summary>"), _div(["callout-body"], body), _raw("</details>")]

    return walk(blocks, rewrite)


def build_figures(blocks: list, alt_text: dict[str, str]) -> list:
    """Figure-cell divs as pandoc Figures with the cell's caption, and every labelled image's alt text set.

    An image's alt text is the cell's ``fig-alt`` (or a markdown figure's
    ``fig-alt`` attribute) rather than its caption, as in Quarto.
    """
    def rewrite(element: dict) -> list | None:
        if element["t"] == "Div" and "rlbook-figure" in element["c"][0][1]:
            identifier = element["c"][0][0]
            content = [_plain(b) for b in element["c"][1] if not _is_caption(b)]
            captions = [b for b in element["c"][1] if _is_caption(b)]
            caption = [_plain(b) for b in (captions[0]["c"][1] if captions else [])]
            alt = alt_text.get(identifier, "")
            content = walk(content, lambda e: [_with_alt(e, alt)] if e["t"] == "Image" else None)
            return [{"t": "Figure", "c": [_attr(identifier), [None, caption], content or [{"t": "Plain", "c": []}]]}]
        if element["t"] == "Figure" and element["c"][0][0].startswith("fig-"):
            return [walk(element, lambda e: [_alt_from_attr(e)] if e["t"] == "Image" else None)]
        return None

    return walk(blocks, rewrite)


def _is_caption(block: dict) -> bool:
    return block["t"] == "Div" and "rlbook-caption" in block["c"][0][1]


def _plain(block: dict) -> dict:
    return {"t": "Plain", "c": block["c"]} if block["t"] == "Para" else block


def _with_alt(image: dict, alt: str) -> dict:
    attr, _, target = image["c"]
    return {"t": "Image", "c": [attr, _str(alt), target]}


def _alt_from_attr(image: dict) -> dict:
    (identifier, classes, pairs), description, target = image["c"]
    attrs = dict(pairs)
    alt = attrs.pop("fig-alt", None)
    return {"t": "Image", "c": [[identifier, classes, list(attrs.items())], _str(alt) if alt else description, target]}


# ---------------------------------------------------------------- numbering and cross-references

@dataclass(frozen=True)
class Target:
    """Where a label points (``href``: output page and anchor) and how a reference to it reads."""

    href: str
    text: str  # "Figure 3.1", "Section 3.2", "Chapter 3" ...
    number: str  # "3.1" ("" when unnumbered)


def number_page(page: Page, href: str, blocks: list, targets: dict[str, Target]) -> tuple[list, str]:
    """Number a page's headings, figures and tables as Quarto numbers a book, and record their labels.

    Headings get "3", "3.1", "3.1.1" on chapter 3 (nothing on unnumbered
    pages or ``{.unnumbered}`` headings); figures and tables are counted per
    page ("Figure 3.1"). Returns the rewritten blocks and the page's title.
    """
    counters = [0] * 7
    counts = {"fig": 0, "tbl": 0}
    title = ""

    def rewrite(element: dict) -> list | None:
        nonlocal title
        kind = element["t"]
        if kind == "Header":
            level, (identifier, classes, pairs), inlines = element["c"]
            number = _heading_number(page, level, counters) if "unnumbered" not in classes else ""
            text = plain_text(inlines)
            if level == 1 and not title:
                title = (f"{number} " if number else "") + text
            if identifier.startswith("sec-"):
                word = "Chapter" if page.part == "main" else "Appendix"
                ref_text = f"{word} {number}" if level == 1 and number else (f"Section {number}" if number else text)
                targets[identifier] = Target(f"{href}#{identifier}", ref_text, number)
            if number:
                inlines = [_span(number, "header-section-number"), {"t": "Space"}, *inlines]
            return [{"t": "Header", "c": [level, [identifier, classes, pairs], inlines]}]
        if kind == "Figure" and element["c"][0][0].startswith("fig-"):
            return [_number_float(element, "fig", page, href, counts, targets)]
        if kind == "Table" and element["c"][0][0].startswith("tbl-"):
            return [_number_float(element, "tbl", page, href, counts, targets)]
        if kind == "Div" and "rlbook-table" in element["c"][0][1]:
            return [_number_float(element, "tbl", page, href, counts, targets)]
        return None

    return walk(blocks, rewrite), title


def _heading_number(page: Page, level: int, counters: list[int]) -> str:
    if page.number is None:
        return ""
    if level == 1:
        counters[1:] = [0] * 6
        return page.number
    counters[level - 1] += 1
    counters[level:] = [0] * (7 - level)
    return ".".join([page.number, *(str(c) for c in counters[1:level])])


def _number_float(element: dict, kind: str, page: Page, href: str, counts: dict, targets: dict[str, Target]) -> dict:
    counts[kind] += 1
    number = f"{page.number}.{counts[kind]}" if page.number else str(counts[kind])
    identifier = element["c"][0][0]
    text = f"{CROSSREF_KINDS[kind]}\u00a0{number}"
    targets[identifier] = Target(f"{href}#{identifier}", text, number)
    prefix = [_span(f"{text}:", "float-number"), {"t": "Space"}]
    if element["t"] == "Div":  # a table cell: its caption is a div of its own
        blocks = []
        for block in element["c"][1]:
            if _is_caption(block):
                caption = [_plain(b) for b in block["c"][1]] or [{"t": "Plain", "c": []}]
                caption[0] = {"t": "Plain", "c": prefix + caption[0]["c"]}
                block = _div(["table-caption"], caption)
            blocks.append(block)
        return _div(["table-float"], blocks, identifier)
    caption_blocks = [_plain(b) for b in element["c"][1][1]] or [{"t": "Plain", "c": []}]  # Figure and Table alike
    caption_blocks[0] = {"t": "Plain", "c": prefix + caption_blocks[0]["c"]}
    content = list(element["c"])
    content[1] = [element["c"][1][0], caption_blocks]
    return {"t": element["t"], "c": content}


def resolve_crossrefs(blocks: list, here: str, targets: dict[str, Target], missing: list[str]) -> list:
    """Replace ``@fig-x``, ``[@sec-x]`` and ``[-@tbl-x]`` with links to their targets, relative to page ``here``.

    ``[-@fig-x]`` gives the number alone, as in Quarto; unknown labels become
    a bold "??label" and are appended to ``missing``. Citations of works are
    left for citeproc.
    """
    def rewrite(element: dict) -> list | None:
        if element["t"] != "Cite":
            return None
        citations, content = element["c"]
        if not any(crossref_kind(c["citationId"]) for c in citations):
            return None
        result, works = [], []
        for citation in citations:
            if not crossref_kind(citation["citationId"]):
                works.append(citation)
                continue
            if result:
                result += [{"t": "Str", "c": ";"}, {"t": "Space"}]
            result += citation["citationPrefix"] + ([{"t": "Space"}] if citation["citationPrefix"] else [])
            result.append(_crossref_link(citation, here, targets, missing))
            result += citation["citationSuffix"]
        if works:
            result = [{"t": "Cite", "c": [works, content]}, {"t": "Space"}, *result]
        return result

    return walk(blocks, rewrite)


def qmd_links_to_html(blocks: list) -> list:
    """Relative links to other pages' ``.qmd`` files point at their HTML, as Quarto does (``a.qmd#x``: ``a.html#x``)."""
    def rewrite(element: dict) -> list | None:
        if element["t"] != "Link":
            return None
        attr, inlines, (url, title) = element["c"]
        path, hash_, anchor = url.partition("#")
        if not path.endswith(".qmd") or re.match(r"^[a-z]+:", path):
            return None
        return [{"t": "Link", "c": [attr, inlines, [path[:-len(".qmd")] + ".html" + hash_ + anchor, title]]}]

    return walk(blocks, rewrite)


def _crossref_link(citation: dict, here: str, targets: dict[str, Target], missing: list[str]) -> dict:
    label = normalise_ref(citation["citationId"])
    target = targets.get(label)
    if target is None:
        missing.append(label)
        return {"t": "Strong", "c": [{"t": "Str", "c": f"??{label}"}]}
    number_only = citation["citationMode"]["t"] == "SuppressAuthor" and target.number
    text = target.number if number_only else target.text
    page, _, anchor = target.href.partition("#")
    url = f"#{anchor}" if page == here else f"{relative_href(here, page)}#{anchor}"
    return {"t": "Link", "c": [_attr("", ["quarto-xref"]), _str(text), [url, ""]]}


def relative_href(here: str, there: str) -> str:
    """The link from output page ``here`` to output file ``there`` (both relative to the book's root)."""
    return os.path.relpath(there, os.path.dirname(here) or ".").replace(os.sep, "/")


def cited_keys(blocks: list) -> list[str]:
    """The citation keys of works (not cross-references) cited in ``blocks``, in order of first citation."""
    keys: list[str] = []
    for cite in elements(blocks, "Cite"):
        for citation in cite["c"][0]:
            key = citation["citationId"]
            if not crossref_kind(key) and key not in keys:
                keys.append(key)
    return keys


def nocite(keys: list[str]) -> dict:
    """Pandoc metadata that makes citeproc list ``keys`` although the page does not cite them."""
    citations = [{"citationId": key, "citationPrefix": [], "citationSuffix": [],
                  "citationMode": {"t": "NormalCitation"}, "citationNoteNum": 0, "citationHash": 0} for key in keys]
    return {"t": "MetaInlines", "c": [{"t": "Cite", "c": [citations, [{"t": "Str", "c": "@*"}]]}]}


# ---------------------------------------------------------------- the site

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


def render_site(root: Path, pages: list[Page], notebooks: dict[str, dict], dest: Path, config: dict,
                pandoc: str, out: Callable[[str], None] = print) -> list[str]:
    """Write the whole book as HTML into ``dest`` and return the labels that no reference could resolve.

    ``notebooks`` maps each page's stem to its executed notebook; they are
    copied to ``dest/notebooks`` for the "Download this chapter" links.
    """
    dest.mkdir(parents=True, exist_ok=True)
    defaults = {**CELL_DEFAULTS, **_execute_options(config), **_html_options(config)}
    with ThreadPoolExecutor(max_workers=PANDOC_JOBS) as pool:  # each page is its own pandoc process
        rendered = list(pool.map(lambda page: _parse_page(page, notebooks[page.stem], dest, defaults, pandoc, out),
                                 pages))
    targets: dict[str, Target] = {}
    for item in rendered:
        item.doc["blocks"], item.title = number_page(item.page, item.href, item.doc["blocks"], targets)
        item.title = item.title or item.page.title
    missing: list[str] = []
    cited: list[str] = []
    for item in rendered:
        item.doc["blocks"] = qmd_links_to_html(resolve_crossrefs(item.doc["blocks"], item.href, targets, missing))
        cited += [key for key in cited_keys(item.doc["blocks"]) if key not in cited]
    bibliography = root / "references.bib"
    for item in rendered:
        if any(div["c"][0][0] == "refs" for div in elements(item.doc["blocks"], "Div")):
            if cited:
                item.doc["meta"]["nocite"] = nocite(cited)
        elif cited_keys(item.doc["blocks"]):
            item.doc["blocks"] += [{"t": "Header", "c": [2, _attr("references", ["unnumbered"]), _str("References")]},
                                   _div([], [], "refs")]
        _copy_local_images(root, item, dest)
    with ThreadPoolExecutor(max_workers=PANDOC_JOBS) as pool:
        pages_html = list(pool.map(lambda i: _page_html(rendered[i], rendered, i, config, bibliography, pandoc, out),
                                   range(len(rendered))))
    for item, page_html in zip(rendered, pages_html):
        target = dest / item.href
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(page_html, encoding="utf-8")
    (dest / "notebooks").mkdir(exist_ok=True)
    for stem, nb in notebooks.items():
        (dest / "notebooks" / f"{stem}.ipynb").write_text(json.dumps(nb, indent=1), encoding="utf-8")
    shutil.copyfile(ASSETS / "book.css", dest / "book.css")
    webworkshop.add_to_site(root, [page.source for page in pages], dest)
    return missing


def _execute_options(config: dict) -> dict:
    execute = config.get("execute") or {}
    return {key: execute[key] for key in ("echo", "output", "include", "warning") if key in execute}


def _html_options(config: dict) -> dict:
    html_format = ((config.get("format") or {}).get("html") or {})
    return {"code-fold": html_format["code-fold"]} if "code-fold" in html_format else {}


def _parse_page(page: Page, nb: dict, dest: Path, defaults: dict, pandoc: str,
                out: Callable[[str], None]) -> RenderedPage:
    href = output_href(page)
    media_href = relative_href(href, f"media/{page.stem}")
    page_defaults = {**defaults, **_execute_options(_front_matter(nb))}
    source = notebook_markdown(nb, page, dest / "media" / page.stem, media_href, page_defaults)
    doc = json.loads(pandoc_run(pandoc, ["-f", "markdown", "-t", "json"], source.markdown, out))
    blocks = build_figures(render_callouts(doc["blocks"]), source.alt_text)
    for label in source.alt_text:
        if not any(f["c"][0][0] == label and list(elements(f, "Image")) for f in elements(blocks, "Figure")):
            out(f"  warning: {page.source}: figure cell {label} produced no image")
    doc["blocks"] = blocks
    return RenderedPage(page, href, doc, source.has_code)


def _front_matter(nb: dict) -> dict:
    cells = nb["cells"]
    if cells and cells[0]["cell_type"] == "raw" and _text(cells[0]["source"]).startswith("---"):
        data = yaml.safe_load(_text(cells[0]["source"]).strip().strip("-"))
        return data if isinstance(data, dict) else {}
    return {}


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
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(found, target)


def _page_html(item: RenderedPage, rendered: list[RenderedPage], index: int, config: dict, bibliography: Path,
               pandoc: str, out: Callable[[str], None]) -> str:
    book = config.get("book") or {}
    here = item.href
    args = ["-f", "json", "-t", "html5", "--standalone", "--template", str(ASSETS / "book.html"), "--mathml",
            "--toc", "--toc-depth=3",
            "-V", f"book-title={html.escape(str(book.get('title', '')))}",
            "-V", f"css={relative_href(here, 'book.css')}",
            "-V", f"home={relative_href(here, 'index.html')}",
            "-V", f"sidebar={_sidebar(item, rendered)}",
            "-V", f"pager={_pager(rendered, index)}"]
    if item.page.part == "front":
        args += ["-V", f"subtitle={html.escape(str(book.get('subtitle', '')))}",
                 "-V", f"author={html.escape(str(book.get('author', '')))}", "-V", "is-index=true"]
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
