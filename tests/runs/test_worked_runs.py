"""Chapter 7's worked world on its cached runs, seeds 0 to 2: records, shared pretraining, lineage, what each logs."""

from __future__ import annotations

import pytest

from rlbook import record as rec
from rlbook import runs
from rlbook.core.world import TEMPLATES, WORKED_BUDGET

SEEDS = (0, 1, 2)
BASES = ("worked-base", "worked-direct-base")
RL_RUNS = ("worked", "worked-direct", "worked-rediscover")


@pytest.fixture(scope="module")
def loaded() -> dict[tuple[str, int], runs.Run]:
    return {(name, seed): runs.load(name, seed) for name in BASES + RL_RUNS for seed in SEEDS}


def test_every_record_validates_and_names_the_worked_world(loaded):
    for (name, seed), run in loaded.items():
        record = rec.validate(run.record)
        assert (record["run_name"], record["seed"], record["status"]) == (name, seed, "completed")
        assert record["prompt_template"] == TEMPLATES["worked"] == "#a+b="
        assert record["prompt_split"]["world"] == "worked"
        assert record["prompt_split"]["counts"] == {
            "sft": 40,
            "train": 300,
            "heldout": 300,
            "validation": 150,
            "test": 150,
        }


def test_one_pretraining_serves_both_base_runs_and_every_seed(loaded):
    pretrained = {loaded[name, seed].log["checkpoints"][0]["weights_hash"] for name in BASES for seed in SEEDS}
    assert len(pretrained) == 1
    assert loaded["worked-direct-base", 0].record["base_policy"]["version"] == "worked-base@pretrained"
    sft = {loaded[name, seed].log["checkpoints"][1]["weights_hash"] for name in BASES for seed in SEEDS}
    assert len(sft) == len(BASES) * len(SEEDS)  # each base run and seed fine-tunes its own way
    policy = loaded["worked-base", 0].policy()
    assert policy.cfg.rope and policy.cfg.vocab_size == 22 and policy.pos is None


def test_each_rl_run_starts_from_its_base_and_keeps_its_budget(loaded):
    for name in RL_RUNS:
        parent = runs.spec(name).parent
        for seed in SEEDS:
            run, base = loaded[name, seed], loaded[parent, seed]
            assert run.log["checkpoints"][0]["weights_hash"] == base.log["checkpoints"][-1]["weights_hash"]
            budget = run.record["sampling"]["token_budget"]
            assert budget == (4 if name == "worked-direct" else WORKED_BUDGET)
            if budget == WORKED_BUDGET:  # evaluated as its base was: the same numbers at step 0
                assert {**base.eval_at(1), "step": 0} == run.eval_at(0)


def test_every_checkpoint_logs_the_styles_of_its_held_out_answers(loaded):
    for name in RL_RUNS:
        for seed in SEEDS:
            run = loaded[name, seed]
            assert [e["step"] for e in run.evals] == run.steps
            for entry in run.evals:
                styles = entry["heldout_styles"]
                assert styles["worked"] + styles["direct"] == 300 * runs.spec(name).rl.eval_n
                accepted = (styles["worked_accepted"] + styles["direct_accepted"]) / (
                    styles["worked"] + styles["direct"]
                )
                assert accepted == pytest.approx(entry["heldout_expected_reward"])


def test_the_control_cannot_finish_a_worked_answer(loaded):
    for seed in SEEDS:
        for entry in loaded["worked-direct", seed].evals:
            assert entry["heldout_styles"]["worked_accepted"] == 0  # four characters hold no working and a sum
