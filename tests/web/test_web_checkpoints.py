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
    assert [c["name"] for c in workshop_data["checkpoints"]] == ["base", "main"]
    decoded = {}
    for entry in workshop_data["checkpoints"]:
        run = runs.load(entry["run"], entry["seed"])
        assert entry["weights_hash"] == run.log["checkpoints"][-1]["weights_hash"]
        decoded[entry["name"]] = checkpoints.decode_weights(
            entry["data"], entry["bytes"], decoded["base"] if entry["delta"] else None
        )
        _, flat = checkpoints.flat_weights(run.policy())
        assert decoded[entry["name"]].view(np.uint32).tolist() == flat.view(np.uint32).tolist()
    for name, refs in workshop_data["references"].items():
        for ref in refs:
            evals = runs.load(name, ref["seed"]).evals
            assert ref["heldout_expected_reward"] == [e["heldout_expected_reward"] for e in evals]
    for name, recipe in workshop_data["recipes"].items():
        cfg = runs.spec(name).rl
        assert (recipe["steps"], recipe["lr"], recipe["warmup"], recipe["verifier"]) == (
            cfg.steps,
            cfg.lr,
            cfg.warmup,
            cfg.verifier,
        )
    assert len(workshop_data["splits"]["train"]) == 60 and len(workshop_data["splits"]["heldout"]) == 40


def test_the_exploit_runs_loophole_shares_are_chapter_5s(workshop_data):
    """The shares the hack panel draws for the book's seeds: the analysis layer's audit computes the same."""
    from rlbook.analysis import audit

    for ref in workshop_data["references"]["exploit"]:
        run = runs.load("exploit", ref["seed"])
        assert ref["loophole_share"] == audit.loophole_share(run.rollouts)
        assert ref["loophole_steps"] == [s["step"] for s in run.rollouts]
        assert ref["takeover"] == audit.takeover_step(run.rollouts)


def test_a_recipe_the_page_cannot_run_is_refused():
    with pytest.raises(ValueError, match="cispo"):
        checkpoints.recipe(replace(runs.spec("main").rl, loss="cispo"))


def _assigned(script: str) -> tuple[str, object]:
    assignment = next(line for line in script.splitlines() if line.startswith("globalThis."))
    name, _, value = assignment.partition(" = ")
    return name, json.loads(value.rstrip(";"))


def test_the_data_scripts_set_one_global_each(workshop_data):
    name, shared = _assigned(checkpoints.data_script(workshop_data))
    assert name == f"globalThis.{checkpoints.GLOBAL_NAME}"
    want = json.loads(json.dumps(workshop_data))
    assert shared == {**want, "checkpoints": want["checkpoints"][:1]}
    name, main = _assigned(checkpoints.main_script(workshop_data))
    assert name == f"globalThis.{checkpoints.MAIN_NAME}" and main == want["checkpoints"][1]
