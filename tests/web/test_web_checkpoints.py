"""rlbook.publish.checkpoints: what the web workshop is given, taken from the run cache bit for bit."""
from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from rlbook import runs
from rlbook.publish import checkpoints


def test_the_compact_form_keeps_every_bit():
    rng = np.random.default_rng(0)
    flat = rng.normal(0, 0.3, 5000).astype(np.float32)
    flat[:4] = [np.nan, -0.0, np.inf, 1e-45]
    base = (flat + rng.normal(0, 1e-3, flat.size)).astype(np.float32)
    for reference in (None, base):
        text, size = checkpoints.encode_weights(flat, reference)
        back = checkpoints.decode_weights(text, size, reference)
        assert back.view(np.uint32).tolist() == flat.view(np.uint32).tolist()
        assert '"' not in text and "\\" not in text


def test_the_export_holds_the_runs_last_checkpoints(workshop_data):
    decoded = {}
    for entry in workshop_data["checkpoints"]:
        run = runs.load(entry["run"], entry["seed"])
        assert entry["weights_hash"] == run.log["checkpoints"][-1]["weights_hash"]
        decoded[entry["name"]] = checkpoints.decode_weights(entry["data"], entry["bytes"],
                                                            decoded["base"] if entry["delta"] else None)
        _, flat = checkpoints.flat_weights(run.policy())
        assert decoded[entry["name"]].view(np.uint32).tolist() == flat.view(np.uint32).tolist()
    for ref in workshop_data["main_seeds"]:
        assert ref["heldout_expected_reward"] == [e["heldout_expected_reward"] for e in runs.load("main", ref["seed"]).evals]
    assert workshop_data["recipe"]["steps"] == runs.spec("main").rl.steps
    assert len(workshop_data["splits"]["train"]) == 60 and len(workshop_data["splits"]["heldout"]) == 40


def test_a_recipe_the_page_cannot_run_is_refused():
    with pytest.raises(ValueError, match="cispo"):
        checkpoints.recipe(replace(runs.spec("main").rl, loss="cispo"))


def test_the_data_script_sets_one_global(workshop_data):
    script = checkpoints.data_script(workshop_data)
    assignment = next(line for line in script.splitlines() if line.startswith("globalThis."))
    name, _, value = assignment.partition(" = ")
    assert name == f"globalThis.{checkpoints.GLOBAL_NAME}"
    assert json.loads(value.rstrip(";")) == json.loads(json.dumps(workshop_data))
