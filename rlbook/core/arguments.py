"""Numbers typed at a command line: ASCII digits only, each inside bounds its help states.

Used by the ``rlbook`` command (:mod:`rlbook.cli`), the prefetch
(``python -m rlbook.book.prefetch``) and the TRL run (``python -m
rlbook.trl``). A number is read as the task's prompts read their digits:
``0``-``9`` only, so ``'０'``, ``'٠'``, ``' 0 '`` and ``'0_0'`` (all of which
Python's ``int`` accepts) are refused with one line saying why.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable

WHOLE = re.compile(r"-?[0-9]+")
DECIMAL = re.compile(r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?|-?(?:nan|inf|infinity)", re.IGNORECASE)
"""A decimal number in ASCII digits (``nan`` and ``inf`` are read so that their error can say they are not finite)."""


def shown(text: str) -> str:
    """``text`` quoted for an error message: escaped, and cut after 40 characters."""
    return repr(text if len(text) <= 40 else text[:40] + "...")


def bounded_int(minimum: int, maximum: int) -> Callable[[str], int]:
    """An argparse type: a whole number in ASCII digits from ``minimum`` to ``maximum``; anything else is refused."""

    def parse(text: str) -> int:
        if not WHOLE.fullmatch(text):
            odd = any((ch.isdigit() and not ch.isascii()) or ch.isspace() or ch == "_" for ch in text)
            raise argparse.ArgumentTypeError(
                f"expected a whole number, got {shown(text)}" + (" (digits 0-9 only)" if odd else "")
            )
        if len(text.lstrip("-")) > len(str(maximum)) + 1:
            raise argparse.ArgumentTypeError(f"must be at most {maximum}, got a number of {len(text)} digits")
        value = int(text)
        if value < minimum or text.startswith("-"):
            raise argparse.ArgumentTypeError(f"must be {'positive' if minimum == 1 else 'zero or more'}, got {text}")
        if value > maximum:
            raise argparse.ArgumentTypeError(f"must be at most {maximum}, got {value}")
        return value

    parse.__name__ = "whole number"  # argparse names the type in some of its messages
    return parse
