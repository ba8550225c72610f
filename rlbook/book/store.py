"""The facts cache: a chapter's facts kept beside the runs, keyed like a run.

An entry is a folder ``facts-<topic>-seeds<0-1-2>-t<threads>-<key>`` in the
run cache (:func:`rlbook.runs.cache_root`). Its key hashes the code that
computes the facts (the import closure of the chapter's facts module, as a
run's key hashes its training code), the seeds, the thread count and the
keys of the runs the facts read (:mod:`rlbook.book.needs`): editing one
chapter's analysis recomputes that chapter's facts and no other, and
retraining a run recomputes exactly the facts that read it. The entry holds
JSON only (no pickle), written atomically with a manifest of checksums, and
is checked on load as a run's entry is: a damaged or edited entry is
recomputed with a one-line notice, never served.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

from rlbook.book.facts import Facts, loads
from rlbook.book.needs import Need
from rlbook.core.source import ROOT, closure_hash
from rlbook.runs.cache import BY_VALUE, CacheError, cache_root, locked, read_entry, read_whole, write_entry, write_file

FACTS_FILE, NEEDS_FILE = "facts.json", "needs.json"


def code_key(module: str, root: Path = ROOT) -> str:
    """Short SHA-256 of a facts module's code and the code it imports, the run catalogue's left out.

    A run's settings enter the facts' key through the key of each run the
    facts read (:func:`facts_key`), so adding or editing a run in the
    catalogue recomputes only the chapters that read it.
    """
    return closure_hash((module,), root, by_value=BY_VALUE)


def facts_key(module: str, seeds: Sequence[int], threads: int, needs: Sequence[Need]) -> str:
    """Short SHA-256 of the facts module's code (:func:`code_key`), the seeds, threads and the keys of the runs it
    reads."""
    text = json.dumps(
        [code_key(module), list(seeds), threads, [[n.name, n.seed, n.key(threads)] for n in sorted(needs)]]
    )
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def entry_path(topic: str, seeds: Sequence[int], threads: int, key: str) -> Path:
    """The cache folder of one chapter's facts."""
    return cache_root() / f"facts-{topic}-seeds{'-'.join(map(str, seeds))}-t{threads}-{key}"


def _read(entry: Path) -> Facts:
    return loads((entry / FACTS_FILE).read_text(encoding="utf-8"))


def cached(entry: Path) -> Facts | None:
    """The facts in ``entry``, or None when it is absent or damaged (reported in one line, then recomputed)."""
    return read_entry(entry, _read)


def fetch(entry: Path, needs: Sequence[Need], threads: int, compute: Callable[[], str]) -> Facts:
    """The facts of ``entry``: read from the cache, or computed now (``compute`` returns their JSON) and kept.

    An entry found whole is read without the lock (:func:`rlbook.runs.cache.read_whole`);
    a missing one is computed under the entry's lock, so two processes never
    compute the same facts at once. A cache that cannot be written still gets
    its facts, with a one-line notice that they were not kept.
    """
    found = read_whole(entry, _read)
    if found is not None:
        return found
    with locked(entry.with_name(entry.name + ".lock")):
        found = cached(entry)
        if found is not None:
            return found
        text = compute()
        listed = json.dumps({n.label: n.key(threads) for n in sorted(needs)}, indent=1)

        def write(folder: Path) -> None:
            write_file(folder / FACTS_FILE, text.encode())
            write_file(folder / NEEDS_FILE, listed.encode())

        try:
            write_entry(entry, write)
        except CacheError as err:
            warnings.warn(f"the facts of {entry.name} were computed but not kept: {err}", stacklevel=2)
        return loads(text)
