"""Tests for rlbook.trl: the book's choices in TRL's terms, the audit readers, and a tiny real TRL run.

The translation, the reward function and the audit readers need no TRL and
always run. The tests that build a tokenizer, a GPT-2 model or a
GRPOTrainer skip cleanly when the ``trl`` extra is not installed.
"""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
import torch

from rlbook import record, runs
from rlbook import trl_bridge as tb
from rlbook.core.policy import weights_hash
from rlbook.core.rl import RLConfig
from rlbook.core.world import encode, split

MAIN = RLConfig()


P34, P98 = "U:3+4?|A:", "U:9+8?|A:"


def test_peer_benchmark_without_trl_returns_the_install_hint(monkeypatch):
    monkeypatch.setattr(tb.peer, "have_trl", lambda: False)
    assert tb.peer_benchmark(quick=True) == {"summary": tb.INSTALL_HINT, "trl": None}


@pytest.mark.parametrize("measure_kl, passes_per_step", [(True, 2), (False, 1)])
def test_rlbook_step_seconds_reads_the_reference_only_to_measure_kl(monkeypatch, measure_kl, passes_per_step):
    """The peer benchmark's same-work figure leaves out the reference pass, as TRL does at beta = 0."""
    from rlbook.core import packing, rl

    passes = []
    real = rl.generated_logprobs
    for module in (rl, packing):  # the update reads through rl, the reference through packing
        monkeypatch.setattr(
            module, "generated_logprobs", lambda policy, rollouts: passes.append(policy) or real(policy, rollouts)
        )
    cfg = replace(rl.RLConfig(), group_size=2)
    times = tb.rlbook_step_seconds(runs.load("base", 0).policy(), cfg, repeats=2, measure_kl=measure_kl)
    assert len(times) == 2 and min(times) > 0
    assert len(passes) == 3 * passes_per_step  # one warm-up step, then the two timed ones


@pytest.fixture(scope="module")
def trl():
    return pytest.importorskip("trl")


@pytest.fixture(scope="module")
def base(trl):
    return runs.load("base", 0)


def test_gpt2_copy_computes_the_same_logits_and_converts_back(base):
    policy = base.policy()
    model = tb.to_gpt2(policy).eval()
    ids = torch.tensor([encode("U:3+4?|A:7#"), encode("U:9+8?|A:17")])
    with torch.no_grad():
        assert torch.allclose(model(ids).logits, policy(ids)[0], atol=1e-5)
    back = tb.from_gpt2(model)
    assert back.cfg == policy.cfg
    assert weights_hash(back) == base.log["checkpoints"][-1]["weights_hash"]


@pytest.fixture(scope="module")
def tiny(base):
    spec = tb.TRLSpec("trl-test", replace(MAIN, steps=2, group_size=4), prompts_per_step=4, eval_every=2)
    return tb.run_grpo(spec, seed=0)


def test_tiny_run_logs_what_the_audit_computes(tiny):
    assert [m["step"] for m in tiny.metrics] == [1, 2] and len(tiny.step_seconds) == 2
    assert [s["tokens"].shape for s in tiny.rollouts] == [(16, 4), (16, 4)]
    worst = tb.cross_check(tiny.metrics, tb.rollout_audit(tiny.rollouts))
    assert {"reward_mean", "zero_variance_frac", "accepted_rate"} <= set(worst)
    assert max(worst.values()) < 1e-6


def test_tiny_run_rollouts_feed_the_books_audit(tiny):
    from rlbook import audit

    flow = audit.run_composition(tiny.rollouts)
    assert [row["step"] for row in flow] == [1, 2]
    assert [row["reward_mean"] for row in flow] == pytest.approx([m["reward_mean"] for m in tiny.metrics])


def test_tiny_run_rewards_are_rlbooks_verdicts(tiny):
    from rlbook import rewards as rw

    for entry in tiny.captured:
        rewards, statuses = rw.score(rw.ExactVerifier(), entry["prompts"], entry["completions"])
        assert rewards.tolist() == entry["rewards"] and statuses == entry["statuses"]
        assert all(p in {t.prompt for t in split("train")} for p in entry["prompts"])
    assert tb.decoding_gap(tiny.captured)["trl_text_incomplete"] == 1.0


def test_tiny_run_starts_from_the_book_base_and_is_evaluated_like_the_book(tiny, base):
    assert tiny.steps == [0, 2]
    assert tiny.checkpoints[0]["weights_hash"] == base.log["checkpoints"][-1]["weights_hash"]
    # The base run evaluates its last checkpoint with the sampling seed of an RL run's step 0.
    assert tiny.eval_at(0)["heldout_expected_reward"] == base.eval_at(1)["heldout_expected_reward"]
    assert tiny.checkpoints[1]["weights_hash"] != tiny.checkpoints[0]["weights_hash"]
    assert weights_hash(tiny.policy()) == tiny.checkpoints[1]["weights_hash"] and tiny.policy().version == "trl-test@2"
    assert weights_hash(tiny.policy(0)) == tiny.checkpoints[0]["weights_hash"]
    assert tiny.metric("reward_mean") == [m["reward_mean"] for m in tiny.metrics]
    rows = tb.reward_vs_heldout(tiny)
    assert rows[0]["train_reward_logged"] == tiny.metrics[0]["reward_mean"] and rows[1]["train_reward_logged"] is None


def test_tiny_run_record_validates(tiny, tmp_path):
    rec = tb.trl_record(tiny)
    assert record.validate(rec) is rec
    assert rec["rollouts_before_filtering"] == 32 and sum(rec["outcome_labels"].values()) == 32
    assert rec["update"]["loss"] == "trl loss_type=dapo" and rec["versions"]["trl"] == tb.trl_versions()["trl"]
    assert [e["step"] for e in rec["evaluations"]] == [0, 0, 2, 2]
    assert record.load(record.save(rec, tmp_path / "record.json"))["trainer"]["config"]["num_generations"] == 4
    assert np.isclose(rec["cost"]["generated_tokens"], sum(int(s["lengths"].sum()) for s in tiny.rollouts))


def test_script_writes_a_valid_record_and_metrics(trl, tmp_path):
    """``python -m rlbook.trl``, the script that ``accelerate launch`` starts on every GPU, run once on CPU."""
    assert tb.main(["--steps", "1", "--prompts", "2", "--eval-every", "0", "--out", str(tmp_path)]) == 0
    rec = record.load(tmp_path / "record.json")
    assert rec["sampling"]["prompts_per_step"] == 2 and rec["cost"]["rollouts"] == 32 and rec["evaluations"] == []
    assert [m["step"] for m in json.loads((tmp_path / "metrics.json").read_text())] == [1]


def test_two_cpu_processes_each_train_on_half_of_every_batch_and_rank_0_writes_one_record(trl, tmp_path):
    """``torchrun --nproc_per_node 2 -m rlbook.trl`` over gloo: the appendix's path to many machines, on CPUs."""
    result = tb.run_processes(tmp_path / "trl-run", processes=2, steps=3, prompts=4)
    assert result["code"] == 0, "\n".join(result["lines"] + result["warnings"][-20:])
    ranks = result["processes"]
    assert [p["rank"] for p in ranks] == [0, 1]
    assert all(p["optimizer_steps"] == 3 and p["rollouts_per_step"] == [32, 32, 32] for p in ranks)  # 4 x 16 / 2
    start = runs.load("base", 0).log["checkpoints"][-1]["weights_hash"]
    assert ranks[0]["weights_hash"] == ranks[1]["weights_hash"] != start  # both trained, in step
    for step in range(3):  # the halves are disjoint and make the step's batch: 4 prompts, 16 rows each, once
        rows = [(prompt, n) for p in ranks for prompt, n in p["prompts_per_step"][step]]
        assert [n for _, n in rows] == [16] * 4 and len({prompt for prompt, _ in rows}) == 4
    rec = record.validate(result["record"])
    assert sum(rec["outcome_labels"].values()) == rec["cost"]["rollouts"] == rec["rollouts_used"] == 3 * 4 * 16
    assert rec["sampling"]["prompts_per_step"] == 4 and rec["update"]["steps"] == 3
    assert [p["rollouts"] for p in rec["trainer"]["processes"]] == [96, 96]
    assert [m["step"] for m in result["metrics"]] == [1, 2, 3]
    assert sum(line.startswith("wrote ") for line in result["lines"]) == 1  # rank 0 alone writes
    assert sorted(line.split(":")[0] for line in result["lines"] if line.startswith("rank")) == [
        "rank 0 of 2",
        "rank 1 of 2",
    ]
    assert sorted(path.name for path in (tmp_path / "trl-run").iterdir()) == sorted(tb.launch.OUTPUTS)


@pytest.mark.parametrize("seed", [0, pytest.param(1, marks=pytest.mark.slow), pytest.param(2, marks=pytest.mark.slow)])
def test_appendix_claims_hold(trl, seed):
    """The appendix's asserted claims, for its run (tb.DEMO) on each seed."""
    run, base = tb.load_run(tb.DEMO, seed), runs.load("base", seed)
    assert run.checkpoints[0]["weights_hash"] == base.log["checkpoints"][-1]["weights_hash"]
    assert run.eval_at(0)["heldout_expected_reward"] == runs.load("main", seed).eval_at(0)["heldout_expected_reward"]
    worst = tb.cross_check(run.metrics, tb.rollout_audit(run.rollouts))
    assert {"reward_mean", "zero_variance_frac"} <= set(worst) and max(worst.values()) < 1e-6
    gap = tb.decoding_gap(run.captured)
    assert gap["from_trl_text"] == 0 and gap["trl_text_incomplete"] == 1.0
