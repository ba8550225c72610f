"""The named runs and their cache (rlbook.runs), using the shared cached base and main runs of seed 0."""

from __future__ import annotations

import pytest

from rlbook import record as rec
from rlbook import runs
from rlbook.core.policy import weights_hash
from rlbook.core.train import PretrainConfig, SFTConfig


@pytest.fixture(scope="module")
def base():
    return runs.load("base", 0)


@pytest.fixture(scope="module")
def main(base):
    return runs.load("main", 0)


def test_base_run_accessors(base):
    assert base.name == "base" and base.seed == 0 and base.threads == runs.DEFAULT_THREADS
    assert base.steps == [0, 1]
    assert [e["step"] for e in base.evals] == [0, 1]
    assert base.eval_at() is base.evals[-1] and base.eval_at(0) is base.evals[0]
    assert weights_hash(base.policy()) == base.log["checkpoints"][1]["weights_hash"]
    assert weights_hash(base.policy(0)) == base.log["checkpoints"][0]["weights_hash"]
    assert base.policy().version == "base@sft" and base.policy(0).version == "base@pretrained"
    assert base.metrics == [] and base.rollouts == []


def test_main_run_accessors(main):
    assert main.steps == list(range(0, 101, 10))
    assert [m["step"] for m in main.metrics] == list(range(1, 101))
    assert main.metric("reward_mean") == [m["reward_mean"] for m in main.metrics]
    assert main.metric("no such key") == [None] * 100
    assert main.eval_at(50)["step"] == 50 and main.eval_at()["step"] == 100
    assert len(main.eval_at(0)["heldout_per_prompt"]) == 40 and len(main.eval_at(0)["train_per_prompt"]) == 60
    policy = main.policy(30)
    assert policy.version == "main@30"
    assert weights_hash(policy) == main.log["checkpoints"][3]["weights_hash"]
    with pytest.raises(ValueError, match="no checkpoint at step 35"):
        main.policy(35)
    assert len(main.rollouts) == 100
    first = main.rollouts[0]
    assert first["step"] == 1 and first["policy_version"] == "main@0"
    assert first["tokens"].shape == (60 * 16, 4) and len(first["prompts"]) == 60


def test_main_starts_from_the_base_policy(base, main):
    base_hash = base.log["checkpoints"][-1]["weights_hash"]
    assert main.log["checkpoints"][0]["weights_hash"] == base_hash
    assert main.record["base_policy"] == {"name": "base", "version": "base@sft", "weights_hash": base_hash}
    # The base is evaluated with the sampling seed of an RL run's step 0: the same numbers.
    assert {**base.eval_at(1), "step": 0} == main.eval_at(0)


def test_records_validate_and_name_the_run(base, main):
    for run in (base, main):
        record = rec.validate(run.record)
        assert record["run_name"] == run.name and record["seed"] == 0
        assert record["threads"] == run.threads == runs.DEFAULT_THREADS == 1
        assert record["status"] == run.log["status"] == "completed"
        assert [c["weights_hash"] for c in record["checkpoints"]] == [c["weights_hash"] for c in run.log["checkpoints"]]
        assert record["prompt_split"]["counts"] == {"sft": 30, "train": 60, "heldout": 40, "validation": 20, "test": 20}


def test_main_record_counts_what_happened(main):
    record = main.record
    assert record["rollouts_before_filtering"] == 100 * 60 * 16 == record["cost"]["rollouts"]
    assert record["rollouts_used"] <= record["rollouts_before_filtering"]
    assert sum(record["outcome_labels"].values()) == record["rollouts_before_filtering"]
    assert record["cost"]["generated_tokens"] == sum(int(r["lengths"].sum()) for r in main.rollouts)
    assert record["sampling"] == {"temperature": 1.0, "group_size": 16, "prompts_per_step": 60, "token_budget": 4}
    values = [e["value"] for e in record["evaluations"] if e["metric"].startswith("expected_reward")]
    assert values == [e["heldout_expected_reward"] for e in main.evals]


def test_a_dynamic_sampling_record_counts_every_answer_sampled_and_names_the_choice():
    run = runs.load("dynamic", 0)
    record = rec.validate(run.record)
    sampled = sum(m["rollouts_sampled"] for m in run.metrics)
    kept = sum(record["outcome_labels"].values())
    assert record["cost"]["rollouts"] == record["rollouts_before_filtering"] == sampled > kept
    assert kept == sum(len(r["statuses"]) for r in run.rollouts)
    assert (
        record["update"]["schedule"]["dynamic_sampling_refill_rounds"] == runs.spec("dynamic").rl_config().refill_rounds
    )
    assert "dynamic_sampling_refill_rounds" not in runs.load("main", 0).record["update"]["schedule"]


def test_a_second_load_is_served_from_the_cache(main):
    again = runs.load("main", 0)
    assert again.cached is True
    assert again.seconds < 10
    assert again.path == main.path == runs.entry_path("main", 0, runs.DEFAULT_THREADS)
    assert again.record["run_id"] == main.record["run_id"]
    assert [c["weights_hash"] for c in again.log["checkpoints"]] == [c["weights_hash"] for c in main.log["checkpoints"]]


TINY_BASE = runs.RunSpec(
    "tiny-base",
    "a tiny base run",
    pretrain=PretrainConfig(steps=3, batch=4, warmup=1),
    sft=SFTConfig(steps=2, replay_batch=2),
)


def test_the_seeds_of_a_base_run_share_one_pretraining_trained_once(tmp_path, monkeypatch):
    monkeypatch.setenv("RLBOOK_CACHE", str(tmp_path))
    monkeypatch.setenv("RLBOOK_PROGRESS", "0")
    monkeypatch.setitem(runs.RUNS, "tiny-base", TINY_BASE)
    first, second = runs.load("tiny-base", 0, 1), runs.load("tiny-base", 3, 1)
    assert first.log["timing"]["pretrained_now"] and not second.log["timing"]["pretrained_now"]
    assert first.log["timing"]["pretrain_seed"] == second.log["timing"]["pretrain_seed"] == runs.PRETRAIN_SEED
    pretrained = [run.log["checkpoints"][0]["weights_hash"] for run in (first, second)]
    tuned = [run.log["checkpoints"][1]["weights_hash"] for run in (first, second)]
    assert pretrained[0] == pretrained[1] and tuned[0] != tuned[1]  # the seeds part at SFT
    assert second.record["update"]["schedule"]["pretrain_seed"] == runs.PRETRAIN_SEED
    assert len(list(tmp_path.glob("tiny-base-pretrained-t1-*/pretrained.pt"))) == 1


def test_a_damaged_pretraining_entry_is_trained_again_identically(tmp_path, monkeypatch):
    monkeypatch.setenv("RLBOOK_CACHE", str(tmp_path))
    monkeypatch.setenv("RLBOOK_PROGRESS", "0")
    monkeypatch.setitem(runs.RUNS, "tiny-base", TINY_BASE)
    first = runs.load("tiny-base", 0, 1)
    (stored,) = tmp_path.glob("tiny-base-pretrained-t1-*/pretrained.pt")
    stored.write_bytes(b"garbage")
    with pytest.warns(UserWarning, match="damaged"):
        again = runs.load("tiny-base", 0, 1, rebuild=True)
    assert again.log["timing"]["pretrained_now"]
    assert again.log["checkpoints"][0]["weights_hash"] == first.log["checkpoints"][0]["weights_hash"]


def test_the_book_runs_of_every_seed_start_from_one_pretrained_policy():
    for name in ("base", "process-base"):
        hashes = {runs.load(name, seed).log["checkpoints"][0]["weights_hash"] for seed in (0, 1)}
        assert len(hashes) == 1, name


@pytest.mark.parametrize("seed", [0, pytest.param(1, marks=pytest.mark.slow), pytest.param(2, marks=pytest.mark.slow)])
def test_base_is_neither_hopeless_nor_solved_and_main_lifts_it_by_at_least_0_05(seed):
    """The recipe the book relies on (issue 2): base is neither hopeless nor solved, and RL helps held-out sums.

    Base's held-out expected reward moves a lot between numerical draws (0.30 to 0.50 on the draws seen so far,
    seeds 0-2), so the bounds say only that a group of 16 samples usually holds both right and wrong answers.
    The lift was 0.15 or more on most draws, but less on seed 0 of one CI machine; chapter 1 claims only a rise.
    """
    main_run = runs.load("main", seed)
    before, after = main_run.eval_at(0), main_run.eval_at()
    figures = {
        key: (round(before[key], 3), round(after[key], 3))
        for key in ("heldout_expected_reward", "heldout_greedy_accuracy")
    }
    assert 0.2 <= before["heldout_expected_reward"] <= 0.8, figures
    assert after["heldout_expected_reward"] - before["heldout_expected_reward"] >= 0.05, figures
    assert after["heldout_greedy_accuracy"] > before["heldout_greedy_accuracy"], figures


def test_the_learned_judge_beats_chance_on_fresh_samples_of_its_training_prompts():
    report = runs.load_judge(0).report
    assert report["train_prompts"]["auc"] > 0.75 and report["train_prompts"]["accuracy"] > 0.75, report
    assert set(report) == {"train_prompts", "heldout_prompts"}
