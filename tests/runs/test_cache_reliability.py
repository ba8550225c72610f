"""Nothing trained is lost, and nothing planted runs or is served (rlbook.runs on the conftest's tiny run).

- a full disk at the final write keeps the finished run's resume point, says
  "no space left on device", and the next call saves the run without
  training a step again; a full disk at a checkpoint keeps the previous one;
- a pickle payload planted in ``<entry>.partial/state.pt``, or in ``log.pt``
  with the manifest rewritten to match, never runs;
- a record edited to say another value, with its manifest fixed up, is
  refused naming the field and rebuilt from the training;
- a file where the entry should be is replaced; a read-only cache serves
  the run it holds, and one that lacks the run says so before training.
"""

from __future__ import annotations

import errno
import hashlib
import json
import re
import shutil
from pathlib import Path

import pytest
from cli_calls import call
from readonly import run_read_only, shared_folder

from rlbook import loop, runs
from rlbook.core.rl import RLState
from rlbook.runs import cache, training
from rlbook.runs.cache import CacheError


def hashes(run: runs.Run) -> list[str]:
    return [c["weights_hash"] for c in run.log["checkpoints"]]


def entry() -> Path:
    return runs.entry_path("tiny", 0, 1)


def partial() -> Path:
    return entry().with_name(entry().name + ".partial")


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*") if ".tmp" in p.name)


def fill_disk_when(monkeypatch, full) -> list[Path]:
    """Make :func:`cache.write_file` fail with ENOSPC for the paths where ``full(path)`` is true; returns them."""
    real, refused = cache.write_file, []

    def write_file(path: Path, data: bytes) -> None:
        if full(path):
            refused.append(path)
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        real(path, data)

    monkeypatch.setattr(cache, "write_file", write_file)
    monkeypatch.setattr(training, "write_file", write_file)
    return refused


def no_training(monkeypatch) -> None:
    def fail(*args, **kwargs):
        pytest.fail("a finished run was trained again")

    monkeypatch.setattr(loop, "checkpoint_eval", fail)


def test_a_full_disk_at_the_final_write_keeps_the_finished_run(tiny_cache, tiny_reference, monkeypatch):
    with monkeypatch.context() as m:
        refused = fill_disk_when(m, lambda path: ".tmp-" in path.parent.name)  # inside the entry's temporary folder
        with pytest.raises(CacheError) as caught:
            runs.load("tiny", 0, 1)
    message = str(caught.value)
    assert refused and "\n" not in message and caught.value.errno == errno.ENOSPC
    assert message.startswith("no space left on device: cannot write the cache entry")
    assert f"the finished run is kept in {partial().name}" in message
    assert not entry().exists() and leftovers(tiny_cache) == []
    assert RLState.load(partial() / "state.pt").step == 4  # the resume point of the last step
    with monkeypatch.context() as m:
        no_training(m)
        run = runs.load("tiny", 0, 1)
    assert not run.cached and hashes(run) == hashes(tiny_reference) and run.evals == tiny_reference.evals
    assert run.record["status"] == "completed" and run.record["steps_completed"] == 4
    assert not partial().exists() and runs.load("tiny", 0, 1).cached


def test_the_command_line_says_no_space_left_on_device_in_one_line(tiny_cache, monkeypatch, capsys):
    fill_disk_when(monkeypatch, lambda path: ".tmp-" in path.parent.name)
    code, _, err = call(["run", "tiny", "--threads", "1"], capsys)
    assert code == 1 and err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith("rlbook run: error: no space left on device: cannot write the cache entry")


def test_a_full_disk_at_a_checkpoint_keeps_the_previous_resume_point(tiny_cache, tiny_reference, monkeypatch):
    with monkeypatch.context() as m:
        fill_disk_when(m, lambda path: path.name == "state.pt" and (path.parent / "log-000004.pt").exists())
        with pytest.raises(CacheError) as caught:
            runs.load("tiny", 0, 1)
    assert str(caught.value).startswith("no space left on device: cannot keep the resume point of step 4")
    assert RLState.load(partial() / "state.pt").step == 2 and leftovers(tiny_cache) == []
    run = runs.load("tiny", 0, 1)
    assert hashes(run) == hashes(tiny_reference) and run.evals == tiny_reference.evals


class Payload:
    """A pickle that touches a file when it is unpickled, as a planted shell command would run."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (open, (str(self.marker), "w"))


def test_a_payload_planted_in_the_resume_state_never_runs(tiny_cache, tiny_reference, tmp_path):
    import torch

    marker = tmp_path / "payload-ran"
    partial().mkdir()
    torch.save({"step": Payload(marker)}, partial() / "state.pt")
    with pytest.warns(UserWarning, match="resume state of .* is damaged"):
        run = runs.load("tiny", 0, 1)
    assert not marker.exists()
    assert hashes(run) == hashes(tiny_reference)


def fix_manifest(folder: Path) -> None:
    sums = {
        f.name: hashlib.sha256(f.read_bytes()).hexdigest()
        for f in sorted(folder.iterdir())
        if f.name != "manifest.json"
    }
    (folder / "manifest.json").write_text(json.dumps(sums))


def test_a_payload_planted_in_the_log_with_its_manifest_fixed_never_runs(tiny_cache, tiny_reference, tmp_path):
    import torch

    marker = tmp_path / "payload-ran"
    shutil.copytree(tiny_reference.path, entry())
    torch.save({"metrics": [Payload(marker)]}, entry() / "log.pt")
    fix_manifest(entry())
    with pytest.warns(UserWarning, match=f"cache entry {entry().name} is damaged"):
        run = runs.load("tiny", 0, 1)
    assert not marker.exists() and not run.cached and hashes(run) == hashes(tiny_reference)


def test_a_record_edited_to_another_value_with_its_manifest_fixed_is_refused(tiny_cache, tiny_reference):
    shutil.copytree(tiny_reference.path, entry())
    record = json.loads((entry() / "record.json").read_text())
    last = len(record["evaluations"]) - 2  # the last checkpoint's expected reward
    truth = record["evaluations"][last]["value"]
    record["evaluations"][last]["value"] = 0.123
    (entry() / "record.json").write_text(json.dumps(record, indent=2))
    fix_manifest(entry())
    field = f"run record field 'evaluations[{last}].value': says 0.123 where the run log holds {truth!r}"
    with pytest.warns(UserWarning, match=re.escape(f"cache entry {entry().name} is damaged ({field}); rebuilding")):
        run = runs.load("tiny", 0, 1)
    assert not run.cached and run.record["evaluations"][last]["value"] == truth != 0.123
    assert runs.load("tiny", 0, 1).cached


@pytest.mark.parametrize(
    "field, change",
    [
        ("checkpoints[1].weights_hash", lambda r: r["checkpoints"][1].update(weights_hash="0" * 16)),
        ("status", lambda r: r.update(status="aborted")),
        ("steps_completed", lambda r: r.update(steps_completed=3)),
    ],
)
def test_other_fields_the_log_holds_are_cross_checked(tiny_reference, field, change):
    record = json.loads((tiny_reference.path / "record.json").read_text())
    change(record)
    with pytest.raises(ValueError, match=re.escape(f"run record field '{field}': says")):
        runs.records.check_against_log(record, tiny_reference.log)


def test_a_wrong_shaped_log_is_refused_in_one_line(tiny_reference):
    record = json.loads((tiny_reference.path / "record.json").read_text())
    log = dict(tiny_reference.log, evals=[{"step": 0}])
    with pytest.raises(ValueError, match="the run log does not have the shape of a run log"):
        runs.records.check_against_log(record, log)


def test_a_file_where_the_entry_should_be_is_replaced_by_the_run(tiny_cache, tiny_reference):
    entry().write_text("a stray file")
    with pytest.warns(UserWarning, match="not a folder"):
        run = runs.load("tiny", 0, 1)
    assert entry().is_dir() and hashes(run) == hashes(tiny_reference)
    assert runs.load("tiny", 0, 1).cached


def _load_tiny() -> tuple[bool, list[str]]:
    run = runs.load("tiny", 0, 1)
    return run.cached, hashes(run)


def _missing_run_error() -> str:
    try:
        runs.load("tiny", 1, 1)
    except CacheError as err:
        return str(err)
    return "trained"


def test_a_read_only_cache_serves_the_run_it_holds_and_refuses_to_train(tiny_cache, tiny_reference, monkeypatch):
    folder = shared_folder()
    shutil.copytree(tiny_cache, folder, dirs_exist_ok=True)  # the base entry
    monkeypatch.setenv("RLBOOK_CACHE", str(folder))
    shutil.copytree(tiny_reference.path, entry())
    for path in [folder, *folder.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    before = sorted(p.name for p in folder.iterdir())
    assert run_read_only(_load_tiny, folder) == (True, hashes(tiny_reference))
    error = run_read_only(_missing_run_error, folder)
    assert error.startswith(f"the run cache {folder} cannot be written (") and "\n" not in error
    assert "does not hold run 'tiny' (seed 1, 1 thread(s)); point RLBOOK_CACHE at a folder you can write" in error
    assert sorted(p.name for p in folder.iterdir()) == before


def test_a_payload_in_the_log_is_refused_without_pytorchs_advice_to_unpickle_it(tiny_cache, tiny_reference, tmp_path):
    import torch

    shutil.copytree(tiny_reference.path, entry())
    torch.save({"metrics": [Payload(tmp_path / "payload-ran")]}, entry() / "log.pt")
    fix_manifest(entry())
    with pytest.warns(UserWarning) as caught:
        runs.load("tiny", 0, 1)
    said = " ".join(str(w.message) for w in caught)
    assert "is refused and never unpickled" in said and "weights_only=False" not in said


def test_an_entry_copied_under_another_seed_is_refused_and_the_run_trained_for_its_own_seed(tiny_cache, tiny_reference):
    other = runs.entry_path("tiny", 1, 1)
    shutil.copytree(tiny_reference.path, other)  # seed 0's run, filed as seed 1's
    with pytest.warns(UserWarning, match=r"its record is run 'tiny' of seed 0 on 1 thread\(s\), not this one"):
        run = runs.load("tiny", 1, 1)
    assert run.record["seed"] == 1 and not run.cached


def test_a_process_that_waits_for_a_stopped_one_says_whom_it_waits_for(tmp_path):
    import signal
    import subprocess
    import sys

    lock = tmp_path / "entry.lock"
    hold = (
        "import sys, time\nfrom pathlib import Path\nfrom rlbook.runs.cache import locked\n"
        f"with locked(Path({str(lock)!r})):\n    print('held', flush=True)\n    time.sleep(60)\n"
    )
    holder = subprocess.Popen([sys.executable, "-c", hold], stdout=subprocess.PIPE, text=True)
    waiter = None
    try:
        assert holder.stdout.readline().strip() == "held"
        holder.send_signal(signal.SIGSTOP)
        wait = f"from pathlib import Path\nfrom rlbook.runs.cache import locked\nwith locked(Path({str(lock)!r})):\n    pass\n"
        waiter = subprocess.Popen([sys.executable, "-c", wait], stderr=subprocess.PIPE, text=True)
        line = waiter.stderr.readline()
        assert f"rlbook: waiting for process {holder.pid}, which is stopped (resume it with kill -CONT" in line
    finally:
        for process in (waiter, holder):
            if process is not None:
                process.kill()
                process.wait()


def test_a_cached_run_is_read_without_its_lock_and_a_missing_one_is_trained_under_it(
    tiny_cache, tiny_reference, monkeypatch
):
    taken = []
    real = training.locked

    def locked(path):
        taken.append(path.name)
        return real(path)

    monkeypatch.setattr(training, "locked", locked)
    shutil.copytree(tiny_reference.path, entry())
    assert runs.load("tiny", 0, 1).cached and taken == []  # many processes can load it at once, none waits
    shutil.rmtree(entry())
    assert not runs.load("tiny", 0, 1).cached and taken == [entry().name + ".lock"]
