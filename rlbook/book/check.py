"""``rlbook claims``: every chapter's claims checked on this machine's numerical draw, one line each.

Used by the README's procedure for checking the claims on other machines:
with ``RLBOOK_CACHE`` and ``ATEN_CPU_CAPABILITY`` set for another draw, one
command trains what that draw lacks, computes every chapter's facts and
checks every claim, printing the figures behind each failure.
"""

from __future__ import annotations

from collections.abc import Callable

from rlbook import book
from rlbook.book._available import available_topics


def check_all(topics: list[str] | None = None, out: Callable[[str], None] = print) -> int:
    """Check the claims of ``topics`` (default: every chapter whose facts this Python can compute, see
    :func:`rlbook.book._available.available_topics`); print a line per claim; return the failures."""
    topics = topics or available_topics()
    failed = 0
    for topic in topics:
        facts = book.load(topic, check=False)
        for claim in book.chapter(topic).CLAIMS:
            failure = claim.failure(facts)
            failed += failure is not None
            out(f"{'ok  ' if failure is None else 'FAIL'} {topic}: {claim.name}" + (f": {failure}" if failure else ""))
    total = sum(len(book.chapter(t).CLAIMS) for t in topics)
    out(f"{total - failed} of {total} claims hold on seeds {', '.join(map(str, book.SEEDS))}")
    return failed
