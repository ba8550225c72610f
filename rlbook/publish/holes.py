"""What a published page must not contain: placeholders, empty tables, figures without a picture.

Used by ``rlbook build`` on the site that either backend wrote, before it
replaces ``_book/``: a page with a hole fails the build and the previous book
stays. A hole is text that stands in for a result the build could not
compute (:data:`PLACEHOLDERS`, such as the "(needs TRL)" that the TRL
appendix once showed without its extra), a table with no filled cell, or a
figure with no image.
"""
from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

PLACEHOLDERS = ("(needs TRL)", "TRL is not installed")
"""Phrases that mark a result that was not computed."""


class _Scan(HTMLParser):
    """Reads one page: its text, and how many filled cells each table and how many images each figure holds."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.tables: list[list[int]] = []  # per open table: [filled cells, table number]
        self.figures: list[list] = []  # per open figure: [pictures, id]
        self.cell_text: list[str] | None = None
        self.holes: list[str] = []
        self.table_count = 0

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag == "table":
            self.table_count += 1
            self.tables.append([0, self.table_count])
        elif tag in ("td", "th") and self.tables:
            self.cell_text = []
        elif tag == "figure":
            self.figures.append([0, dict(attrs).get("id") or f"figure {len(self.figures) + 1}"])
        elif tag in ("img", "svg", "object", "canvas", "video") and self.figures:
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
            pictures, name = self.figures.pop()
            if not pictures:
                self.holes.append(f"{name} has no image")

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
