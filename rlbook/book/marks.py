"""The marks that tie each claim to its sentence in the page, and the lint that checks the pairing.

A law's sentence ends with ```` `{python} F.law("name")` ````; a finding's
sentence carries ```` `{python} F.seeds("name")` ```` or
```` `{python} F.finding("name")` ```` (:mod:`rlbook.book.claims`). Every
claim of a chapter is marked exactly once in its page, with the mark of its
kind, and every mark names a claim: the prose and its check cannot drift
apart. The book's lint test and ``rlbook claims`` call :func:`problems`.
"""

from __future__ import annotations

import re
from pathlib import Path

from rlbook import book

MARK = re.compile(r"""F\.(law|seeds|finding)\(\s*["']([^"']+)["']\s*\)""")
"""A mark in a page's source: the function (``law``, ``seeds`` or ``finding``) and the claim's name."""

FITS = {"law": ("law",), "finding": ("seeds", "finding")}
"""The marks each kind of claim may carry."""


def page_marks(text: str) -> list[tuple[str, str]]:
    """The (function, claim name) of every mark in a page's source, in order."""
    return [(m.group(1), m.group(2)) for m in MARK.finditer(text)]


def problems(topic: str, root: Path) -> list[str]:
    """What is wrong with the pairing of chapter ``topic``'s claims and its page's marks: one line each."""
    module = book.chapter(topic)
    page = root / module.PAGE
    found = page_marks(page.read_text(encoding="utf-8"))
    claims = {c.name: c for c in module.CLAIMS}
    out = []
    for function, name in found:
        if name not in claims:
            out.append(f"{module.PAGE}: F.{function}({name!r}) names no claim of {topic!r}")
        elif function not in FITS[claims[name].kind]:
            fits = " or ".join(f"F.{f}" for f in FITS[claims[name].kind])
            out.append(f"{module.PAGE}: {name!r} is a {claims[name].kind}: mark it with {fits}, not F.{function}")
    for name, claim in claims.items():
        count = sum(n == name for _, n in found)
        if count != 1:
            out.append(
                f"{module.PAGE}: the {claim.kind} {name!r} is marked {count} times; "
                "mark the one sentence it protects (rlbook.book.claims)"
            )
    return out
