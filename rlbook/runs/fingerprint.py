"""The book's fingerprint: one digest of every run's weights and record, to tell whether two builds trained alike.

Used by ``rlbook fingerprint``, the build's summary and the glance page. A
run's part is its record (``record.json``) less what differs between two
identical trainings (the run's id, its date, its wall time and the versions
block, which names the source's hash and the Python's version), with the
weights hash of every checkpoint it keeps; the fingerprint hashes those parts
in the order of the (run, seed) pairs. Two machines that give the same
fingerprint trained bit-identical runs. The book's own, from the build of
``ROBUSTNESS.md``'s date, is kept in ``published.json`` beside this module
and printed in the README.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rlbook.runs.cache import draw, entry_path
from rlbook.runs.catalogue import DEFAULT_THREADS

PUBLISHED = Path(__file__).with_name("published.json")
"""The fingerprint of the book as published: ``{"fingerprint", "runs", "draw"}``."""

VOLATILE = ("run_id", "created", "versions")
"""Record fields that differ between two identical trainings."""


class MissingRuns(LookupError):
    """Runs the fingerprint needs that the cache does not hold, with their count and the first one."""


def record_part(record: dict[str, Any]) -> dict[str, Any]:
    """What of a run's record enters the fingerprint: everything but :data:`VOLATILE` and the wall time."""
    part = {k: v for k, v in record.items() if k not in VOLATILE}
    part["cost"] = {k: v for k, v in (record.get("cost") or {}).items() if k != "wall_seconds"}
    return part


def fingerprint(pairs: Sequence[tuple[str, int]], threads: int = DEFAULT_THREADS) -> str:
    """The 16-hex digest of the cached runs ``pairs``; :class:`MissingRuns` when some are not trained."""
    digest = hashlib.sha256()
    missing = []
    for name, seed in sorted(pairs):
        path = entry_path(name, seed, threads) / "record.json"
        if not path.is_file():
            missing.append(f"{name} seed {seed}")
            continue
        part = record_part(json.loads(path.read_text(encoding="utf-8")))
        digest.update(json.dumps([name, seed, part], sort_keys=True).encode())
    if missing:
        raise MissingRuns(
            f"{len(missing)} of the book's {len(pairs)} runs are not trained yet (first: {missing[0]}); "
            "train them with `python -m rlbook.book.prefetch` or `rlbook build`"
        )
    return digest.hexdigest()[:16]


def published() -> dict[str, Any]:
    """The book's published fingerprint (:data:`PUBLISHED`)."""
    return json.loads(PUBLISHED.read_text(encoding="utf-8"))


def compare(pairs: Sequence[tuple[str, int]], threads: int = DEFAULT_THREADS) -> str:
    """One sentence: this machine's fingerprint and whether it is the published one."""
    mine, book = fingerprint(pairs, threads), published()
    if mine == book["fingerprint"]:
        return (
            f"Your runs' fingerprint is {mine}, the book's own: your {len(pairs)} runs are bit-identical "
            f"to the published ones ({draw()} draw)."
        )
    return (
        f"Your runs' fingerprint is {mine}; the book's is {book['fingerprint']} ({book['draw']} draw). "
        f"Your runs differ from the published ones (this machine's draw is {draw()}), so some of your "
        "numbers differ from the book's; the laws of ROBUSTNESS.md are what holds across draws."
    )
