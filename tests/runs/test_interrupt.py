"""Interrupted training (rlbook.runs + rlbook.core.rl): Ctrl-C and SIGTERM leave a resumable, honest record.

The tiny run of the conftest checkpoints at steps 0, 2 and 4. An interrupt
after the step-2 state was saved must leave ``<entry>.partial/`` with a run
record marked interrupted at step 2 and that state; the next load resumes
and ends with the weights, metrics and evaluations of the uninterrupted
reference run.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import time
from pathlib import Path

import pytest
import torch

from rlbook import loop, runs
from rlbook import record as rec
from rlbook.core.rl import RLState


def interrupt_at(monkeypatch, step: int) -> None:
    """Make the evaluation of checkpoint ``step`` raise KeyboardInterrupt, once (a Ctrl-C at that moment)."""
    real, fired = loop.checkpoint_eval, []

    def evaluate_or_interrupt(policy, cfg, seed, at, verifier=None):
        if at == step and not fired:
            fired.append(at)
            raise KeyboardInterrupt
        return real(policy, cfg, seed, at, verifier)

    monkeypatch.setattr(loop, "checkpoint_eval", evaluate_or_interrupt)


def partial_of(name: str = "tiny") -> Path:
    entry = runs.entry_path(name, 0, 1)
    return entry.with_name(entry.name + ".partial")


def timeless(metrics: list[dict]) -> list[dict]:
    return [{k: v for k, v in m.items() if not k.endswith("_seconds")} for m in metrics]


def assert_same_as_reference(run: runs.Run, reference: runs.Run) -> None:
    """Resumed and uninterrupted runs agree bit for bit: weights, per-step metrics, rollouts and evaluations."""
    assert not run.cached and run.record["status"] == "completed"
    assert [c["weights_hash"] for c in run.log["checkpoints"]] == [
        c["weights_hash"] for c in reference.log["checkpoints"]
    ]
    assert timeless(run.metrics) == timeless(reference.metrics)
    assert [m["step"] for m in run.metrics] == [1, 2, 3, 4]  # no step lost or repeated
    assert all(torch.equal(a["tokens"], b["tokens"]) for a, b in zip(run.rollouts, reference.rollouts))
    assert run.evals == reference.evals
    assert run.record["interrupted"] is None and run.record["steps_completed"] == 4
    assert not partial_of().exists()  # the partial state is gone once the run is complete


def test_the_reference_run_learns_from_its_samples_at_every_step(tiny_reference):
    """Otherwise "resumed equals uninterrupted" could hold without the resumed steps depending on their samples."""
    hashes = [c["weights_hash"] for c in tiny_reference.log["checkpoints"]]
    assert len(set(hashes)) == 3
    assert all(m["zero_variance_frac"] < 1 and m["loss"] != 0 for m in tiny_reference.metrics)


def test_ctrl_c_after_a_checkpoint_leaves_an_interrupted_record_and_resumes_identically(
    tiny_cache, tiny_reference, monkeypatch
):
    partial = interrupted_after_step_2(monkeypatch)
    assert not runs.entry_path("tiny", 0, 1).exists()  # no cache entry pretends the run is complete
    assert sorted(p.name for p in partial.iterdir()) == ["log-000002.pt", "record.json", "state.pt"]
    record = rec.load(partial / "record.json")
    assert record["status"] == "interrupted"
    assert record["interrupted"] == {"step": 2, "last_checkpoint": str(partial / "state.pt")}
    assert [c["step"] for c in record["checkpoints"]] == [0, 2] and record["steps_completed"] == 2
    assert RLState.load(partial / "state.pt").step == 2
    assert_same_as_reference(runs.load("tiny", 0, 1), tiny_reference)


def test_ctrl_c_before_the_first_saved_state_restarts_from_the_start(tiny_cache, tiny_reference, monkeypatch):
    interrupt_at(monkeypatch, 2)  # during checkpoint 2, before its state is saved
    with pytest.raises(KeyboardInterrupt):
        runs.load("tiny", 0, 1)
    partial = partial_of()
    assert sorted(p.name for p in partial.iterdir()) == ["record.json"]
    record = rec.load(partial / "record.json")
    assert record["status"] == "interrupted"
    assert record["interrupted"] == {"step": 0, "last_checkpoint": None}
    assert_same_as_reference(runs.load("tiny", 0, 1), tiny_reference)


def test_the_command_line_reports_an_interrupt_in_one_line(tiny_cache, monkeypatch, capsys):
    from rlbook import cli

    interrupt_at(monkeypatch, 4)
    assert cli.main(["run", "tiny", "--threads", "1"]) == 130
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        "rlbook run: interrupted; the run record is marked interrupted and the run resumes "
        "from its last checkpoint next time\n"
    )
    assert rec.load(partial_of() / "record.json")["status"] == "interrupted"


def interrupted_after_step_2(monkeypatch) -> Path:
    """Ctrl-C the tiny run during checkpoint 4, after its step-2 state was saved; returns the partial folder."""
    interrupt_at(monkeypatch, 4)
    with pytest.raises(KeyboardInterrupt):
        runs.load("tiny", 0, 1)
    return partial_of()


def truncate_the_state(partial: Path) -> None:
    state = partial / "state.pt"
    state.write_bytes(state.read_bytes()[:100])


def lose_a_log_piece(partial: Path) -> None:
    (partial / "log-000002.pt").unlink()


@pytest.mark.parametrize("damage, warning", [(truncate_the_state, "state"), (lose_a_log_piece, "log pieces hold")])
def test_a_damaged_partial_state_is_reported_and_the_run_restarts(
    tiny_cache, tiny_reference, monkeypatch, damage, warning
):
    damage(interrupted_after_step_2(monkeypatch))
    with pytest.warns(UserWarning, match=warning):
        run = runs.load("tiny", 0, 1)
    assert_same_as_reference(run, tiny_reference)


def test_a_log_piece_from_a_save_cut_short_is_left_out(tiny_cache, tiny_reference, monkeypatch):
    """A piece written after the state it follows (the save stopped between its two files) is not read."""
    partial = interrupted_after_step_2(monkeypatch)
    (partial / "log-000004.pt").write_bytes((partial / "log-000002.pt").read_bytes())
    assert_same_as_reference(runs.load("tiny", 0, 1), tiny_reference)


def slow_cli_run(stderr: str) -> None:
    """A child process: ``rlbook run tiny`` whose step-4 checkpoint takes a minute, so a signal finds it busy."""
    real = loop.checkpoint_eval

    def slow(policy, cfg, seed, step, verifier=None):
        if step == 4:
            time.sleep(60)
        return real(policy, cfg, seed, step, verifier)

    from rlbook import cli

    loop.checkpoint_eval = slow
    sys.stderr = open(stderr, "w")  # noqa: SIM115 -- the child's stderr until it exits
    sys.exit(cli.main(["run", "tiny", "--threads", "1"]))


def wait_for(path: Path, process, timeout: float = 120.0) -> None:
    """Wait until ``path`` exists, failing if the process ends first or time runs out."""
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert process.is_alive(), f"the run ended with {process.exitcode} before {path.name} appeared"
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.05)


def test_sigterm_leaves_an_interrupted_record_and_resumes_identically(tiny_cache, tiny_reference, tmp_path):
    stderr = tmp_path / "stderr.txt"
    process = multiprocessing.get_context("fork").Process(target=slow_cli_run, args=(str(stderr),))
    process.start()
    try:
        wait_for(partial_of() / "state.pt", process)  # the step-2 state is saved: the run is past step 2
        os.kill(process.pid, signal.SIGTERM)
        process.join(timeout=60)
    finally:
        process.kill()
    assert process.exitcode == 130
    assert stderr.read_text() == (
        "rlbook run: interrupted; the run record is marked interrupted and the run "
        "resumes from its last checkpoint next time\n"
    )
    record = rec.load(partial_of() / "record.json")
    assert record["status"] == "interrupted" and record["interrupted"]["step"] == 2
    assert_same_as_reference(runs.load("tiny", 0, 1), tiny_reference)
