"""One page of the book as Quarto renders it, done on pandoc's syntax tree: callouts, figures, numbers, references.

The second step of the pandoc backend of ``rlbook build``: each page's tree,
parsed by pandoc from :mod:`rlbook.publish.markdown`'s output, is rewritten
here to do what Quarto does for a book:

* numbers chapters (1, 2, ...), appendices (A, ...) and their sections (3.2);
* turns figure cells into ``<figure id="fig-...">`` with "Figure 3.1: caption"
  and the cell's ``fig-alt`` as the image's alt text, its images (one per
  panel) in a row that wraps, and numbers tables;
* resolves ``@fig-``, ``@sec-`` and ``@tbl-`` references across pages;
* renders callouts (``.callout-note`` ...) as boxes, collapsed ones as ``<details>``;
* lists every cited work on the references page (with citeproc);
* lets tables and code names wrap only where a reader expects it: a table
  takes the width its content needs (and scrolls in its own box when that
  is wider than the page), and a name in code text breaks only after a
  ``_``, ``.`` or ``/``, never inside a word.
"""

from __future__ import annotations

import html
import os
import re
from dataclasses import dataclass

from rlbook.publish.config import Page, heading_number
from rlbook.publish.lint import CROSSREF_KINDS, crossref_kind, normalise_ref
from rlbook.publish.pandoc_ast import attr, div, elements, inlines, plain_text, raw, span, walk

CALLOUT_TITLES = {"note": "Note", "tip": "Tip", "warning": "Warning", "important": "Important", "caution": "Caution"}
WIDE_FIGURE_PX = 620
"""A figure whose panels, side by side, are wider than this many CSS pixels (the text column where the margin
begins to show, at 1200 px) may use the margin beside the text (``figure-wide`` in ``assets/book.css``)."""
PANEL_GAP_PX = 16
"""The room between two panels of a figure (``.panels`` in ``assets/book.css``)."""
NAME_BREAK = re.compile(r"(?<=[A-Za-z0-9][_./])(?=[A-Za-z0-9])")
"""Where a name in code text may break: after a ``_``, ``.`` or ``/`` that joins two of its words."""


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
        kinds = [c[len("callout-") :] for c in classes if c.startswith("callout-") and c[8:] in CALLOUT_TITLES]
        if not kinds:
            return None
        attrs = dict(pairs)
        title = inlines(attrs["title"]) if "title" in attrs else None
        if title is None and body and body[0]["t"] == "Header":
            title, body = body[0]["c"][2], body[1:]
        title = title or inlines(CALLOUT_TITLES[kinds[0]])
        cls = f"callout callout-{kinds[0]}"
        collapse = attrs.get("collapse")
        if collapse not in ("true", "false"):
            parts = [div(["callout-title"], [{"t": "Plain", "c": title}]), div(["callout-body"], body)]
            return [div(["callout", f"callout-{kinds[0]}"], parts, identifier)]
        opened = " open" if collapse == "false" else ""
        ident = f' id="{html.escape(identifier)}"' if identifier else ""
        return [
            raw(f'<details class="{cls}"{ident}{opened}>'),
            raw('<summary class="callout-title">'),
            {"t": "Plain", "c": title},
            raw("</summary>"),
            div(["callout-body"], body),
            raw("</details>"),
        ]

    return walk(blocks, rewrite)


def build_figures(blocks: list, alt_text: dict[str, str]) -> list:
    """Figure-cell divs as pandoc Figures with the cell's caption, and every labelled image's alt text set.

    An image's alt text is the cell's ``fig-alt`` (or a markdown figure's
    ``fig-alt`` attribute) rather than its caption, as in Quarto. The
    ``fig-alt`` describes the whole figure, so of a figure of several panels
    only the first image carries it, and each other panel is named by its
    place, "Panel 2 of 4 (described with panel 1)", so that a screen reader
    reads the description once (the Quarto site's ``assets/figure-panels.lua``
    does the same).
    """

    def panel_alt(alt: str, place: int, panels: int) -> str:
        return alt if place == 1 else f"Panel {place} of {panels} (described with panel 1)"

    def rewrite(element: dict) -> list | None:
        if element["t"] == "Div" and "rlbook-figure" in element["c"][0][1]:
            identifier = element["c"][0][0]
            content = [_plain(b) for b in element["c"][1] if not _is_caption(b)]
            captions = [b for b in element["c"][1] if _is_caption(b)]
            caption = [_plain(b) for b in (captions[0]["c"][1] if captions else [])]
            alt = alt_text.get(identifier, "")
            count = len(list(elements(content, "Image")))
            place = iter(range(1, count + 1))
            content = walk(
                content, lambda e: [_with_alt(e, panel_alt(alt, next(place), count))] if e["t"] == "Image" else None
            )
            images = list(elements(content, "Image"))
            drawn = sum(int(dict(i["c"][0][2]).get("width", 0)) for i in images) + PANEL_GAP_PX * (len(images) - 1)
            classes = ["figure-wide"] if drawn > WIDE_FIGURE_PX else []
            panels = [div(["panels"], content)] if content else [{"t": "Plain", "c": []}]
            return [{"t": "Figure", "c": [attr(identifier, classes), [None, caption], panels]}]
        if element["t"] == "Figure" and element["c"][0][0].startswith("fig-"):
            return [walk(element, lambda e: [_alt_fromattr(e)] if e["t"] == "Image" else None)]
        return None

    return walk(blocks, rewrite)


def _is_caption(block: dict) -> bool:
    return block["t"] == "Div" and "rlbook-caption" in block["c"][0][1]


def _plain(block: dict) -> dict:
    return {"t": "Plain", "c": block["c"]} if block["t"] == "Para" else block


def _with_alt(image: dict, alt: str) -> dict:
    attr, _, target = image["c"]
    return {"t": "Image", "c": [attr, inlines(alt), target]}


def _alt_fromattr(image: dict) -> dict:
    (identifier, classes, pairs), description, target = image["c"]
    attrs = dict(pairs)
    alt = attrs.pop("fig-alt", None)
    return {
        "t": "Image",
        "c": [[identifier, classes, list(attrs.items())], inlines(alt) if alt else description, target],
    }


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
            number = heading_number(page, level, counters) if "unnumbered" not in classes else ""
            text = plain_text(inlines)
            if level == 1 and not title:
                title = (f"{number} " if number else "") + text
            if identifier.startswith("sec-"):
                word = "Chapter" if page.part == "main" else "Appendix"
                ref_text = f"{word} {number}" if level == 1 and number else (f"Section {number}" if number else text)
                targets[identifier] = Target(f"{href}#{identifier}", ref_text, number)
            if number:
                inlines = [span(number, "header-section-number"), {"t": "Space"}, *inlines]
            return [{"t": "Header", "c": [level, [identifier, classes, pairs], inlines]}]
        if kind == "Figure" and element["c"][0][0].startswith("fig-"):
            return [_number_float(element, "fig", page, href, counts, targets)]
        if kind == "Table" and element["c"][0][0].startswith("tbl-"):
            return [_number_float(element, "tbl", page, href, counts, targets)]
        if kind == "Div" and "rlbook-table" in element["c"][0][1]:
            return [_number_float(element, "tbl", page, href, counts, targets)]
        return None

    return walk(blocks, rewrite), title


def _number_float(element: dict, kind: str, page: Page, href: str, counts: dict, targets: dict[str, Target]) -> dict:
    counts[kind] += 1
    number = f"{page.number}.{counts[kind]}" if page.number else str(counts[kind])
    identifier = element["c"][0][0]
    text = f"{CROSSREF_KINDS[kind]}\u00a0{number}"
    targets[identifier] = Target(f"{href}#{identifier}", text, number)
    prefix = [span(f"{text}:", "float-number"), {"t": "Space"}]
    if element["t"] == "Div":  # a table cell: its caption is a div of its own
        blocks = []
        for block in element["c"][1]:
            if _is_caption(block):
                caption = [_plain(b) for b in block["c"][1]] or [{"t": "Plain", "c": []}]
                caption[0] = {"t": "Plain", "c": prefix + caption[0]["c"]}
                block = div(["table-caption"], caption)
            blocks.append(block)
        return div(["table-float"], blocks, identifier)
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
        result: list[dict]
        works: list[dict]
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
        return [{"t": "Link", "c": [attr, inlines, [path[: -len(".qmd")] + ".html" + hash_ + anchor, title]]}]

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
    return {"t": "Link", "c": [attr("", ["quarto-xref"]), inlines(text), [url, ""]]}


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
    citations = [
        {
            "citationId": key,
            "citationPrefix": [],
            "citationSuffix": [],
            "citationMode": {"t": "NormalCitation"},
            "citationNoteNum": 0,
            "citationHash": 0,
        }
        for key in keys
    ]
    return {"t": "MetaInlines", "c": [{"t": "Cite", "c": [citations, [{"t": "Str", "c": "@*"}]]}]}


def breakable_names(blocks: list) -> list:
    """Code text (``Code`` inlines) as HTML that may break only between the parts of a name (see :data:`NAME_BREAK`).

    The browser otherwise either breaks a long name anywhere, letter by
    letter in a narrow table column, or never, widening the page on a phone.
    A ``<wbr>`` is no character: copying the name copies it whole.
    """

    def rewrite(element: dict) -> list | None:
        if element["t"] != "Code":
            return None
        (identifier, classes, _), code = element["c"]
        if not NAME_BREAK.search(code):
            return None
        ident = f' id="{html.escape(identifier)}"' if identifier else ""
        cls = f' class="{html.escape(" ".join(classes))}"' if classes else ""
        parts = NAME_BREAK.split(code)
        return [
            {
                "t": "RawInline",
                "c": ["html", f"<code{ident}{cls}>" + "<wbr>".join(html.escape(p) for p in parts) + "</code>"],
            }
        ]

    return walk(blocks, rewrite)


def natural_tables(blocks: list) -> list:
    """Tables without the column widths pandoc gives a table with long rows, so the browser sizes each column to
    its content instead of squeezing words into a fixed share of the page."""

    def rewrite(element: dict) -> list | None:
        if element["t"] != "Table":
            return None
        content = list(element["c"])
        content[2] = [[align, {"t": "ColWidthDefault"}] for align, _ in content[2]]
        return [{"t": "Table", "c": content}]

    return walk(blocks, rewrite)


def scroll_boxes(blocks: list) -> list:
    """Every table and display equation in a box of its own that scrolls sideways when it is wider than the page.

    A wide table or a long equation would otherwise widen the whole page on
    a phone (``.table-scroll`` and ``.display-math`` in ``assets/book.css``).
    """

    def rewrite(element: dict) -> list | None:
        if element["t"] == "Table":
            return [div(["table-scroll"], [element])]
        if element["t"] == "Math" and element["c"][0]["t"] == "DisplayMath":
            return [{"t": "Span", "c": [attr("", ["display-math"]), [element]]}]
        return None

    return walk(blocks, rewrite)
