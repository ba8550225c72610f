"""The TRL appendix's cache files heal themselves (rlbook.trl.trainer.load_run, rlbook.trl.launch.load_processes_run).

A damaged file is refused with one warning naming it and made again; it never
raises a traceback on every build until someone deletes it by hand. The runs
are stood in for by small fakes: what is tested is the cache, not TRL.
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("trl")

from rlbook.trl import launch, trainer
from rlbook.trl.spec import DEMO, TRLRun


class FakeRun:
    """What run_grpo returns, reduced to what the cache writes: plain fields and the spec."""

    def __init__(self, spec, seed, threads):
        self.spec, self.seed, self.threads = spec, seed, threads


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("RLBOOK_CACHE", str(tmp_path))
    monkeypatch.setattr(trainer, "run_key", lambda spec, seed, threads: "k" * 16)
    monkeypatch.setattr(launch, "processes_key", lambda processes, steps, prompts: "k" * 16)
    return tmp_path


@pytest.mark.parametrize("damage", [b"", b"not a torch file", b"PK\x03\x04 truncated zip"])
def test_a_damaged_trl_run_is_refused_named_and_trained_again(cache, monkeypatch, damage):
    trained = []
    monkeypatch.setattr(
        trainer, "run_grpo", lambda spec, seed, threads: trained.append(seed) or FakeRun(spec, seed, threads)
    )
    monkeypatch.setattr(trainer, "TRLRun", lambda **fields: ("loaded", fields["seed"]))
    path = cache / f"{DEMO.name}-seed0-t1-{'k' * 16}.pt"
    path.write_bytes(damage)
    with pytest.warns(UserWarning, match=f"the cached TRL run {path} is damaged"):
        trainer.load_run(DEMO, 0, 1)
    assert trained == [0] and trainer.load_run(DEMO, 0, 1) == ("loaded", 0)  # kept whole this time
    assert not list(cache.glob(".*.tmp-*")), "a temporary file was left behind"


@pytest.mark.parametrize("damage", ["{not json", json.dumps([1, 2]), json.dumps({"code": 1})])
def test_a_damaged_trl_launch_is_refused_named_and_run_again(cache, monkeypatch, damage):
    ran = []
    monkeypatch.setattr(launch, "run_processes", lambda out, p, s, q: ran.append(p) or {"code": 0, "lines": []})
    monkeypatch.setattr(launch, "run_accelerate_cpu", lambda p: {"code": 2})
    path = cache / f"trl-processes2-{'k' * 16}.json"
    path.write_text(damage)
    with pytest.warns(UserWarning, match=f"the cached TRL launch {path} is damaged"):
        result = launch.load_processes_run(2, 3, 4)
    assert ran == [2] and result["code"] == 0 and json.loads(path.read_text()) == result
    assert launch.load_processes_run(2, 3, 4) == result and ran == [2]  # served from the healed file


def test_trl_run_fields_still_match_what_the_cache_writes():
    assert {"spec", "seed", "threads"} <= set(TRLRun.__dataclass_fields__)
