"""rlbook.core.processes: children are stopped, the resource tracker is left to end by itself."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

import pool_tasks
import psutil
import pytest

from rlbook.core import processes

SPARES_THE_TRACKER = """
import multiprocessing, subprocess, sys, time
import psutil
from rlbook.core import processes
multiprocessing.get_context("spawn").Lock()  # a named lock starts this process's resource tracker
tracker = processes._resource_tracker_pid()
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
started = time.monotonic()
processes.stop_children(grace=5.0)
print(tracker is not None, psutil.pid_exists(tracker), child.poll() is not None, round(time.monotonic() - started, 1))
"""


def test_stop_children_stops_a_child_and_spares_the_resource_tracker():
    # in a process of its own: the test process may have children of other tests' fixtures
    done = subprocess.run(
        [sys.executable, "-c", SPARES_THE_TRACKER], check=True, capture_output=True, text=True, timeout=60
    )
    had_tracker, tracker_alive, child_gone, seconds = done.stdout.split()
    assert had_tracker == tracker_alive == child_gone == "True", done.stdout + done.stderr
    assert float(seconds) < 4.0, "stop_children waited out its grace on the tracker, which ignores SIGTERM"


def test_stop_group_stops_a_leader_and_the_process_it_started():
    script = "import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); time.sleep(60)"
    leader = subprocess.Popen([sys.executable, "-c", script], start_new_session=True)
    time.sleep(1.0)
    grandchild = psutil.Process(leader.pid).children()[0]
    processes.stop_group(leader, grace=5.0)
    assert leader.returncode is not None
    psutil.wait_procs([grandchild], timeout=5)
    assert not grandchild.is_running() or grandchild.status() == psutil.STATUS_ZOMBIE


def test_a_worker_told_to_stop_ends_its_task_and_takes_no_other(tmp_path):
    started, marker = tmp_path / "started", tmp_path / "marker"
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(1, mp_context=spawn, initializer=processes.die_with_parent) as pool:
        first = pool.submit(pool_tasks.long_task, str(started))
        second = pool.submit(pool_tasks.marking_task, str(marker))  # queued behind the first
        deadline = time.monotonic() + 60
        while not started.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        worker = int(started.read_text())
        os.kill(worker, signal.SIGTERM)
        with pytest.raises(BrokenProcessPool):
            first.result(timeout=30)
        with pytest.raises(BrokenProcessPool):
            second.result(timeout=30)
    assert not marker.exists(), "the stopped worker took the next task"
    assert not psutil.pid_exists(worker) or psutil.Process(worker).status() == psutil.STATUS_ZOMBIE
