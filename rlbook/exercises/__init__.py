"""Checkers for the book's exercises, one module per chapter (``rlbook.exercises.ch1`` ...).

What the checkers share lives in :mod:`rlbook.exercises.checking`; every
exercise is declared once in :mod:`rlbook.exercises.registry`, whose
:func:`~rlbook.exercises.registry.solution` the pages' solution boxes call.
"""

from __future__ import annotations

from .checking import (
    CheckResult,
    Option,
    apart,
    as_count,
    as_number,
    as_numbers,
    call,
    check_choice,
    close,
    listed,
    named_by,
    never_raises,
    not_a_function,
    not_answered,
    verdict,
)
from .registry import solution

__all__ = [
    "CheckResult",
    "Option",
    "apart",
    "as_count",
    "as_number",
    "as_numbers",
    "call",
    "check_choice",
    "close",
    "listed",
    "named_by",
    "never_raises",
    "not_a_function",
    "not_answered",
    "solution",
    "verdict",
]
