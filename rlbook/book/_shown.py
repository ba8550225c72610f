"""The seed a page follows: the one place that says which seed's runs the chapters show.

Every chapter's facts cover several seeds (:data:`rlbook.book.SEEDS`); its
figures, tables and worked examples follow one of them, :data:`SHOWN`. The
audit (:mod:`rlbook.book.check`) computes the facts on triples of seeds that
may not include it, and then the page follows the triple's first seed.
"""

from __future__ import annotations

SHOWN = 0
"""The seed whose runs the pages show: its samples, batches, checkpoints and figures."""


def shown_seed(seeds: tuple[int, ...]) -> int:
    """The seed the page follows: :data:`SHOWN` when the facts cover it, else their first (the audit's triples)."""
    return SHOWN if SHOWN in seeds else seeds[0]
