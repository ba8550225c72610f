"""Each chapter's numbers and claims in one place: a facts module per chapter (every chapter page).

A chapter's page holds prose, figures and the code it teaches; everything it
states about the runs comes from its facts module here, ``rlbook.book.<topic>``,
which declares:

- ``PAGE``: the page it serves, such as ``"chapters/01-rl-loop.qmd"``;
- ``needs(seeds)``: the runs it reads (:class:`~rlbook.book.needs.Need`);
- ``compute(seeds)``: every number, range, list and outcome-dependent phrase
  the prose and tables use, and the data its figures draw, as plain data
  (:mod:`rlbook.book.facts`; phrases from :mod:`rlbook.book.phrasing`);
- ``CLAIMS``: the sentences the prose rests on, as checks over those facts
  (:class:`~rlbook.book.claims.Claim`).

A page's one hidden cell is ``F = book.load("<topic>")``: the facts from the
cache (:mod:`rlbook.book.store`), or computed now from the runs (training
what is missing) and cached, then checked against the chapter's claims. The
inline expressions of the prose are references into ``F``.

The infrastructure modules are :mod:`~rlbook.book.facts`,
:mod:`~rlbook.book.claims`, :mod:`~rlbook.book.needs`,
:mod:`~rlbook.book.phrasing`, :mod:`~rlbook.book.store` and
:mod:`~rlbook.book.prefetch`; every other module of this package is a
chapter's facts module, found by :func:`topics`.
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path
from types import ModuleType

SEEDS = (0, 1, 2)
"""The seeds every chapter's facts cover: every claim is checked on all three."""

INFRASTRUCTURE = frozenset({"facts", "claims", "needs", "phrasing", "store", "prefetch", "check", "marks", "wording"})
"""The modules of this package that are not a chapter's facts."""


def topics() -> list[str]:
    """Every chapter's facts module by its short name ("loop", "rewards", ...), read from the package's files."""
    folder = Path(__file__).resolve().parent
    return sorted(
        m.name
        for m in pkgutil.iter_modules([str(folder)])
        if m.name not in INFRASTRUCTURE and not m.name.startswith("_")
    )


def chapter(topic: str) -> ModuleType:
    """The facts module of chapter ``topic``; ValueError naming the known topics otherwise."""
    if topic not in topics():
        raise ValueError(f"no chapter facts named {topic!r}; the chapters' facts are: {', '.join(topics())}")
    return importlib.import_module(f"{__name__}.{topic}")


def load(topic: str, seeds: tuple[int, ...] = SEEDS, threads: int | None = None, check: bool = True):
    """Chapter ``topic``'s facts on ``seeds``: cached, or computed now and cached; then its claims checked.

    ``threads`` (default: the runs' thread count) is the torch thread count
    the facts are computed with and enter the key with; the caller's count is
    restored. With ``check`` the claims are judged
    (:func:`rlbook.book.claims.check`): the record is a
    :class:`~rlbook.book.claims.Checked` whose ``F.law``, ``F.seeds`` and
    ``F.finding`` mark the page's sentences, and a law that does not hold
    raises :class:`~rlbook.book.claims.ClaimError` in a strict build and is
    shown in the page otherwise. The exercises load with ``check=False``:
    their checkers never depend on a claim holding.
    """
    import torch

    from rlbook import runs
    from rlbook.book import claims, facts, store

    module = chapter(topic)
    threads = threads or runs.DEFAULT_THREADS
    needs = tuple(module.needs(seeds))
    key = store.facts_key(module.__name__, seeds, threads, needs)

    def compute() -> str:
        before = torch.get_num_threads()
        torch.set_num_threads(threads)
        try:
            return facts.dumps(module.compute(seeds))
        finally:
            torch.set_num_threads(before)

    record = store.fetch(store.entry_path(topic, seeds, threads, key), needs, threads, compute)
    return claims.check(topic, module.PAGE, module.CLAIMS, record) if check else record
