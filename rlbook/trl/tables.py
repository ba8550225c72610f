"""The appendix's tables as Markdown, with citations that read right in the built book and in a notebook."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from rlbook.analysis.tables import markdown_table

BIBLIOGRAPHY = Path(__file__).resolve().parents[2] / "references.bib"
"""The book's bibliography, beside the package in the repository."""


def cite(key: str, bibliography: Path = BIBLIOGRAPHY) -> str:
    """A citation of the work ``key`` for a Markdown table cell (appendix).

    In the book's build (``RLBOOK_BUILDING`` set) it is pandoc's ``[@key]``,
    which the website links to its list of references; anywhere else, such as
    a notebook re-run in Jupyter, it is the author-year text a reader reads,
    "(Liu et al. 2025)", from the book's ``references.bib``.
    """
    if os.environ.get("RLBOOK_BUILDING"):
        return f"[@{key}]"
    text = bibliography.read_text(encoding="utf-8") if bibliography.is_file() else ""
    entry = re.search(r"@\w+\s*\{\s*" + re.escape(key) + r"\s*,(.*?)\n\}", text, re.DOTALL)
    if entry is None:
        return key
    author = re.search(r"author\s*=\s*\{(.*)\},?\s*$", entry.group(1), re.MULTILINE)
    year = re.search(r"year\s*=\s*\{?(\d{4})", entry.group(1))
    names = [name.split(",")[0].strip("{} ") for name in (author.group(1) if author else key).split(" and ")]
    who = names[0] if len(names) == 1 else f"{names[0]} and {names[1]}" if len(names) == 2 else f"{names[0]} et al."
    return f"({who} {year.group(1) if year else 'n.d.'})"


def cited_table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """A Markdown table of ``rows`` whose last cell is a citation key, or empty for none, cited by :func:`cite`.

    The appendix keeps the keys in its facts (plain data, the same in a
    build and a notebook) and cites them only when the table is shown.
    """
    return markdown_table(header, [[*row[:-1], cite(row[-1]) if row[-1] else ""] for row in rows])
