"""Quarto's site finished as the pandoc site is: figures that follow the colour scheme, a search index of prose.

Used by Quarto's post-render step (:mod:`rlbook.publish.postrender`), on the
output folder Quarto has just written:

* Quarto writes each figure as the SVG the kernel drew, a white sheet in
  dark mode; :func:`theme_figures` gives each the dark variant the pandoc site's
  figures have (:func:`rlbook.figures.style.themed_svg`), which follows the
  page's scheme (the Quarto themes set ``color-scheme``, ``assets/quarto-light.scss``
  and ``assets/quarto-dark.scss``);
* Quarto's search index (``search.json``) holds the text of each section as the
  browser reads it, and a MathML formula reads twice there: as shown, then as
  the TeX it was written in (its ``<annotation>``). :func:`clean_search` keeps
  the formula as shown, and leaves out what the pandoc site's search leaves
  out (:data:`rlbook.publish.search.IGNORED`): code listings, printed outputs
  and the folds' "Code" labels, so that a search for ``markdown_table`` finds
  no section that only calls it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from rlbook.figures.style import themed_svg

THEMED = "@media (prefers-color-scheme: dark)"
"""What a themed SVG holds and a matplotlib SVG does not: the rule that switches its colours."""


def theme_figures(site: Path) -> int:
    """Give every figure Quarto wrote into ``site`` (``*_files/figure-html/*.svg``) its dark variant; returns how
    many it changed. A figure themed already (by an earlier render of another page) is left as it is."""
    changed = 0
    for figure in sorted(site.glob("**/*_files/figure-html/*.svg")):
        svg = figure.read_text(encoding="utf-8")
        if THEMED in svg:
            continue
        figure.write_text(themed_svg(svg), encoding="utf-8")
        changed += 1
    return changed


CONTEXT = (40, 20, 10)
"""How much of the text before a formula is matched with it, longest first, so that a short formula ("t") is
cleaned where it stands and nowhere else; a shorter context serves a formula near the start of its section."""


class _Text(HTMLParser):
    """A page's text as Quarto's indexer reads it (its ``textContent``), in pieces: prose, and each formula with
    and without its TeX; and each heading's and the title's text, with and without the TeX of its formulas."""

    SKIPPED = ("script", "style")
    HEADINGS = ("title", "h1", "h2")

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.pieces: list[tuple[str, str]] = []  # (the text Quarto reads, the text shown)
        self.headings: dict[str, str] = {}
        self.math = 0  # open <math> elements
        self.annotation = 0  # open <annotation> elements inside one
        self.skipped = 0
        self.heading: str | None = None  # the open heading's tag
        self.heading_from = 0  # the piece it starts at
        self.formula: list[list[str]] = [[], []]

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag in self.SKIPPED:
            self.skipped += 1
        elif tag == "math":
            self.math += 1
        elif self.math and tag in ("annotation", "annotation-xml"):
            self.annotation += 1
        elif tag in self.HEADINGS and self.heading is None:
            self.heading, self.heading_from = tag, len(self.pieces)

    def handle_endtag(self, tag: str) -> None:
        if tag in self.SKIPPED and self.skipped:
            self.skipped -= 1
        elif self.math and tag in ("annotation", "annotation-xml"):
            self.annotation = max(0, self.annotation - 1)
        elif tag == "math" and self.math:
            self.math -= 1
            if not self.math:
                self.pieces.append(("".join(self.formula[0]), "".join(self.formula[1])))
                self.formula, self.annotation = [[], []], 0
        elif tag == self.heading:
            pieces = self.pieces[self.heading_from :]
            self.headings["".join(read for read, _ in pieces)] = "".join(shown for _, shown in pieces)
            self.heading = None

    def handle_data(self, data: str) -> None:
        if self.skipped:
            return
        if not self.math:
            self.pieces.append((data, data))
            return
        self.formula[0].append(data)
        if not self.annotation:
            self.formula[1].append(data)


@dataclass(frozen=True)
class Formula:
    """A formula of a page as Quarto's index holds it: the text before it on the page, then its text with TeX."""

    before: str
    read: str
    shown: str


def page_formulas(html: str) -> tuple[list[Formula], dict[str, str]]:
    """The formulas of a page whose TeX Quarto's index would hold, in the order of the page, and the text of each
    heading (and the title) that holds one, with and without the TeX."""
    parser = _Text()
    parser.feed(html)
    formulas, shown = [], ""
    for read, seen in parser.pieces:
        if read != seen:
            formulas.append(Formula(shown[-max(CONTEXT) :], read, seen))
        shown += seen
    return formulas, {read: seen for read, seen in parser.headings.items() if read != seen}


class _Code(HTMLParser):
    """The text Quarto's indexer reads in a page's code listings, printed outputs and fold labels, in the order of
    the page: one string per run of them with only white space between (a fold's "Code" label and its listing)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.runs: list[list[str]] = []
        self.open: list[str] = []
        self.inside = -1  # the depth of the open element left out, or -1
        self.folds: list[int] = []  # the depths of the open code folds
        self.between = ""  # the text read since the last element left out

    def handle_starttag(self, tag: str, attrs: list) -> None:
        classes = (dict(attrs).get("class") or "").split()
        if tag not in VOID:
            self.open.append(tag)
        if tag == "details" and "code-fold" in classes:
            self.folds.append(len(self.open))
        if self.inside < 0 and (
            tag == "pre"
            or (tag == "div" and {"cell-output-stdout", "cell-output-stderr"} & set(classes))
            or (tag == "summary" and self.folds and self.folds[-1] == len(self.open) - 1)
        ):
            self.inside = len(self.open)
            if self.between.strip() or not self.runs:
                self.runs.append([])
            elif self.between:
                self.runs[-1].append(self.between)

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID or tag not in self.open:
            return
        while self.open:
            closed = self.open.pop()
            if len(self.open) < self.inside:
                self.inside, self.between = -1, ""
            if self.folds and len(self.open) < self.folds[-1]:
                self.folds.pop()
            if closed == tag:
                break

    def handle_data(self, data: str) -> None:
        if self.inside >= 0:
            self.runs[-1].append(data)
        else:
            self.between += data


VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"})
"""Elements with no end tag."""


def page_code(html: str) -> list[str]:
    """What Quarto's index holds of a page's code listings, printed outputs and fold labels (:class:`_Code`)."""
    parser = _Code()
    parser.feed(html)
    return ["".join(run) for run in parser.runs if "".join(run).strip()]


def without_code(text: str, code: list[str]) -> str:
    """A section's text from Quarto's index without the page's ``code`` found in it: each piece is looked for
    after the one before it, white space matched loosely, and cut out with the white space after it."""
    at = 0
    for piece in code:
        pattern = r"\s*".join(re.escape(_encoded(word)) for word in piece.split())
        found = re.compile(pattern + r"\s*").search(text, at)
        if found:
            text, at = text[: found.start()] + text[found.end() :], found.start()
    return text


def _encoded(text: str) -> str:
    """Text as Quarto's indexer stores it: ``<`` and ``>`` as entities, nothing else."""
    return text.replace("<", "&lt;").replace(">", "&gt;")


def without_tex(text: str, formulas: list[Formula]) -> str:
    """A section's text from Quarto's index with each of the page's ``formulas`` found in it as shown: each is
    found after the one before it, with as much of the text before it as the section holds (:data:`CONTEXT`)."""
    at = 0  # where the last formula cleaned ends: the next one starts after it, its context may not
    for formula in formulas:
        read, shown = _encoded(formula.read), _encoded(formula.shown)
        for length in CONTEXT:
            before = _encoded(formula.before[-length:])
            found = text.find(before + read, max(0, at - len(before)))
            if found >= 0:
                start = found + len(before)
                text = text[:start] + shown + text[start + len(read) :]
                at = start + len(shown)
                break
    return text


def clean_search(site: Path) -> int:
    """Drop the code (:func:`page_code`) and each formula's TeX from Quarto's search index in ``site``
    (``search.json``), keeping the formula as shown; returns how many entries changed. A site without the index
    is left as it is."""
    index = site / "search.json"
    if not index.is_file():
        return 0
    entries = json.loads(index.read_text(encoding="utf-8"))
    pages: dict[str, tuple[list[Formula], dict[str, str], list[str]]] = {}
    changed = 0
    for entry in entries:
        page = str(entry.get("href", "")).split("#")[0]
        if page not in pages:
            html = site / page
            text = html.read_text(encoding="utf-8") if html.is_file() else ""
            pages[page] = (*page_formulas(text), page_code(text))
        formulas, headings, code = pages[page]
        before = dict(entry)
        for field in ("title", "section"):
            value = entry.get(field)
            if isinstance(value, str) and value in headings:
                entry[field] = headings[value]
        if isinstance(entry.get("text"), str):
            entry["text"] = without_tex(without_code(entry["text"], code), formulas)
        changed += entry != before
    if changed:
        index.write_text(json.dumps(entries, indent=2, ensure_ascii=False), encoding="utf-8")
    return changed
