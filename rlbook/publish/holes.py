"""What a published page must not contain: placeholders, empty tables, figures without a picture.

Used by ``rlbook build`` on the site that either backend wrote, pandoc's or
Quarto's, before it replaces ``_book/``: a page with a hole fails the build
and the previous book stays. A hole is text that stands in for a result the
build could not compute (:data:`PLACEHOLDERS`, such as the "(needs TRL)" that
the TRL appendix once showed without its extra), a table with no filled cell,
a figure with no image, or a table float (Quarto's captioned table) with no
table.
"""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

PLACEHOLDERS = ("(needs TRL)", "TRL is not installed")
"""Phrases that mark a result that was not computed."""


PICTURES = ("img", "svg", "object", "canvas", "video")
"""The elements that count as a figure's picture."""

TABLE_FLOAT = "quarto-float-tbl"
"""The class of Quarto's ``<figure>`` around a captioned table: a table float, which holds a table, not a picture."""


class _Scan(HTMLParser):
    """Reads one page: its text, how many filled cells each table holds, and what each figure holds.

    A figure is pandoc's ``<figure id="fig-…">`` or Quarto's ``<figure
    class="quarto-float quarto-float-fig figure">``, and needs a picture.
    Quarto also writes a captioned table as a figure, ``<figure
    class="quarto-float quarto-float-tbl figure">``, which needs a table
    instead (pandoc writes it as ``<div class="table-float">``). Quarto puts
    the float's id on the ``<div>`` around the figure, so a figure without an
    id of its own is named by the last ``fig-``/``tbl-`` id opened before it.
    A multi-panel figure is, in Quarto, sub-floats: a ``<figure>`` for each
    panel inside the figure, and a panel's picture counts for the figure.
    """

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.tables: list[list[int]] = []  # per open table: [filled cells, table number]
        self.figures: list[list] = []  # per open figure: [contents found, name, what it needs]
        self.cell_text: list[str] | None = None
        self.holes: list[str] = []
        self.table_count = 0
        self.float_id: str | None = None

    def handle_starttag(self, tag: str, attrs: list) -> None:
        attributes = dict(attrs)
        if (attributes.get("id") or "").startswith(("fig-", "tbl-")):
            self.float_id = attributes["id"]
        if tag == "table":
            self.table_count += 1
            self.tables.append([0, self.table_count])
            if self.figures and self.figures[-1][2] == "table":
                self.figures[-1][0] += 1
        elif tag in ("td", "th") and self.tables:
            self.cell_text = []
        elif tag == "figure":
            kind = "table" if TABLE_FLOAT in (attributes.get("class") or "").split() else "image"
            name = attributes.get("id") or self.float_id or f"figure {len(self.figures) + 1}"
            self.figures.append([0, name, kind])
        elif tag in PICTURES and self.figures and self.figures[-1][2] == "image":
            self.figures[-1][0] += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self.cell_text is not None:
            if "".join(self.cell_text).strip() and tag == "td" and self.tables:
                self.tables[-1][0] += 1
            self.cell_text = None
        elif tag == "table" and self.tables:
            filled, number = self.tables.pop()
            if not filled:
                self.holes.append(f"table {number} of the page has no filled cell")
        elif tag == "figure" and self.figures:
            found, name, kind = self.figures.pop()
            if not found:
                self.holes.append(f"{name} has no {kind}")
            elif self.figures and self.figures[-1][2] == kind:
                self.figures[-1][0] += found  # a sub-float's picture (Quarto's panels) is its figure's too
            self.float_id = None

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self.cell_text is not None:
            self.cell_text.append(data)


def page_holes(page_html: str) -> list[str]:
    """What is missing from one HTML page: each placeholder phrase it shows, each empty table, each empty figure."""
    scan = _Scan()
    scan.feed(page_html)
    scan.close()
    text = " ".join("".join(scan.text).split())
    found = [f"shows the placeholder {phrase!r}" for phrase in PLACEHOLDERS if phrase in text]
    return found + scan.holes


def site_holes(site: Path, skip: frozenset[str] = frozenset()) -> list[str]:
    """Every hole of every HTML page under ``site``, as "page: what is missing" lines (empty when there is none).

    ``skip`` names pages (relative to ``site``, e.g. "chapters/01-rl-loop.html") left unchecked: ``rlbook
    build --only`` shows pages that no build has executed yet without their outputs, and says so.
    """
    lines = []
    for page in sorted(Path(site).rglob("*.html")):
        name = page.relative_to(site).as_posix()
        if name not in skip:
            lines += [f"{name}: {hole}" for hole in page_holes(page.read_text(encoding="utf-8"))]
    return lines
