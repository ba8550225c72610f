"""Tests for rlbook.trl: the book's choices in TRL's terms, the audit readers, and a tiny real TRL run.

The translation, the reward function and the audit readers need no TRL and
always run. The tests that build a tokenizer, a GPT-2 model or a
GRPOTrainer skip cleanly when the ``trl`` extra is not installed.
"""

from __future__ import annotations

import dataclasses
from dataclasses import replace
from pathlib import Path

import pytest
import torch
import yaml

from rlbook import advantages, losses
from rlbook import trl_bridge as tb
from rlbook.core.rl import RLConfig
from rlbook.core.world import EOT_ID, encode
from rlbook.runs.catalogue import RUNS

MAIN = RLConfig()


P34, P98 = "U:3+4?|A:", "U:9+8?|A:"


def test_main_translates_to_dapo_centred_clip_02_on_960_completions():
    kw = tb.grpo_kwargs(MAIN)
    assert kw["per_device_train_batch_size"] == 60 * 16
    assert kw["num_generations"] == 16 and kw["max_completion_length"] == 4
    assert kw["loss_type"] == "dapo" and kw["scale_rewards"] == "none"
    assert (kw["epsilon"], kw["epsilon_high"], kw["beta"]) == (0.2, 0.2, 0.0)
    assert kw["learning_rate"] == 3e-4 and kw["max_grad_norm"] == 0.0
    assert kw["lr_scheduler_type"] == "constant_with_warmup" and kw["warmup_steps"] == 10
    assert kw["max_steps"] == 100 and kw["num_iterations"] == 1 and kw["reward_weights"] == [1.0]
    assert kw["use_bias_correction_kl"] is False  # TRL's default would change the KL penalty's gradient


def test_each_choice_translates_to_its_trl_value():
    assert tb.grpo_kwargs(replace(MAIN, aggregation="seq_mean"))["loss_type"] == "grpo"
    assert tb.grpo_kwargs(replace(MAIN, aggregation="constant"))["loss_type"] == "dr_grpo"
    assert tb.grpo_kwargs(replace(MAIN, advantage="group_std"))["scale_rewards"] == "group"
    assert tb.grpo_kwargs(replace(MAIN, advantage="batch_std"))["scale_rewards"] == "batch"
    cispo = tb.grpo_kwargs(replace(MAIN, loss="cispo", updates_per_batch=4, steps=60))
    assert (cispo["loss_type"], cispo["epsilon_high"], cispo["num_iterations"], cispo["max_steps"]) == (
        "cispo",
        4.0,
        4,
        240,
    )
    assert cispo["warmup_steps"] == 40  # the warm-up counts optimiser steps in TRL, RL steps in rlbook
    assert tb.grpo_kwargs(replace(MAIN, warmup=0))["lr_scheduler_type"] == "constant"
    kl = tb.grpo_kwargs(replace(MAIN, kl_beta=0.1, reward_scale=10.0, eps_high=0.28))
    assert (kl["beta"], kl["reward_weights"], kl["epsilon_high"]) == (0.1, [10.0], 0.28)


def test_batch_splits_over_processes_or_says_why_not():
    assert tb.grpo_kwargs(MAIN, processes=8)["per_device_train_batch_size"] == 120
    assert tb.grpo_kwargs(MAIN, prompts_per_step=4)["per_device_train_batch_size"] == 64
    with pytest.raises(ValueError, match="7 processes"):
        tb.grpo_kwargs(MAIN, processes=7)


@pytest.mark.parametrize(
    "cfg, words",
    [
        (replace(MAIN, stale=4), "stale"),
        (replace(MAIN, selection="accepted"), "selection"),
        (replace(MAIN, loss="pg", updates_per_batch=4), "updates_per_batch is 1"),
        (replace(MAIN, loss="cispo", aggregation="seq_mean"), "aggregates over tokens"),
        (replace(MAIN, verifier="judge"), "not a learned judge"),
        (replace(MAIN, advantage="rloo", group_size=1), "groups of at least 2"),
        (replace(MAIN, world="worked", budget=24), "rotary positions"),
    ],
)
def test_choices_without_a_trl_equivalent_are_refused(cfg, words):
    with pytest.raises(ValueError, match=words):
        tb.grpo_kwargs(cfg)


def test_choice_tables_cover_every_rlbook_name():
    assert set(tb.ADVANTAGE_TO_SCALE_REWARDS) == set(advantages.ADVANTAGE_METHODS)
    assert set(tb.AGGREGATION_TO_LOSS_TYPE) == set(losses.AGGREGATIONS)
    assert set(tb.LOSS_NOTES) == set(losses.LOSSES)
    named = {row[1].strip("`") for row in tb.choice_rows() if row[2] != tb.NO_EQUIVALENT}
    assert named == set(advantages.ADVANTAGE_METHODS) | set(losses.AGGREGATIONS) | set(losses.LOSSES) | set(
        losses.KL_ESTIMATORS
    ) | {"overlong='filter'"}
    bib = (Path(__file__).resolve().parents[3] / "references.bib").read_text()
    assert all("{" + row[4] + "," in bib for row in tb.choice_rows() if row[4])


def test_dapos_and_gspos_choices_become_trls_options():
    base = RUNS["main"].rl
    gspo = tb.grpo_kwargs(RUNS["gspo"].rl)
    assert gspo["importance_sampling_level"] == "sequence" and gspo["loss_type"] == "grpo"
    assert (gspo["epsilon"], gspo["epsilon_high"]) == (RUNS["gspo"].rl.eps_low, RUNS["gspo"].rl.eps_high)
    assert tb.grpo_kwargs(RUNS["clip-higher"].rl)["epsilon_high"] == 0.28
    assert tb.grpo_kwargs(replace(base, overlong="filter"))["mask_truncated_completions"] is True
    assert tb.grpo_kwargs(base)["mask_truncated_completions"] is False
    assert tb.grpo_kwargs(base)["importance_sampling_level"] == "token"
    for refused in (replace(base, refill_rounds=2), replace(base, overlong="shape")):
        with pytest.raises(ValueError):
            tb.grpo_kwargs(refused)
    trl = pytest.importorskip("trl")
    fields = {f.name for f in dataclasses.fields(trl.GRPOConfig)}
    assert {"importance_sampling_level", "mask_truncated_completions", "epsilon_high", "loss_type"} <= fields


def test_every_run_metric_name_has_a_trl_key():
    assert set(tb.METRIC_NAMES) >= {"reward_mean", "zero_variance_frac", "clip_fraction", "entropy", "kl"}
    assert tb.METRIC_NAMES["zero_variance_frac"] == "frac_reward_zero_std"
    assert tb.METRIC_NAMES["clip_fraction"] == "clip_ratio/region_mean"
    assert set(tb.METRIC_NOTES) <= set(tb.METRIC_NAMES)
    assert {"reward_mean", "zero_variance_frac", "kl", "clip_fraction"} <= set(tb.METRIC_NOTES)


def test_the_kl_rows_and_the_record_name_each_estimator():
    plain, ratio = [r for r in tb.choice_rows() if r[0] == "KL estimator"]
    assert plain[1] == "`k3`" and "use_bias_correction_kl=False" in plain[2] and "another estimator" in plain[3]
    assert ratio[1] == "`k3-ratio`" and "use_bias_correction_kl=True" in ratio[2]
    from rlbook.trl.audit import kl_estimator

    assert kl_estimator(tb.grpo_kwargs(replace(MAIN, kl_beta=0.1))).startswith("k3 (use_bias_correction_kl=False)")
    kwargs = tb.grpo_kwargs(replace(MAIN, kl_beta=0.1, kl_estimator="k3-ratio"))
    assert kwargs["use_bias_correction_kl"] and kl_estimator(kwargs).startswith("k3 x importance ratio")
    assert kl_estimator({"beta": 0.1}).startswith("k3 x importance ratio")  # a run from before the setting


def test_rloo_is_centring_with_the_reward_weight_times_g_over_g_minus_1():
    kwargs = tb.grpo_kwargs(replace(MAIN, advantage="rloo", reward_scale=2.0))
    assert kwargs["scale_rewards"] == "none" and kwargs["reward_weights"] == [pytest.approx(2.0 * 16 / 15)]


def test_a_temperature_other_than_1_is_refused():
    with pytest.raises(ValueError, match="same run only at temperature 1"):
        tb.grpo_kwargs(replace(MAIN, temperature=0.7))


def test_reward_decodes_ids_so_the_end_mark_counts():
    reward = tb.VerifierReward()
    logged = {}
    ids = [encode("7#"), encode("8#"), encode("7"), encode("07#")]
    out = reward([P34] * 4, ["7", "8", "7", "07"], ids, log_metric=lambda k, v: logged.__setitem__(k, v))
    assert out == [1.0, 0.0, 0.0, 0.0]
    entry = reward.rollouts[0]
    assert entry["statuses"] == ["accepted", "incorrect", "incomplete", "malformed"]
    assert entry["completions"] == ["7#", "8#", "7", "07#"] and entry["step"] == 1
    assert logged == {
        "verifier/accepted": 0.25,
        "verifier/incorrect": 0.25,
        "verifier/malformed": 0.25,
        "verifier/incomplete": 0.25,
        "verifier/unverifiable": 0.0,
    }
    assert reward.__name__ == "exact"


def test_scoring_trls_text_would_pay_nothing():
    reward = tb.VerifierReward()
    reward([P34, P34], ["7", "8"], [encode("7#"), encode("8#")])
    gap = tb.decoding_gap(reward.rollouts)
    assert gap == {"from_ids": 0.5, "from_trl_text": 0.0, "trl_text_incomplete": 1.0, "status_changed": 1.0}


def _captured() -> list[dict]:
    """Two groups of two: 3+4 answered right twice (all right), 9+8 once right, once wrong (mixed)."""
    texts = ["7#", "7#", "17#", "16#"]
    return [
        {
            "step": 1,
            "prompts": [P34, P34, P98, P98],
            "completion_ids": [encode(t) for t in texts],
            "completions": texts,
            "trl_completions": [t[:-1] for t in texts],
            "rewards": [1.0, 1.0, 1.0, 0.0],
            "statuses": ["accepted", "accepted", "accepted", "incorrect"],
        }
    ]


def test_stored_rollouts_have_the_shape_of_run_rollouts():
    (s,) = tb.stored_rollouts(_captured(), group_size=2, budget=4)
    assert s["prompts"] == [P34, P98] and s["tokens"].dtype == torch.uint8 and s["tokens"].shape == (4, 4)
    assert s["tokens"][0].tolist() == encode("7#") + [EOT_ID, EOT_ID]
    assert s["lengths"].tolist() == [2, 2, 3, 3] and s["statuses"].tolist() == [0, 0, 0, 1]
    assert s["used"].all() and torch.isnan(s["logprobs"]).all() and s["policy_version"] == "trl@0"


def test_rows_that_are_not_groups_are_refused():
    bad = _captured()
    bad[0]["prompts"] = [P34, P98, P34, P98]
    with pytest.raises(ValueError, match="contiguous groups"):
        tb.stored_rollouts(bad, group_size=2, budget=4)


def test_rollout_audit_counts_zero_variance_groups_and_statuses():
    (row,) = tb.rollout_audit(tb.stored_rollouts(_captured(), 2, 4))
    assert row["reward_mean"] == 0.75 and row["completion_len"] == 2.5
    assert (row["zero_variance_frac"], row["zero_variance_all_right"], row["zero_variance_all_wrong"]) == (
        0.5,
        0.5,
        0.0,
    )
    assert (row["accepted_rate"], row["incorrect_rate"], row["incomplete_rate"]) == (0.75, 0.25, 0.0)


def _log() -> list[dict]:
    entry = {
        "loss": 0.01,
        "grad_norm": 2.0,
        "learning_rate": 3e-4,
        "reward": 0.75,
        "reward_std": 0.5,
        "frac_reward_zero_std": 0.5,
        "completions/mean_length": 2.5,
        "completions/clipped_ratio": 0.0,
        "entropy": 0.3,
        "clip_ratio/region_mean": 0.0,
        "clip_ratio/low_mean": 0.0,
        "clip_ratio/high_mean": 0.0,
        "verifier/accepted": 0.75,
        "verifier/incorrect": 0.25,
        "verifier/malformed": 0.0,
        "verifier/incomplete": 0.0,
        "verifier/unverifiable": 0.0,
        "step_time": 0.2,
        "epoch": 1.0,
        "step": 1,
    }
    return [entry, {"train_runtime": 1.0, "step": 1}]


def test_metrics_from_log_renames_trl_keys_and_skips_the_summary():
    (row,) = tb.metrics_from_log(_log())
    assert row["step"] == 1 and row["reward_mean"] == 0.75 and row["zero_variance_frac"] == 0.5
    assert row["accepted_rate"] == 0.75 and row["grad_norm"] == 2.0 and "kl" not in row
    cispo = dict(_log()[0], cispo_clip_ratio=0.1)
    (row,) = tb.metrics_from_log([cispo], "cispo")
    assert row["clip_fraction"] == 0.1 and "clip_low_fraction" not in row


def test_cross_check_reports_the_largest_disagreement():
    audit = tb.rollout_audit(tb.stored_rollouts(_captured(), 2, 4))
    same = tb.cross_check(tb.metrics_from_log(_log()), audit)
    assert max(same.values()) == 0.0 and "incomplete_rate vs completions/clipped_ratio" in same
    off = _log()
    off[0]["frac_reward_zero_std"] = 0.25
    assert tb.cross_check(tb.metrics_from_log(off), audit)["zero_variance_frac"] == 0.25


def test_merge_steps_rebuilds_a_step_from_process_slices():
    a, b = _captured()[0], _captured()[0]
    b = {**b, "prompts": [P98, P98], "rewards": [0.0, 0.0]}
    merged = tb.merge_steps([a, {**a, "step": 2}, b])
    assert [m["step"] for m in merged] == [1, 2]
    assert merged[0]["prompts"] == [P34, P34, P98, P98, P98, P98] and merged[0]["rewards"][-2:] == [0.0, 0.0]


def test_a_run_that_asked_for_more_processes_than_started_refuses_in_one_line(capsys):
    go, line = tb.process_check(2, {})
    assert not go and "--processes 2 asked for, 1 started" in line and "\n" not in line
    assert tb.main(["--processes", "2", "--steps", "1", "--out", "unused"]) == 2  # refused before any training
    printed = capsys.readouterr().out.splitlines()
    assert len(printed) == 1 and "nothing was trained" in printed[0]
    assert tb.process_check(2, {"WORLD_SIZE": "2"}) == (True, None)


def test_a_lone_process_under_accelerate_launch_says_so():
    go, line = tb.process_check(None, {"ACCELERATE_USE_CPU": "True"})
    assert go and "accelerate launch started 1 process" in line
    assert tb.process_check(None, {}) == (True, None)  # plain python -m rlbook.trl: one process, nothing to say


def test_the_trl_modules_import_each_other_without_a_cycle_even_for_types():
    """Issue 42: the run's types live in rlbook.trl.spec, so audit and trainer no longer need each other."""
    import ast

    folder = Path(tb.__file__).parent
    edges = {}
    for path in folder.glob("*.py"):
        tree = ast.parse(path.read_text())
        edges[path.stem] = {
            node.module
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module
        }

    def reaches(start, goal, seen=()):
        return any(n == goal or (n not in seen and reaches(n, goal, (*seen, n))) for n in edges.get(start, ()))

    assert not [name for name in edges if reaches(name, name)]
    assert "trainer" not in edges["audit"] and "spec" in edges["audit"]


def test_accelerate_config_is_multi_gpu_float32():
    config = yaml.safe_load(tb.accelerate_yaml(4))
    assert config["distributed_type"] == "MULTI_GPU" and config["num_processes"] == 4
    assert config["mixed_precision"] == "no" and config["use_cpu"] is False
    assert "-m rlbook.trl --steps 100 --processes 4" in tb.launch_command(4, 100)


@pytest.fixture(scope="module")
def trl():
    return pytest.importorskip("trl")


def test_tokenizer_keeps_rlbook_ids_and_drops_the_end_mark_when_skipping_specials(trl):
    tok = tb.char_tokenizer()
    assert tok("U:3+4?|A:")["input_ids"] == encode("U:3+4?|A:")
    assert tok.eos_token_id == EOT_ID == tok.pad_token_id and tok.padding_side == "left"
    assert tok.decode(encode(" 7 #\n")) == " 7 #\n"
    assert tok.decode(encode("7#"), skip_special_tokens=True) == "7"


@pytest.mark.parametrize("name, gap", [("main", "lr / 10"), ("ppo", "lr / 16")])
def test_warmup_rates_are_each_librarys_own_and_the_note_states_their_gap(trl, name, gap):
    """TRL's schedule as transformers computes it and rlbook's as its loop sets it, optimiser step by step."""
    from transformers import get_scheduler

    from rlbook import runs
    from rlbook.core.rl import warmup_lr

    cfg = runs.spec(name).rl
    kw = tb.grpo_kwargs(cfg)
    span = kw["warmup_steps"]
    opt = torch.optim.AdamW([torch.nn.Parameter(torch.zeros(1))], lr=cfg.lr)
    schedule = get_scheduler(kw["lr_scheduler_type"], opt, num_warmup_steps=span)
    theirs = []
    for _ in range(span + 2):
        theirs.append(opt.param_groups[0]["lr"])
        opt.step()
        schedule.step()
    ours = [
        warmup_lr(cfg.lr, cfg.warmup, step) for step in range(1, cfg.steps + 1) for _ in range(cfg.updates_per_batch)
    ]
    book, trl = tb.warmup_rates(cfg, span + 2)
    assert trl == pytest.approx(theirs) and book == pytest.approx(ours[: span + 2])
    assert theirs[0] == 0.0 and book[-1] == trl[-1] == cfg.lr  # both end the warm-up at the full rate
    mean_gap = (sum(book[:span]) - sum(trl[:span])) / span
    denominator = int(gap.split("/ ")[1])
    assert mean_gap == pytest.approx(cfg.lr / denominator)
    assert f"lower by {gap} on average" in tb.warmup_note(cfg)


def test_a_ppo_batch_of_four_updates_holds_rlbooks_first_rate_where_trl_climbs_from_zero():
    from rlbook import runs

    cfg = runs.spec("ppo").rl
    book, trl = tb.warmup_rates(cfg, 4)
    assert book == [pytest.approx(3e-5)] * 4 and trl == pytest.approx([0.0, 7.5e-6, 1.5e-5, 2.25e-5])


def test_option_rows_read_trl_defaults_one_argument_a_row(trl):
    rows = tb.option_rows(MAIN)
    by_argument = {row[2].strip("`").split("=")[0]: row for row in rows if row[2].startswith("`")}
    assert by_argument["learning_rate"][1] == "`lr=0.0003`" and by_argument["learning_rate"][3] == "`1e-06`"
    assert by_argument["max_grad_norm"][:2] == ["", ""] and by_argument["max_grad_norm"][3] == "`1.0`"
    assert by_argument["scale_rewards"][2:] == ["`scale_rewards='none'`", "`'group'`"]
    assert next(row for row in rows if row[1].startswith("`cispo_cap"))[2] == "not used by this loss"
    assert {name for _, names in tb.OPTION_FIELDS.values() for name in names} == set(by_argument)


def test_every_choice_the_bridge_refuses_says_no_equivalent():
    from rlbook.runs.catalogue import RUNS

    refused = [name for name, spec in RUNS.items() if spec.rl is not None and _refused(spec.rl)]
    assert refused, "some catalogue run has no TRL translation"
    rows = [row for row in tb.choice_rows() if row[2] == tb.NO_EQUIVALENT]
    assert len(rows) == len(tb.UNTRANSLATED)
    for name in refused:
        cfg = RUNS[name].rl
        reasons = [key for key in tb.UNTRANSLATED if _differs(cfg, key)]
        assert reasons, f"{name} is refused by grpo_kwargs but no 'no equivalent' row names why"


def _refused(cfg) -> bool:
    try:
        tb.grpo_kwargs(cfg)
    except ValueError:
        return True
    return False


def _differs(cfg, key: str) -> bool:
    """Whether ``cfg`` makes the choice of :data:`UNTRANSLATED` row ``key`` (one TRL has no option for)."""
    default = RLConfig()
    if key == "faults":
        return bool(cfg.faults)
    if key == "verifier":
        from rlbook.core.rewards import VERIFIERS

        return cfg.verifier not in VERIFIERS
    return getattr(cfg, key) != getattr(default, key)


def test_the_install_hint_names_the_repository_by_its_absolute_path(tmp_path):
    from rlbook.trl.model import install_hint

    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "constraints-trl.txt").write_text("")
    assert install_hint(tmp_path).endswith(f'%pip install -c "{tmp_path}/constraints-trl.txt" -e "{tmp_path}[trl]"')
    assert install_hint(tmp_path / "elsewhere").endswith(
        'in a checkout of the book: pip install -c constraints-trl.txt -e ".[trl]"'
    )


def test_a_table_cites_for_the_build_and_reads_author_year_elsewhere(monkeypatch, tmp_path):
    from rlbook.trl.tables import cite

    bib = tmp_path / "refs.bib"
    bib.write_text(
        "@article{a2025,\n  author = {Liu, Zichen and Chen, Changyu and Li, Wenjun},\n  year = {2025}\n}\n"
        "@book{b2018,\n  author = {Sutton, Richard S. and Barto, Andrew G.},\n  year = {2018}\n}\n"
    )
    monkeypatch.delenv("RLBOOK_BUILDING", raising=False)
    assert (cite("a2025", bib), cite("b2018", bib)) == ("(Liu et al. 2025)", "(Sutton and Barto 2018)")
    monkeypatch.setenv("RLBOOK_BUILDING", "1")
    assert cite("a2025", bib) == "[@a2025]"


def test_a_cited_table_cites_its_last_column_only_where_a_key_is_given(monkeypatch):
    monkeypatch.setenv("RLBOOK_BUILDING", "1")
    table = tb.cited_table(["choice", "from"], [["`centered`", "liu2025understanding"], ["`stale` > 0", ""]])
    assert table.splitlines()[2:] == ["| `centered` | [@liu2025understanding] |", "| `stale` > 0 |  |"]
