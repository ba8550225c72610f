"""The ``rlbook`` command (rlbook.cli): bad arguments exit 2 with one clear line; good ones print the contract.

Most calls run ``cli.main`` in-process (fast); two run the installed
``rlbook`` entry point in a subprocess. Commands that need a run read the
project's cached seed-0 base, or the tiny run of the conftest in a
temporary cache.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_calls import assert_usage_error, call

from rlbook import record as rec
from rlbook import runs
from rlbook.core.evaluate import evaluate, greedy_accuracy
from rlbook.core.rewards import STATUSES
from rlbook.core.world import Task, split

pytestmark = pytest.mark.usefixtures("one_thread")

PROMPT = "U:3+4?|A:"


def write(path: Path, text: str) -> str:
    path.write_text(text)
    return str(path)


def test_an_invalid_field_in_a_record_names_the_field(tmp_path, base_entry, capsys):
    record = json.loads((base_entry / "record.json").read_text())
    record["seed"] = "zero"
    assert_usage_error(*call(["audit", write(tmp_path / "bad.json", json.dumps(record))], capsys), "'seed'")


def test_an_unknown_checkpoint_step(base_entry, capsys):
    assert_usage_error(
        *call(["sample", PROMPT, "-n", "2", "--step", "7"], capsys),
        "rlbook sample: error: run 'base' has no checkpoint at step 7; its checkpoints are [0, 1]",
    )
    assert_usage_error(
        *call(["eval", "--run", "base", "--step", "7"], capsys),
        "rlbook eval: error: run 'base' has no checkpoint at step 7; its checkpoints are [0, 1]",
    )


def test_a_prompt_of_the_other_world(base_entry, capsys):
    assert_usage_error(
        *call(["sample", "U:3+4+5?|A:", "-n", "2"], capsys),
        "rlbook sample: error: run 'base' answers U:a+b?|A: prompts, not 'U:3+4+5?|A:'",
    )


@pytest.mark.parametrize("prompt", ["U:٣+4?|A:", "U:３+4?|A:"])
def test_a_prompt_with_non_ascii_digits(prompt, base_entry, capsys):
    assert_usage_error(*call(["sample", prompt, "-n", "2"], capsys), "is not a task prompt")
    code, out, _ = call(["verify", prompt, "7#", "--json"], capsys)
    assert code == 0 and json.loads(out)["status"] == "unverifiable"


def test_a_vanishing_temperature_is_refused_or_acts_greedy(base_entry, capsys):
    code, out, err = call(["sample", PROMPT, "-n", "4", "-T", "1e-300", "--json"], capsys)
    if code == 2:
        assert_usage_error(code, out, err, "temperature")
    else:
        greedy = evaluate(runs.load("base", 0).policy(), [Task((3, 4))], greedy=True).completions[0]
        assert [a["completion"] for a in json.loads(out)["answers"]] == greedy


RUN_CONTRACT = {
    "name",
    "seed",
    "threads",
    "status",
    "heldout_expected_reward_before",
    "heldout_expected_reward_after",
    "heldout_greedy_accuracy_before",
    "heldout_greedy_accuracy_after",
    "weights_hash",
    "wall_seconds",
    "cached",
    "record_path",
}


def test_run_prints_the_contract_and_then_reads_the_cache(tiny_cache, tiny_reference, capsys):
    code, out, err = call(["run", "tiny", "--threads", "1", "--json"], capsys)
    assert code == 0 and err == ""
    first = json.loads(out)
    assert set(first) == RUN_CONTRACT
    evals = tiny_reference.evals
    assert first == dict(
        first,
        name="tiny",
        seed=0,
        threads=1,
        status="completed",
        cached=False,
        heldout_expected_reward_before=evals[0]["heldout_expected_reward"],
        heldout_expected_reward_after=evals[-1]["heldout_expected_reward"],
        heldout_greedy_accuracy_before=evals[0]["heldout_greedy_accuracy"],
        heldout_greedy_accuracy_after=evals[-1]["heldout_greedy_accuracy"],
        weights_hash=tiny_reference.log["checkpoints"][-1]["weights_hash"],
        record_path=str(runs.entry_path("tiny", 0, 1) / "record.json"),
    )
    assert first["wall_seconds"] > 0
    assert rec.load(first["record_path"])["run_name"] == "tiny"
    second = json.loads(call(["run", "tiny", "--threads", "1", "--json"], capsys)[1])
    assert second["cached"] is True
    assert {k: v for k, v in second.items() if k not in ("cached", "wall_seconds")} == {
        k: v for k, v in first.items() if k not in ("cached", "wall_seconds")
    }


def test_run_of_the_cached_base(base_entry, capsys):
    code, out, _ = call(["run", "base", "--json"], capsys)
    result = json.loads(out)
    assert code == 0 and set(result) == RUN_CONTRACT
    assert result["cached"] is True and result["threads"] == runs.DEFAULT_THREADS
    assert result["record_path"] == str(base_entry / "record.json")


def test_sample_prints_the_answers_and_their_counts(base_entry, capsys):
    code, out, err = call(["sample", PROMPT, "-n", "8", "--json"], capsys)
    assert code == 0 and err == ""
    result = json.loads(out)
    assert {k: result[k] for k in ("prompt", "policy", "n", "temperature")} == {
        "prompt": PROMPT,
        "policy": "base@sft",
        "n": 8,
        "temperature": 1.0,
    }
    answers = result["answers"]
    assert sum(a["count"] for a in answers) == 8 and all(a["status"] in STATUSES for a in answers)
    assert [a["count"] for a in answers] == sorted((a["count"] for a in answers), reverse=True)
    accepted = sum(a["count"] for a in answers if a["status"] == "accepted")
    assert result["expected_reward"] == pytest.approx(accepted / 8)
    assert all(a["completion"] == "7#" for a in answers if a["status"] == "accepted")


def test_eval_matches_a_direct_evaluation(base_entry, capsys):
    code, out, err = call(["eval", "--run", "base", "-n", "4", "--json"], capsys)
    assert code == 0 and err == ""
    result = json.loads(out)
    policy, tasks = runs.load("base", 0).policy(), split("heldout")
    direct = evaluate(policy, tasks, n=4, budget=4, seed=0)
    assert {k: result[k] for k in ("run", "policy", "split", "prompts", "n", "temperature", "token_budget")} == {
        "run": "base",
        "policy": "base@sft",
        "split": "heldout",
        "prompts": 40,
        "n": 4,
        "temperature": 1.0,
        "token_budget": 4,
    }
    assert result["expected_reward"] == pytest.approx(direct.expected_reward)
    assert result["ci95"][0] <= result["expected_reward"] <= result["ci95"][1]
    assert result["greedy_accuracy"] == pytest.approx(greedy_accuracy(policy, tasks, 4))
    assert sum(result["status_counts"].values()) == 40 * 4
    code, out, _ = call(["eval", "--run", "base", "--step", "0", "-n", "1", "--json"], capsys)
    assert code == 0 and json.loads(out)["policy"] == "base@pretrained"


def test_audit_prints_the_record_as_a_table_or_json(base_entry, capsys):
    path = str(base_entry / "record.json")
    code, out, err = call(["audit", path], capsys)
    assert code == 0 and err == ""
    rows = dict(line.split(None, 1) for line in out.splitlines())
    assert rows["run_name"] == "base" and rows["seed"] == "0" and rows["status"] == "completed"
    code, out, _ = call(["audit", path, "--json"], capsys)
    assert code == 0 and json.loads(out) == rec.load(path)
