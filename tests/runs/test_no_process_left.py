"""No process left behind (rlbook.core.processes): the real commands are started, stopped, and searched for.

Each test starts a command that trains the book's runs into an empty cache,
waits until its workers are training, stops it the way a reader would
(Ctrl-C to the command alone, or SIGTERM), and checks that every process it
started is gone within a few seconds and that it said so in one line, with
no traceback.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import psutil
import pytest

from rlbook.core import processes

pytestmark = pytest.mark.slow


def _as_from_a_terminal() -> None:
    """In the child, before it runs: Ctrl-C back to its default. A suite started in the background (``make test &``,
    ``nohup``) runs with SIGINT ignored, which its children would inherit, and Python then never turns Ctrl-C
    into KeyboardInterrupt: the tests below would measure how the suite was started, not the command."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start(command: list[str], tmp_path) -> subprocess.Popen:
    env = dict(os.environ, RLBOOK_CACHE=str(tmp_path / "cache"), RLBOOK_PROGRESS="0")
    return subprocess.Popen(
        command,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_as_from_a_terminal,  # noqa: PLW1509 - only a signal is reset, before the child runs any thread
    )


def wait_for_workers(process: subprocess.Popen, count: int, timeout: float = 120.0) -> list[psutil.Process]:
    """The process's descendants once ``count`` of them run Python (the prefetch and its workers)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = [p for p in psutil.Process(process.pid).children(recursive=True) if "python" in p.name().lower()]
        if len(found) >= count:
            time.sleep(3.0)  # let them start training
            return psutil.Process(process.pid).children(recursive=True)
        time.sleep(0.2)
    process.kill()
    raise AssertionError(f"{count} worker processes never started")


def gone(found: list[psutil.Process], timeout: float = 30.0) -> list[psutil.Process]:
    _, alive = psutil.wait_procs(found, timeout=timeout)
    for p in alive:
        p.kill()
    return alive


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_stopping_the_prefetch_stops_its_workers(tmp_path, sig):
    process = start([sys.executable, "-m", "rlbook.book.prefetch", "--jobs", "2"], tmp_path)
    workers = wait_for_workers(process, 2)
    process.send_signal(sig)
    try:
        _, err = process.communicate(timeout=180)
    except subprocess.TimeoutExpired:  # a prefetch that did not stop must not train on after the test
        process.kill()
        gone(workers, timeout=0)
        raise
    survivors = gone(workers)
    assert process.returncode == 130
    assert not survivors, "workers outlived the prefetch"
    assert "interrupted; the runs and facts it finished are cached" in err and "Traceback" not in err


def test_ctrl_c_on_rlbook_build_stops_the_prefetch_and_its_workers(tmp_path):
    rlbook = [sys.executable, "-c", "import sys; from rlbook.cli import main; sys.exit(main())"]
    process = start([*rlbook, "build", "--backend", "pandoc"], tmp_path)
    descendants = wait_for_workers(process, 3)  # the prefetch and its two workers
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=180)
    assert process.returncode == 130
    assert not gone(descendants), "the prefetch or its workers outlived rlbook build"
    assert "rlbook build: interrupted; the runs trained so far are cached" in err


def test_a_launch_that_times_out_stops_every_process_it_started():
    script = "import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); time.sleep(60)"
    before = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        processes.run_group([sys.executable, "-c", script], timeout=2)
    assert time.monotonic() - before < 20
    leftovers = [p for p in psutil.process_iter(["cmdline"]) if "time.sleep(60)" in " ".join(p.info["cmdline"] or [])]
    assert not gone(leftovers, timeout=1), "the launcher's child outlived the timeout"
