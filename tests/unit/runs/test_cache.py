"""The run cache's folders, lock and files (rlbook.runs.cache) on small fake entries, without training.

A planted symbolic link as the lock is never followed, a folder as the lock
and a file as the cache folder are one-line errors, a read-only cache still
serves what it holds, a file where an entry should be is replaced, a failed
write leaves no temporary folder, a full disk is said plainly, and every file
of an entry has the permissions of a new file.
"""

from __future__ import annotations

import errno
import json
import os
import warnings
from pathlib import Path

import pytest
import torch
from cli_calls import call
from doubles import minimal_record
from readonly import run_read_only, shared_folder

from rlbook import record as rec
from rlbook import runs
from rlbook.runs import cache
from rlbook.runs.cache import CacheError


def fill(folder: Path) -> None:
    (folder / "data.pt").write_bytes(b"plain data")


def read(entry: Path) -> bytes:
    return (entry / "data.pt").read_bytes()


def assert_one_line(err: BaseException, *fragments: str) -> None:
    text = str(err)
    assert "\n" not in text and all(f in text for f in fragments), text


def test_a_symbolic_link_as_the_lock_is_refused_and_its_target_left_alone(tmp_path):
    victim = tmp_path / "precious.txt"
    victim.write_text("a reader's notes")
    lock = tmp_path / "cache" / "main.lock"
    lock.parent.mkdir()
    lock.symlink_to(victim)
    with pytest.raises(CacheError) as caught, cache.locked(lock):
        pytest.fail("the lock was taken through a symbolic link")
    assert_one_line(caught.value, str(lock), "symbolic link", "never followed")
    assert victim.read_text() == "a reader's notes"
    dangling = tmp_path / "cache" / "other.lock"
    dangling.symlink_to(tmp_path / "made-by-the-lock")
    with pytest.raises(CacheError, match="symbolic link"), cache.locked(dangling):
        pass
    assert not (tmp_path / "made-by-the-lock").exists()


def test_a_folder_as_the_lock_is_a_one_line_error(tmp_path):
    lock = tmp_path / "main.lock"
    lock.mkdir()
    with pytest.raises(CacheError) as caught, cache.locked(lock):
        pass
    assert_one_line(caught.value, str(lock), "is a folder, not a file")


def test_the_lock_file_is_not_emptied(tmp_path):
    lock = tmp_path / "main.lock"
    lock.write_text("left by an older rlbook")
    with cache.locked(lock):
        pass
    assert lock.read_text() == "left by an older rlbook"


def test_a_file_as_the_cache_folder_is_a_one_line_error(tmp_path, monkeypatch, capsys):
    not_a_folder = tmp_path / "cache"
    not_a_folder.write_text("")
    monkeypatch.setenv("RLBOOK_CACHE", str(not_a_folder))
    with pytest.raises(CacheError) as caught:
        runs.load("main", 0)
    assert_one_line(caught.value, str(not_a_folder), "(RLBOOK_CACHE) is not a folder")
    code, out, err = call(["run", "main"], capsys)
    assert code == 1 and out == "" and err.count("\n") == 1 and "Traceback" not in err
    assert err == f"rlbook run: error: the run cache {not_a_folder} (RLBOOK_CACHE) is not a folder\n"


def _serve_read_only(entry: Path) -> tuple[bytes, str]:
    """What a process that cannot write the cache gets: the entry it holds, and the error for one it lacks."""
    with cache.locked(entry.with_name(entry.name + ".lock")):
        found = cache.read_entry(entry, read)
    with cache.locked(entry.with_name("missing.lock")):
        try:
            cache.check_writable(entry.parent, "run 'missing'")
        except CacheError as err:
            return found, str(err)
    return found, "no error"


def test_a_read_only_cache_serves_what_it_holds_and_says_what_it_cannot_hold():
    folder = shared_folder()
    entry = folder / "run-seed0"
    with cache.locked(entry.with_name(entry.name + ".lock")):
        cache.write_entry(entry, fill)
    found, error = run_read_only(lambda: _serve_read_only(entry), folder)
    assert found == b"plain data"
    assert error.startswith(f"the run cache {folder} cannot be written (") and "does not hold run 'missing'" in error
    assert "\n" not in error and "RLBOOK_CACHE" in error
    assert sorted(p.name for p in folder.iterdir()) == ["run-seed0", "run-seed0.lock"]  # nothing was written


def test_a_read_only_cache_without_its_lock_file_still_serves():
    folder = shared_folder()
    entry = folder / "run-seed0"
    cache.write_entry(entry, fill)  # written without a lock: the lock file was never made
    assert run_read_only(lambda: _serve_read_only(entry)[0], folder) == b"plain data"


def test_a_file_where_an_entry_should_be_is_reported_and_replaced(tmp_path):
    entry = tmp_path / "run-seed0"
    entry.write_text("not an entry")
    with pytest.warns(UserWarning, match="cache entry run-seed0 is damaged \\(not a folder\\); rebuilding it"):
        assert cache.read_entry(entry, read) is None
    cache.write_entry(entry, fill)
    assert entry.is_dir() and cache.read_entry(entry, read) == b"plain data"


def test_a_link_where_an_entry_should_be_is_replaced_and_its_target_left_alone(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("keep")
    entry = tmp_path / "run-seed0"
    entry.symlink_to(elsewhere)
    with pytest.warns(UserWarning, match="not a folder"):
        assert cache.read_entry(entry, read) is None
    cache.write_entry(entry, fill)
    assert not entry.is_symlink() and (elsewhere / "keep.txt").read_text() == "keep"


def test_a_manifest_that_does_not_list_every_file_is_damage(tmp_path):
    entry = tmp_path / "run-seed0"
    cache.write_entry(entry, fill)
    (entry / "extra.pt").write_bytes(b"planted")
    with pytest.warns(UserWarning, match="the manifest lists \\['data.pt'\\] where the entry holds"):
        assert cache.read_entry(entry, read) is None


def test_a_failed_write_leaves_no_temporary_folder_and_removes_a_dead_writer_s(tmp_path):
    entry = tmp_path / "run-seed0"
    dead = tmp_path / "run-seed0.tmp-999999999"  # a writer killed mid-write
    dead.mkdir()
    (dead / "log.pt").write_bytes(b"half")

    def disk_full(folder: Path) -> None:
        fill(folder)
        raise OSError(errno.ENOSPC, "No space left on device", str(folder / "log.pt"))

    with pytest.raises(CacheError) as caught:
        cache.write_entry(entry, disk_full)
    assert_one_line(caught.value, "no space left on device: cannot write the cache entry", str(entry))
    assert caught.value.errno == errno.ENOSPC
    assert list(tmp_path.iterdir()) == []
    cache.write_entry(entry, fill)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run-seed0"]


def test_a_full_disk_while_writing_a_file_leaves_neither_file_nor_temporary(tmp_path, monkeypatch):
    target = tmp_path / "state.pt"
    target.write_bytes(b"the previous resume point")
    real = os.fdopen

    class Full:
        def __init__(self, handle, mode):
            self.file = real(handle, mode)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.file.close()

        def write(self, data):
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(cache.os, "fdopen", Full)
    with pytest.raises(OSError) as caught:
        cache.save_tensors({"step": torch.tensor(3)}, target)
    monkeypatch.undo()
    assert caught.value.errno == errno.ENOSPC and cache.problem(caught.value) == "no space left on device"
    assert target.read_bytes() == b"the previous resume point"
    assert [p.name for p in tmp_path.iterdir()] == ["state.pt"]


def _record() -> dict:
    return minimal_record(steps=0)


@pytest.mark.parametrize("umask", [0o022, 0o007, 0o077])
def test_every_file_of_an_entry_has_the_permissions_of_a_new_file(tmp_path, umask):
    log = {k: [] for k in cache.LOG_LISTS}
    old = os.umask(umask)
    try:
        cache.write_entry(tmp_path / "run", cache.write_run(_record(), log))
        plain = tmp_path / "plain.txt"
        plain.write_text("")
    finally:
        os.umask(old)
    modes = {p.name: oct(p.stat().st_mode & 0o777) for p in (tmp_path / "run").iterdir()}
    assert modes == dict.fromkeys(["log.pt", "manifest.json", "record.json"], oct(plain.stat().st_mode & 0o777))
    assert modes["record.json"] == oct(0o666 & ~umask)


def test_a_record_saved_alone_has_the_permissions_of_a_new_file(tmp_path):
    old = os.umask(0o022)
    try:
        rec.save(_record(), tmp_path / "record.json")
    finally:
        os.umask(old)
    assert (tmp_path / "record.json").stat().st_mode & 0o777 == 0o644
    assert json.loads((tmp_path / "record.json").read_text())["run_name"] == "main"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert rec.load(tmp_path / "record.json")["status"] == "completed"
