"""Pipe tables in Markdown: the one writer of the tables every chapter shows (display with ``IPython.display.Markdown``).

Each chapter's analysis module re-exports :func:`markdown_table` under its own
name (``audit.markdown_table``, ``disagreement.markdown_table``...), so a page
writes its tables through the module it already imports; :func:`dict_table`
writes a list of dicts (chapter 3).
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence

MAX_RULE = 40
"""The most dashes a column's separator gets in :func:`markdown_table`."""


def markdown_table(
    header: Sequence[str], rows: Iterable[Sequence[object]], align: str | None = None, code: Sequence[int] = ()
) -> str:
    """A pandoc/Quarto pipe table; ``align`` is one letter per column, ``l`` or ``r`` (every chapter's tables).

    Cells are written with ``str``; a ``|`` outside a code span is escaped
    and a newline becomes a space, so any text keeps the table intact. Cells
    of the columns listed in ``code`` are shown as inline code. One holding a
    pipe or a backtick, which a Markdown code span in a table cell cannot
    carry in Jupyter's renderer, is written as an HTML ``<code>`` element with
    those characters (and quotes, which pandoc would curl) as entities, so
    that pandoc and JupyterLab both show it as code. Each separator has as many dashes as the
    column's longest cell, capped at :data:`MAX_RULE`: pandoc sizes the
    columns of a wide pipe table in proportion to them, so a long text column
    wraps without starving the short ones.
    """
    rows = [list(r) for r in rows]
    align = align or "l" * len(header)
    if len(align) != len(header) or any(len(r) != len(header) for r in rows):
        raise ValueError("every row and the alignment need one entry per column")
    cells = [[_cell(c) for c in header]] + [[_cell(c, j in code) for j, c in enumerate(row)] for row in rows]
    widths = [min(MAX_RULE, max(3, *(len(row[i]) for row in cells))) for i in range(len(header))]
    rule = [("-" * w + ":") if a == "r" else (":" + "-" * w) for a, w in zip(align, widths)]
    lines = ["| " + " | ".join(row) + " |" for row in cells]
    return "\n".join([lines[0], "|" + "|".join(rule) + "|", *lines[1:]])


def _cell(value: object, as_code: bool = False) -> str:
    text = str(value).replace("\n", " ")
    if as_code and "|" not in text and "`" not in text:
        return f"`{text}`"
    if as_code:
        return "<code>" + html.escape(text, quote=True).replace("|", "&#124;").replace("`", "&#96;") + "</code>"
    parts = text.split("`")
    # even parts are outside code spans: escape their pipes
    return "`".join(p.replace("|", "\\|") if i % 2 == 0 else p for i, p in enumerate(parts))


def dict_table(rows: list[dict], digits: int = 3) -> str:
    """A list of dicts (same keys) as a :func:`markdown_table`, floats rounded to ``digits`` decimals (chapter 3).

    A None cell is shown as a dash; numbers are right-aligned.
    """
    columns = list(rows[0])

    def cell(value: object) -> str:
        if value is None:
            return "–"
        return f"{value:.{digits}f}" if isinstance(value, float) else str(value)

    numeric = ["r" if all(isinstance(r[c], (int, float)) or r[c] is None for r in rows) else "l" for c in columns]
    return markdown_table(columns, [[cell(r[c]) for c in columns] for r in rows], "".join(numeric))
