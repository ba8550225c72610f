"""The named runs and their cache (rlbook.runs), using the shared cached base and main runs of seed 0."""
from __future__ import annotations

import re
import shutil
from dataclasses import replace

import pytest

from rlbook import record as rec
from rlbook import runs
from rlbook.core import source
from rlbook.core.policy import weights_hash
from rlbook.core.rl import RLConfig
from rlbook.core.train import PretrainConfig, SFTConfig
from rlbook.runs import cache


@pytest.fixture(scope="module")
def base():
    return runs.load("base", 0)


@pytest.fixture(scope="module")
def main(base):
    return runs.load("main", 0)


# --- names, keys and paths (no training) ------------------------------------------------------------------

def test_spec_of_an_unknown_name_lists_the_known_ones():
    with pytest.raises(ValueError, match="unknown run 'mian'") as err:
        runs.spec("mian")
    message = str(err.value)
    for name in ("base", "main", "exploit", "process-base", "process-shaped"):
        assert name in message


def test_named_specs():
    assert runs.spec("main").parent == "base" and runs.spec("main").rl == RLConfig()
    assert runs.spec("base").rl is None and runs.spec("base").pretrain is not None
    assert runs.spec("process-outcome").parent == "process-base"
    for name, s in runs.RUNS.items():
        assert s.name == name and s.description
        assert s.parent is not None or s.rl is None  # every RL run has a parent
        if s.parent:
            assert runs.RUNS[s.parent].rl is None  # every run continues a base run, never an RL run
    assert runs.spec("process-base").parent == "base" and runs.spec("process-base").rl is None


def test_cache_key_is_stable_and_changes_with_seed_threads_and_name():
    key = runs.cache_key("main", 0, 2)
    assert re.fullmatch(r"[0-9a-f]{16}", key)
    assert runs.cache_key("main", 0, 2) == key
    others = {runs.cache_key("main", 1, 2), runs.cache_key("main", 0, 1), runs.cache_key("pg", 0, 2),
              runs.cache_key("base", 0, 2)}
    assert key not in others and len(others) == 4


def test_cache_key_changes_with_the_config_and_the_parents_config(monkeypatch):
    main_key, base_key = runs.cache_key("main", 0, 2), runs.cache_key("base", 0, 2)
    monkeypatch.setitem(runs.RUNS, "main", replace(runs.RUNS["main"], rl=replace(runs.MAIN, lr=1e-3)))
    assert runs.cache_key("main", 0, 2) != main_key
    assert runs.cache_key("base", 0, 2) == base_key
    monkeypatch.undo()
    assert runs.cache_key("main", 0, 2) == main_key
    base_spec = runs.RUNS["base"]
    monkeypatch.setitem(runs.RUNS, "base", replace(base_spec, sft=replace(base_spec.sft, steps=401)))
    assert runs.cache_key("main", 0, 2) != main_key  # a child's key covers its parent's


def test_cache_key_changes_with_the_code(monkeypatch):
    key = runs.cache_key("main", 0, 2)
    monkeypatch.setattr(cache, "code_hash", lambda: "0" * 16)
    assert runs.cache_key("main", 0, 2) != key


TRAINING = {"rlbook.core.rl", "rlbook.core.train", "rlbook.core.policy", "rlbook.core.sampling", "rlbook.core.rewards",
            "rlbook.core.advantages", "rlbook.core.losses", "rlbook.core.adamw", "rlbook.core.world",
            "rlbook.core.evaluate", "rlbook.runs.training", "rlbook.runs.records", "rlbook.record.schema"}
DISPLAY = {"rlbook.core.stats", "rlbook.record.display", "rlbook.analysis.reward_spec", "rlbook.analysis.workshop",
           "rlbook.analysis.plots", "rlbook.cli", "rlbook.publish.build", "rlbook.runs.prefetch"}


def test_the_key_hashes_the_training_code_and_no_display_code():
    closure = set(source.import_closure(cache.TRAINING_ENTRY))
    assert TRAINING <= closure
    assert not DISPLAY & closure
    assert not any(m.startswith(("rlbook.analysis", "rlbook.publish", "rlbook.trl", "rlbook.exercises")) for m in closure)
    assert re.fullmatch(r"[0-9a-f]{16}", runs.code_hash())


def _edited_copy(tmp_path, module: str, addition: str):
    """A copy of the package with ``addition`` appended to ``module``'s source."""
    root = tmp_path / "rlbook"
    shutil.copytree(source.ROOT, root, ignore=shutil.ignore_patterns("__pycache__"))
    path = source.module_path(module, root)
    path.write_text(path.read_text() + addition)
    return root


@pytest.mark.parametrize("module", ["rlbook.core.losses", "rlbook.core.rl", "rlbook.runs.records",
                                    "rlbook.record.schema"])
def test_editing_training_code_changes_the_key(tmp_path, module):
    edited = _edited_copy(tmp_path, module, "\n_EDITED = 1\n")
    assert source.closure_hash(cache.TRAINING_ENTRY, edited) != source.closure_hash(cache.TRAINING_ENTRY)


@pytest.mark.parametrize("module", sorted(DISPLAY))
def test_editing_display_code_changes_nothing(tmp_path, module):
    edited = _edited_copy(tmp_path, module, "\n_EDITED = 1\n")
    assert source.closure_hash(cache.TRAINING_ENTRY, edited) == source.closure_hash(cache.TRAINING_ENTRY)


def test_comments_and_docstrings_do_not_change_the_key(tmp_path):
    edited = _edited_copy(tmp_path, "rlbook.core.losses", '\n# a comment\ndef _f():\n    """A docstring."""\n')
    plain = _edited_copy(tmp_path / "b", "rlbook.core.losses", "\ndef _f():\n    pass\n")
    assert source.closure_hash(cache.TRAINING_ENTRY, edited) == source.closure_hash(cache.TRAINING_ENTRY, plain)


def test_cache_root_and_entry_path(monkeypatch, tmp_path):
    monkeypatch.setenv("RLBOOK_CACHE", str(tmp_path))
    assert runs.cache_root() == tmp_path
    path = runs.entry_path("main", 1, 2)
    assert path.parent == tmp_path and path.name == f"main-seed1-t2-{runs.cache_key('main', 1, 2)}"
    monkeypatch.delenv("RLBOOK_CACHE")
    assert runs.cache_root().name == ".rlbook-cache"


# --- the shared cached runs of seed 0 ---------------------------------------------------------------------

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


def test_a_second_load_is_served_from_the_cache(main):
    again = runs.load("main", 0)
    assert again.cached is True
    assert again.seconds < 10
    assert again.path == main.path == runs.entry_path("main", 0, runs.DEFAULT_THREADS)
    assert again.record["run_id"] == main.record["run_id"]
    assert [c["weights_hash"] for c in again.log["checkpoints"]] == [c["weights_hash"] for c in main.log["checkpoints"]]


# --- one pretraining for every seed -------------------------------------------------------------------------

TINY_BASE = runs.RunSpec("tiny-base", "a tiny base run", pretrain=PretrainConfig(steps=3, batch=4, warmup=1),
                         sft=SFTConfig(steps=2, replay_batch=2))


def test_pretrained_key_leaves_out_the_seed_and_follows_the_pretraining(monkeypatch):
    key = runs.pretrained_key("base", 1)
    assert re.fullmatch(r"[0-9a-f]{16}", key) and runs.pretrained_key("base", 2) != key
    assert runs.pretrained_key("process-base", 1) not in (key, runs.pretrained_key("process-base", 2))
    base_spec = runs.RUNS["base"]
    monkeypatch.setitem(runs.RUNS, "base", replace(base_spec, sft=replace(base_spec.sft, steps=1)))
    assert runs.pretrained_key("base", 1) == key  # SFT is not part of pretraining...
    process_key = runs.pretrained_key("process-base", 1)
    monkeypatch.setitem(runs.RUNS, "base", replace(base_spec, pretrain=replace(base_spec.pretrain, steps=1)))
    assert runs.pretrained_key("base", 1) != key  # ...pretraining is,
    assert runs.pretrained_key("process-base", 1) != process_key  # and so is the pretraining a run continues
    with pytest.raises(ValueError, match="not a base run"):
        runs.pretrained_key("main", 1)


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
def test_base_answers_about_half_and_main_lifts_it_by_at_least_0_15(seed):
    """The recipe the book relies on (issue 2): base is neither hopeless nor solved, and RL helps held-out sums."""
    main_run = runs.load("main", seed)
    before, after = main_run.eval_at(0), main_run.eval_at()
    assert 0.35 <= before["heldout_expected_reward"] <= 0.65
    assert after["heldout_expected_reward"] - before["heldout_expected_reward"] >= 0.15
    assert after["heldout_greedy_accuracy"] > before["heldout_greedy_accuracy"]
