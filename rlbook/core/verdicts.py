"""The words the book gives each verifier status: one vocabulary for figures, tables, pages and the workshop.

A verifier reports a status (:data:`rlbook.core.rewards.STATUSES`); every
place that shows one to a reader names it with :data:`VERDICT_WORDS`, so
chapter 1's figures, chapter 5's tables and the workshop's panels (its
``dom.js``, held to these words by a test) never disagree. Training reads
none of it.
"""

from __future__ import annotations

VERDICT_WORDS = {
    "accepted": "accepted",
    "incorrect": "wrong value",
    "malformed": "malformed",
    "incomplete": "stopped by the budget",
    "unverifiable": "unverifiable",
    "duplicate": "duplicate",
}
"""What figures, tables and the workshop call each verifier status (and a duplicate in chapter 6's audit)."""
