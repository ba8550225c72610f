"""The run cache (rlbook.runs) under damage: corrupted, truncated or missing files and two builders at once.

Every test works in a temporary cache (fixture ``tiny_cache``) on the tiny
run of the conftest; a rebuilt entry must hold the same weights as the
reference build, bit for bit.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import shutil
import warnings
from pathlib import Path

import pytest
import torch

from rlbook import record as rec
from rlbook import runs


def final_hash(run: runs.Run) -> str:
    return run.log["checkpoints"][-1]["weights_hash"]


def assert_valid_entry(entry: Path) -> None:
    """The entry holds exactly its three files and its manifest's checksums match them."""
    assert sorted(p.name for p in entry.iterdir()) == ["log.pt", "manifest.json", "record.json"]
    sums = json.loads((entry / "manifest.json").read_text())
    assert sums == {f: hashlib.sha256((entry / f).read_bytes()).hexdigest() for f in ("log.pt", "record.json")}
    rec.load(entry / "record.json")


def load_quietly() -> runs.Run:
    """Load the tiny run without any warning (a warning here fails the test)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return runs.load("tiny", 0, 1)


@pytest.fixture
def built(tiny_cache, tiny_reference) -> Path:
    """A copy of the reference tiny entry in the temporary cache; returns its folder."""
    entry = runs.entry_path("tiny", 0, 1)
    shutil.copytree(tiny_reference.path, entry)
    return entry


def test_a_built_entry_carries_checksums_and_is_read_back(tiny_cache, tiny_reference):
    run = load_quietly()
    assert not run.cached and final_hash(run) == final_hash(tiny_reference)
    entry = run.path
    assert entry == runs.entry_path("tiny", 0, 1) and entry.parent == tiny_cache
    assert_valid_entry(entry)
    assert [p.name for p in tiny_cache.iterdir() if ".tmp-" in p.name] == []  # the temporary folder was renamed
    again = load_quietly()
    assert again.cached and final_hash(again) == final_hash(tiny_reference)
    assert again.record == rec.load(entry / "record.json")
    assert again.steps == [0, 2, 4] and again.record["status"] == "completed"


def truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def flip_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def change_seed(path: Path) -> None:
    """A plausible edit: still a valid record, but not the one that was written."""
    record = json.loads(path.read_text())
    record["seed"] = 7
    path.write_text(json.dumps(record, indent=2))


def remove(path: Path) -> None:
    path.unlink()


def scramble_checksum(path: Path) -> None:
    sums = json.loads(path.read_text())
    sums["log.pt"] = "0" * 64
    path.write_text(json.dumps(sums))


def garble(path: Path) -> None:
    path.write_text("{not json")


DAMAGE = [
    ("log.pt", truncate),
    ("log.pt", flip_byte),
    ("log.pt", remove),
    ("record.json", truncate),
    ("record.json", change_seed),
    ("manifest.json", scramble_checksum),
    ("manifest.json", garble),
]


@pytest.mark.parametrize("file, damage", DAMAGE, ids=[f"{f}-{d.__name__}" for f, d in DAMAGE])
def test_a_damaged_entry_is_reported_and_rebuilt_identically(built, tiny_reference, file, damage):
    damage(built / file)
    with pytest.warns(UserWarning, match=rf"cache entry {built.name} is damaged .*; rebuilding it"):
        rebuilt = runs.load("tiny", 0, 1)
    assert not rebuilt.cached
    assert final_hash(rebuilt) == final_hash(tiny_reference)
    assert [c["weights_hash"] for c in rebuilt.log["checkpoints"]] == [
        c["weights_hash"] for c in tiny_reference.log["checkpoints"]
    ]
    assert_valid_entry(built)
    assert load_quietly().cached  # the rebuilt entry is served from now on


def test_an_entry_without_its_manifest_is_rebuilt_identically(built, tiny_reference):
    (built / "manifest.json").unlink()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rebuilt = runs.load("tiny", 0, 1)
    assert not rebuilt.cached and final_hash(rebuilt) == final_hash(tiny_reference)
    assert_valid_entry(built)


def test_an_entry_without_its_manifest_is_reported(built):
    (built / "manifest.json").unlink()
    with pytest.warns(UserWarning, match="damaged"):
        runs.load("tiny", 0, 1)


def test_a_crash_while_writing_leaves_no_half_entry(tiny_cache, tiny_reference, monkeypatch):
    def disk_full(record, path):
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as m:
        m.setattr(rec, "save", disk_full)
        with pytest.raises(OSError, match="^no space left on device: cannot write the cache entry"):
            runs.load("tiny", 0, 1)
    entry = runs.entry_path("tiny", 0, 1)
    assert not entry.exists()  # only the temporary folder was half written, and it is gone
    assert [p.name for p in tiny_cache.iterdir() if ".tmp-" in p.name] == []
    run = load_quietly()
    assert not run.cached and final_hash(run) == final_hash(tiny_reference)
    assert_valid_entry(entry)


def build_tiny(results) -> None:
    """One builder process: load (or train) the tiny run and report what it got."""
    run = runs.load("tiny", 0, 1)
    results.put({"pid": os.getpid(), "cached": run.cached, "hash": final_hash(run)})


def test_two_processes_building_the_same_run_share_one_valid_entry(tiny_cache, tiny_reference):
    ctx = multiprocessing.get_context("fork")  # the children inherit the registered tiny run and the cache
    results = ctx.Queue()
    builders = [ctx.Process(target=build_tiny, args=(results,)) for _ in range(2)]
    for p in builders:
        p.start()
    got = [results.get(timeout=120) for _ in builders]
    for p in builders:
        p.join(timeout=30)
        assert p.exitcode == 0
    assert {g["pid"] for g in got} == {p.pid for p in builders}
    assert sorted(g["cached"] for g in got) == [False, True]  # one trained, the other waited for the lock and read
    assert {g["hash"] for g in got} == {final_hash(tiny_reference)}
    entry = runs.entry_path("tiny", 0, 1)
    assert sorted(p.name for p in tiny_cache.iterdir() if p.name.startswith("tiny-")) == [
        entry.name,
        entry.name + ".lock",
    ]  # one entry, no temporary folder left behind
    assert_valid_entry(entry)


def test_training_a_run_leaves_the_callers_thread_count_alone(tiny_cache):
    torch.set_num_threads(2)
    run = runs.load("tiny", 0, 1)
    assert not run.cached and run.record["threads"] == 1
    assert torch.get_num_threads() == 2
