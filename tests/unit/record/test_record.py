"""Tests for rlbook.record: schema, validation, atomic save and load, table view."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from rlbook import record as rec
from rlbook.record import RecordError, display
from rlbook.record import io as record_io


def _config() -> dict:
    return {
        "seed": 0,
        "threads": 2,
        "base_policy": {"name": "sft", "version": 1, "weights_hash": "abc123"},
        "prompt_template": "U:{a}+{b}?|A:",
        "prompt_split": {"world": "single", "train": "train", "counts": {"train": 60, "heldout": 40}},
        "sampling": {"temperature": 1.0, "group_size": 16, "prompts_per_step": 60, "token_budget": 4},
        "verifier": {"name": "exact", "version": "1", "implementation": "rlbook.core.rewards.exact_verifier"},
        "advantage": {"method": "group mean, std-normalised", "eps": 1e-6, "ddof": 0},
        "update": {
            "loss": "ppo-clip",
            "clip": {"epsilon": 0.2},
            "aggregation": "token-mean",
            "lr": 3e-4,
            "optimizer": "AdamW",
            "steps": 100,
            "updates_per_batch": 1,
            "schedule": "constant",
        },
        "reference": {"kl_beta": 0.0, "estimator": None, "policy": None},
    }


@pytest.fixture
def record() -> dict:
    r = rec.new_record("main", **_config())
    rec.add_checkpoint(r, 0, 0, "ckpt/0.pt", "h0")
    rec.add_checkpoint(r, 50, 50, "ckpt/50.pt", "h50")
    rec.add_evaluation(r, 50, "heldout", 40, 1.0, 4, "expected_reward", 0.7, (0.6, 0.8))
    rec.add_intervention(r, 30, "exclude batch", "verifier outage", "verifier_errors", 12, 5, [3, 4, 5])
    rec.add_aborted_update(r, 31, "KL too large", {"kl": 0.9})
    r["rollouts_before_filtering"] = 96_000
    r["rollouts_used"] = 96_000
    r["status"] = "completed"
    return rec.validate(r)


def test_fields_and_schema_agree():
    assert list(rec.RUN_RECORD_FIELDS) == list(rec.RECORD_SCHEMA)
    assert len(rec.RUN_RECORD_FIELDS) == 28
    assert all(desc and "\n" not in desc for desc in rec.RUN_RECORD_FIELDS.values())


def test_new_record_defaults():
    r = rec.new_record("main", **_config())
    assert r["status"] == "running"
    assert r["created"].endswith("+00:00")
    assert r["checkpoints"] == [] and r["interventions"] == [] and r["interrupted"] is None
    assert r["versions"]["python"].count(".") == 2
    assert len(r["versions"]["source_hash"]) == 16
    assert rec.validate(r) is r


def test_new_record_checks_given_fields():
    with pytest.raises(RecordError) as err:
        rec.new_record("main", seed=-1)
    assert err.value.field == "seed"


def test_round_trip_and_atomic_save(record, tmp_path):
    path = tmp_path / "runs" / "main.json"
    assert rec.save(record, path) == path
    assert rec.load(path) == json.loads(json.dumps(record))
    assert [p.name for p in path.parent.iterdir()] == ["main.json"]


def test_save_converts_numpy_scalars(record, tmp_path):
    record["evaluations"][0]["value"] = np.float64(0.75)
    record["seed"] = np.int64(3)
    rec.save(record, tmp_path / "r.json")
    loaded = rec.load(tmp_path / "r.json")
    assert loaded["seed"] == 3 and loaded["evaluations"][0]["value"] == 0.75


def test_failed_save_keeps_old_file_and_leaves_no_temp(record, tmp_path, monkeypatch):
    path = tmp_path / "r.json"
    rec.save(record, path)
    before = path.read_text()
    unserialisable = copy.deepcopy(record)
    unserialisable["update"]["clip"] = {"epsilon": object()}
    with pytest.raises(RecordError, match="cannot be written as JSON"):
        rec.save(unserialisable, path)

    def crash(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(record_io.os, "replace", crash)
    record["status"] = "aborted"
    with pytest.raises(OSError):
        rec.save(record, path)
    assert path.read_text() == before
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


def _mutated(record: dict, change) -> dict:
    bad = copy.deepcopy(record)
    change(bad)
    return bad


@pytest.mark.parametrize(
    "change, field",
    [
        (lambda r: r.pop("verifier"), "verifier"),
        (lambda r: r["sampling"].pop("group_size"), "sampling.group_size"),
        (lambda r: r.__setitem__("seed", "zero"), "seed"),
        (lambda r: r.__setitem__("threads", 0), "threads"),
        (lambda r: r["update"].__setitem__("lr", float("nan")), "update.lr"),
        (lambda r: r.__setitem__("status", "finished"), "status"),
        (lambda r: r.__setitem__("created", "yesterday"), "created"),
        (lambda r: r.__setitem__("schema_version", 99), "schema_version"),
        (lambda r: r["checkpoints"][1].__setitem__("step", 0), "checkpoints[1].step"),
        (lambda r: r["checkpoints"][0].pop("weights_hash"), "checkpoints[0].weights_hash"),
        (lambda r: r["interventions"][0].pop("reason"), "interventions[0].reason"),
        (lambda r: r["interventions"][0].pop("trigger"), "interventions[0].trigger"),
        (lambda r: r["interventions"][0]["trigger"].pop("threshold"), "interventions[0].trigger.threshold"),
        (lambda r: r["interventions"].append("paused"), "interventions[1]"),
        (lambda r: r["evaluations"][0].__setitem__("ci", [0.9, 0.1]), "evaluations[0].ci"),
        (lambda r: r.__setitem__("outcome_labels", {"accepted": -1}), "outcome_labels"),
        (lambda r: r.__setitem__("rollouts_used", 96_001), "rollouts_used"),
        (lambda r: r.__setitem__("status", "interrupted"), "interrupted"),
    ],
)
def test_invalid_records_name_the_field(record, change, field):
    with pytest.raises(RecordError) as err:
        rec.validate(_mutated(record, change))
    assert err.value.field == field
    assert f"'{field}'" in str(err.value)


def test_interrupted_run_is_valid(record):
    record["status"] = "interrupted"
    record["interrupted"] = {"step": 60, "last_checkpoint": "ckpt/50.pt"}
    assert rec.validate(record)["interrupted"]["step"] == 60


def test_add_checkpoint_rejects_non_increasing_step(record):
    with pytest.raises(RecordError) as err:
        rec.add_checkpoint(record, 50, 51, "ckpt/x.pt", "h")
    assert err.value.field == "checkpoints[2].step"
    assert len(record["checkpoints"]) == 2


def test_add_intervention_builds_full_entry(record):
    entry = record["interventions"][0]
    assert entry == {
        "step": 30,
        "kind": "exclude batch",
        "reason": "verifier outage",
        "trigger": {"metric": "verifier_errors", "value": 12, "threshold": 5},
        "affected_rollouts": [3, 4, 5],
    }
    with pytest.raises(RecordError):
        rec.add_intervention(record, 31, "pause", "spike", "reward", 0.9, 0.5, affected="some")


def test_load_errors_name_the_path(record, tmp_path):
    missing = tmp_path / "nope.json"
    with pytest.raises(RecordError, match="nope.json: no run record found"):
        rec.load(missing)
    truncated = tmp_path / "cut.json"
    rec.save(record, truncated)
    truncated.write_text(truncated.read_text()[:200])
    with pytest.raises(RecordError, match="cut.json: not valid JSON") as err:
        rec.load(truncated)
    assert "\n" not in str(err.value)
    invalid = tmp_path / "bad.json"
    invalid.write_text(json.dumps(_mutated(record, lambda r: r.pop("cost"))))
    with pytest.raises(RecordError, match=r"bad.json: run record field 'cost': missing") as err:
        rec.load(invalid)
    assert err.value.field == "cost"


def test_as_table_flattens_and_summarises(record):
    record["evaluations"] = [dict(record["evaluations"][0], step=s) for s in (0, 10, 20, 30, 40)]
    rows = dict(display.as_table(record))
    assert rows["update.lr"] == "0.0003"
    assert rows["update.clip.epsilon"] == "0.2"
    assert rows["reference.policy"] == "null"
    assert rows["sampling.temperature"] == "1.0"
    assert rows["outcome_labels"] == "none"
    assert rows["checkpoints"].startswith("2 entries: (step=0, policy_version=0, path=ckpt/0.pt")
    assert rows["evaluations"].startswith("5 entries: (step=0,")
    assert rows["evaluations"].endswith("; …")
    assert rows["evaluations"].count("step=") == 3
    assert "affected_rollouts=3 entries: 3; 4; 5" in rows["interventions"]
    assert display.as_table(record)[0] == ("schema_version", "1")
    record["checkpoints"] = record["checkpoints"][:1]
    assert dict(display.as_table(record))["checkpoints"].startswith("1 entry: (step=0,")
