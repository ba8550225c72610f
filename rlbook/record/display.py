"""The run record for people: a flat table of its fields (chapter 8, ``rlbook audit``).

Kept apart from the schema and the files, which the training code uses, so
that changing how a record is shown never changes a run's cache key.
"""

from __future__ import annotations

from typing import Any

from .schema import RUN_RECORD_FIELDS


def _summary(value: Any, max_items: int = 3) -> str:
    """Short text for one value of the table: numbers to 4 significant digits, long lists cut to their first items."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        text = f"{value:.4g}"
        return text if any(mark in text for mark in ".ein") else text + ".0"
    if isinstance(value, dict):
        return "(" + ", ".join(f"{k}={_summary(v, max_items)}" for k, v in value.items()) + ")"
    if isinstance(value, (list, tuple)):
        if not value:
            return "none"
        shown = "; ".join(_summary(item, max_items) for item in value[:max_items])
        more = "; …" if len(value) > max_items else ""
        return f"{len(value)} {'entry' if len(value) == 1 else 'entries'}: {shown}{more}"
    return str(value)


def _rows(prefix: str, value: Any) -> list[tuple[str, str]]:
    if isinstance(value, dict) and value:
        return [row for key, sub in value.items() for row in _rows(f"{prefix}.{key}", sub)]
    if isinstance(value, dict):
        return [(prefix, "none")]
    return [(prefix, _summary(value))]


def as_table(record: dict) -> list[tuple[str, str]]:
    """The record as (field, value) rows for chapter 5's table.

    Nested objects are flattened into dotted rows (``update.lr``), lists are
    summarised by their length and first entries, and fields appear in the
    order of ``RUN_RECORD_FIELDS`` followed by any extra fields.
    """
    order = list(RUN_RECORD_FIELDS) + [field for field in record if field not in RUN_RECORD_FIELDS]
    return [row for field in order if field in record for row in _rows(field, record[field])]


def printable(text: str) -> str:
    """``text`` with every character a terminal would act on rather than show written as its escape.

    Line breaks, terminal escape sequences, other control and format
    characters and lone surrogates become ``\\n``, ``\\x1b``, ``\\u2028``,
    ``\\ud800``..., so that a value printed by ``rlbook audit`` stays on its own
    row and cannot forge another or clear the screen.
    """
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in text)
