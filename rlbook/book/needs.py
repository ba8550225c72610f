"""What a chapter's facts are computed from: the book's runs, each named once with its seed.

A facts module declares ``needs(seeds)``. The keys of those runs enter the
facts' cache key, so retraining a run recomputes the facts that read it and
no others, and the book's prefetch (:mod:`rlbook.book.prefetch`) knows which
runs to train before a chapter's facts can be computed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from rlbook import runs


@dataclass(frozen=True, order=True)
class Need:
    """One run of the book's catalogue, for one seed, that a chapter's facts read."""

    name: str
    seed: int

    def __post_init__(self) -> None:
        runs.spec(self.name)  # an unknown run fails where it is declared

    @property
    def label(self) -> str:
        return f"{self.name} seed {self.seed}"

    def key(self, threads: int) -> str:
        """The run's cache key (:func:`rlbook.runs.cache_key`), computed without training anything."""
        return runs.cache_key(self.name, self.seed, threads)


def on_seeds(names: Iterable[str], seeds: Iterable[int]) -> tuple[Need, ...]:
    """Every run of ``names`` on every seed of ``seeds``, in order."""
    return tuple(Need(name, seed) for name in names for seed in seeds)
