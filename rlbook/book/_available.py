"""Which chapters' facts this Python can compute: every chapter's, except those that need a missing extra.

A facts module whose facts need an optional extra of the package (the TRL
appendix's, :mod:`rlbook.book.bridge`) declares ``available()``. The
prefetch (:mod:`rlbook.book.prefetch`), ``rlbook claims``
(:mod:`rlbook.book.check`) and the claims test leave out the facts whose
``available()`` is False, as ``rlbook build`` leaves out their page with one
line (:mod:`rlbook.publish.extras`). No facts module imports this one, so
editing it moves no facts' key.
"""

from __future__ import annotations

from rlbook import book


def available(topic: str) -> bool:
    """Whether this Python can compute chapter ``topic``'s facts (its module's ``available()``, True if it has none)."""
    check = getattr(book.chapter(topic), "available", None)
    return check is None or bool(check())


def available_topics(topics: list[str] | None = None) -> list[str]:
    """The chapters of ``topics`` (default: every chapter) whose facts this Python can compute, in order."""
    return [topic for topic in (topics or book.topics()) if available(topic)]
