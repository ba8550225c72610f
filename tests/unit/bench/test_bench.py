"""The benchmark's helpers (rlbook.bench); the measurements themselves are printed, not asserted."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import ClassVar

import psutil
import pytest
import torch

from rlbook import bench
from rlbook.bench import book, kernels
from rlbook.core.policy import Policy, PolicyConfig, weights_hash


def test_spread_is_median_with_range_and_count():
    assert kernels.spread([3.0, 1.0, 2.0]) == {"median": 2.0, "min": 1.0, "max": 3.0, "n": 3}


def test_environment_is_put_back_after_the_block(monkeypatch):
    monkeypatch.setenv("RLBOOK_CACHE", "/somewhere")
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    with kernels.environment(RLBOOK_CACHE="/tmp/x", OMP_WAIT_POLICY="PASSIVE"):
        assert os.environ["RLBOOK_CACHE"] == "/tmp/x" and os.environ["OMP_WAIT_POLICY"] == "PASSIVE"
    assert os.environ["RLBOOK_CACHE"] == "/somewhere" and "OMP_WAIT_POLICY" not in os.environ


def test_markdown_lists_every_figure_with_its_unit():
    spread = {"median": 0.0607, "min": 0.06, "max": 0.0622, "n": 3}
    report = {
        "machine": {
            "cores": 2,
            "threads": 1,
            "jobs": 2,
            "book_runs": 43,
            "torch": "t",
            "python": "3.11",
            "processor": "x86_64",
        },
        "pipeline": {
            k: spread
            for k in (
                "pretrain_seconds",
                "sft_seconds",
                "rl_seconds",
                "rl_step_seconds",
                "rl_step_sampling_seconds",
                "rl_step_update_seconds",
            )
        },
        "sampling": {
            "sequences": 3200,
            "kv_cache": spread,
            "no_cache": spread,
            "cache_speedup": 3.0,
            "kv_cache_two_threads": 250000.0,
            "two_threads_over_one": 1.2,
        },
        "matmul_flops": spread,
        "fractions": {
            "parameters": 27328,
            "pretrain_flops": 2e10,
            "pretrain_threads": 2,
            "pretrain_fraction": spread,
            "rl_update_flops": 1e10,
            "rl_update_fraction": spread,
            "rl_update_every_rollout_fraction": spread,
        },
        "peak_memory_mb": 500.0,
        "all_runs": {
            "seconds": {"median": 100.0, "min": 98.0, "max": 104.0, "n": 3},
            "jobs": 2,
            "work_seconds": {"median": 150.0, "min": 149.0, "max": 151.0, "n": 3},
            "head_seconds": {"median": 10.0, "min": 9.5, "max": 10.5, "n": 3},
            "floor_seconds": {"median": 80.0, "min": 79.0, "max": 81.0, "n": 3},
            "worker_peak_memory_mb": 600.0,
        },
        "book_seconds_empty_cache": {"median": 300.0, "min": 290.0, "max": 310.0, "n": 3},
        "book_seconds_warm_cache": {"median": 19.0, "min": 18.5, "max": 20.1, "n": 3},
        "notebook_run_all_seconds": {"01-rl-loop": 5.84, "04-update-choices": 14.7},
        "book_peak_memory_mb_empty_cache": 1234.4,
        "book_peak_memory_mb_warm_cache": 777.0,
        "book_seconds_unchanged_cache": {"median": 14.0, "min": 13.5, "max": 15.0, "n": 3},
        "book_peak_memory_mb_unchanged_cache": 400.0,
        "pretrain_bound": {
            "shapes": [
                {
                    "windows": 128,
                    "width": 32,
                    "parts": 1,
                    "parameters": 27328,
                    "step_seconds": spread,
                    "fraction": spread,
                },
                {
                    "windows": 128,
                    "width": 32,
                    "parts": 2,
                    "parameters": 27328,
                    "step_seconds": spread,
                    "fraction": spread,
                },
                {
                    "windows": 512,
                    "width": 32,
                    "parts": 1,
                    "parameters": 27328,
                    "step_seconds": spread,
                    "fraction": spread,
                },
                {
                    "windows": 128,
                    "width": 64,
                    "parts": 1,
                    "parameters": 103808,
                    "step_seconds": spread,
                    "fraction": spread,
                },
            ],
            "matmul_time_share": 0.31,
        },
        "update_bound": {
            "batches": [
                {"prompts": 1, "tokens": 36, "seconds": spread},
                {"prompts": 60, "tokens": 1368, "seconds": spread},
            ],
            "per_token_seconds": {"median": 4.5e-6, "min": 4.4e-6, "max": 4.6e-6, "n": 3},
            "per_token_fraction": spread,
        },
    }
    text = bench.markdown(report)
    assert "| RL step | 60.7 ms (range 60-62.2, n=3) |" in text
    assert (
        "| pretraining (2 threads), share of as many cores' matmul FLOP/s (one thread's, measured just before, "
        "x 2) | 6.07% (range 6-6.22, n=3); 20.00 GFLOP/s, 27,328 parameters |"
    ) in text
    assert "| every run the book needs (43 runs), empty cache, 2 at a time | 100 s (range 98-104, n=3) |" in text
    assert (
        "| those runs' training, as each run timed it (no loading, writing or waiting) | 150 s (range 149-151, n=3) |"
    ) in text
    assert "| of which `base`'s pretraining, which every other run waits for | 10 s (range 9.5-10.5, n=3) |" in text
    assert "| so at best, 2 at a time: pretraining, then the rest shared evenly | 80 s (range 79-81, n=3) |" in text
    assert (
        "| whole book, empty run cache: every run trained, every page executed | 300 s (range 290-310, n=3) |" in text
    )
    assert "| sampling, same sequences, KV cache, 2 threads | 2.5e+05 tok/s |" in text
    assert "| 2 threads over 1, sampling (same run) | 1.20x |" in text
    assert "Machine: 2 cores, torch threads per run: 1, torch t, Python 3.11, x86_64." in text
    assert (
        "| whole book, warm run cache, every page executed (`rlbook build --fresh`) | 19 s (range 18.5-20.1, n=3) |"
    ) in text
    assert (
        "| whole book rebuilt with nothing changed: every page reused (`rlbook build`) | 14 s (range 13.5-15, n=3) |"
    ) in text
    assert "| notebook `01-rl-loop`: Run All in a fresh kernel, every run and fact cached | 5.8 s |" in text
    assert "| notebook `04-update-choices`: Run All in a fresh kernel, every run and fact cached | 14.7 s |" in text
    assert (
        "| whole book, empty run cache: every run trained, every page executed: peak memory of the build, its "
        "workers and its kernels together (PSS) | 1234 MB |"
    ) in text
    assert (
        "| whole book, warm run cache, every page executed (`rlbook build --fresh`): peak memory of the build, its "
        "workers and its kernels together (PSS) | 777 MB |"
    ) in text
    assert "| peak memory of a worker that trained those runs | 600 MB |" in text
    assert (
        "| pretraining step, 512 windows | 60.7 ms (range 60-62.2, n=3); 6.07% (range 6-6.22, n=3) of the "
        "matmul FLOP/s measured in the same rounds |"
    ) in text
    assert (
        "| pretraining step, 128 windows, width 64 (103,808 parameters) | 60.7 ms (range 60-62.2, n=3); 6.07% "
        "(range 6-6.22, n=3) of the matmul FLOP/s measured in the same rounds |"
    ) in text
    assert "| pretraining step, 128 windows |" in text
    assert (
        "| pretraining step, 128 windows in 2 parts on 2 threads | 60.7 ms (range 60-62.2, n=3); 6.07% (range "
        "6-6.22, n=3) of 2 cores' matmul FLOP/s measured in the same rounds |"
    ) in text
    assert (
        "| RL update alone (no reference read), 1 prompt x 16 answers, 36 tokens read | 60.7 ms (range 60-62.2, n=3) |"
    ) in text
    assert "| RL update alone (no reference read), 60 prompts x 16 answers, 1,368 tokens read |" in text
    assert (
        "| RL update, each token read beyond the smallest batch | 4.5 µs (range 4.4-4.6, n=3); 6.07% (range "
        "6-6.22, n=3) of the matmul FLOP/s measured in the same rounds |"
    ) in text
    assert "| pretraining step, operator time in matmul kernels (torch profiler) | 31% |" in text
    assert "| RL update, share as if it read every rollout | 6.07% (range 6-6.22, n=3) |" in text
    assert "GFLOP/s, counting the tokens it reads |" in text


def test_tree_memory_counts_the_processes_a_process_started():
    # A child that has written to 200 MB of its own: the tree of this process counts them too.
    holds = "import time; b = bytearray(200 * 2**20); b[::4096] = b'x' * len(b[::4096]); print('ready', flush=True); time.sleep(60)"
    child = subprocess.Popen([sys.executable, "-c", holds], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "ready"
        child_alone = book.tree_memory_mb(psutil.Process(child.pid))
        this_one_and_child = book.tree_memory_mb(psutil.Process())
        assert child_alone > 200
        assert this_one_and_child > child_alone
    finally:
        child.kill()
        child.wait()


def test_training_work_counts_shared_pretraining_once_and_only_base_s_as_the_head():
    def base_log(pretrain: float, now: bool, sft: float) -> dict:
        return {
            "timing": {"pretrain_seconds": pretrain, "pretrained_now": now, "sft_seconds": sft},
            "wall_seconds": 0.0,
        }

    logs = [
        ("base", base_log(9.0, True, 1.5)),
        ("base", base_log(9.0, False, 1.0)),  # seed 1 found it cached
        ("process-base", base_log(12.0, True, 3.0)),  # continues base's pretraining: not the head
        ("main", {"wall_seconds": 2.5}),
        ("ppo", {"wall_seconds": 2.0}),
    ]
    assert book.training_work(logs) == {"work_seconds": 9.0 + 1.5 + 1.0 + 12.0 + 3.0 + 2.5 + 2.0, "head_seconds": 9.0}


def test_the_pretraining_bound_times_each_shape_and_finds_the_matmuls():
    shapes = ((8, 32, 1), (8, 32, 2), (16, 32, 1), (8, 48, 1))
    bound = kernels.pretrain_step_bound(repeats=2, shapes=shapes, steps=2)
    assert [(e["windows"], e["width"], e["parts"]) for e in bound["shapes"]] == list(shapes)
    assert bound["shapes"][0]["parameters"] == Policy(PolicyConfig()).num_parameters()
    assert bound["shapes"][3]["parameters"] > bound["shapes"][0]["parameters"]
    for entry in bound["shapes"]:
        assert entry["step_seconds"]["n"] == entry["fraction"]["n"] == 2 and entry["step_seconds"]["min"] > 0
        assert 0 < entry["fraction"]["min"] <= entry["fraction"]["max"]
    assert 0 < bound["matmul_time_share"] < 1


def test_the_update_flop_counts_the_reference_only_for_pairs_not_met_before():
    class Fake:
        # Step 1: one prompt, answers "7#" twice and "8#" twice (two pairs, one read of 9 + 3 x 3 tokens).
        # Step 2: the same pairs again, which the reference has read; step 3: one pair new.
        rollouts: ClassVar[list[dict]] = [
            {"prompts": ["U:3+4?|A:"], "tokens": torch.tensor([kernels.encode(a) for a in answers])}
            for answers in (
                ["7###", "7###", "8###", "8###"],
                ["8###", "7###", "7###", "8###"],
                ["7###", "6###", "7###", "7###"],
            )
        ]

    read = 9 + 3 * 3
    # Per step: 6 x params x 18 for the update, plus 2 x params x 18, 0 and 18 for the reference: the median is step 1's.
    assert kernels.update_flop(Fake(), 10) == 6 * 10 * read + 2 * 10 * read
    Fake.rollouts = Fake.rollouts[1:2] * 3  # the same batch three times: read once by the reference
    assert kernels.update_flop(Fake(), 10) == 6 * 10 * read


def test_the_update_bound_times_a_small_and_a_large_batch_and_prices_a_token():
    policy = Policy(PolicyConfig())
    before = weights_hash(policy)
    bound = kernels.update_bound(policy, repeats=2, prompt_counts=(1, 4), steps=2)
    assert [b["prompts"] for b in bound["batches"]] == [1, 4]
    small, large = bound["batches"]
    assert 0 < small["tokens"] < large["tokens"]
    assert all(b["seconds"]["n"] == 2 and b["seconds"]["min"] > 0 for b in bound["batches"])
    assert bound["per_token_seconds"]["n"] == bound["per_token_fraction"]["n"] == 2
    assert weights_hash(policy) == before  # the updates train a copy


def test_flop_fractions_divide_each_repeat_by_its_own_matmul_rate():
    class Fake:
        # One stored batch: two prompts x 4 rollouts; the first prompt's four answers are all "7#",
        # the second's three distinct answers ("17#", "18#" twice, "1#"). One read of prompt 1, one of prompt 2.
        rollouts: ClassVar[list[dict]] = [
            {
                "prompts": ["U:3+4?|A:", "U:9+8?|A:"],
                "tokens": torch.tensor([kernels.encode(a) for a in ["7###"] * 4 + ["17##", "18##", "18##", "1###"]]),
            }
        ]

        def policy(self):
            return Policy(PolicyConfig())

    cfg = kernels.runs.spec("base").pretrain
    flop = 6 * 27_328 * cfg.steps * cfg.batch * cfg.block_size
    pipeline = {
        "base": Fake(),
        "main": Fake(),
        "pretrain_seconds": kernels.spread([10.0, 20.0]),
        "rl_step_update_seconds": kernels.spread([0.02, 0.02]),
        "paired": {"pretrain": [(10.0, flop / 10.0), (20.0, flop / 20.0)], "update": [(0.02, 1e12)] * 2},
    }
    fractions = kernels.training_flop_fractions(pipeline)
    # The second repeat took twice as long while the machine's matmuls were half as fast: the same share,
    # over as many cores as base's pretraining has threads.
    assert fractions["pretrain_threads"] == cfg.parts == 2
    assert fractions["pretrain_fraction"] == {"median": 0.5, "min": 0.5, "max": 0.5, "n": 2}
    assert fractions["pretrain_flops"] == flop / 15.0  # the rate itself uses the median time
    assert "base" not in pipeline and "paired" not in pipeline
    # The update's forward and backward pass (6) and the reference policy's forward pass (2), per token read:
    # two reads, each a prompt of 9 and room for 3 answers of 3 read tokens.
    assert fractions["rl_update_fraction"]["median"] == pytest.approx(8 * 27_328 * 2 * (9 + 3 * 3) / 0.02 / 1e12)
    prompts = kernels.split("train")
    every = len(prompts) * len(prompts[0].prompt) + len(prompts) * 16 * 3
    assert fractions["rl_update_every_rollout_fraction"]["median"] == pytest.approx(8 * 27_328 * every / 0.02 / 1e12)


def test_all_runs_spreads_each_repeat_and_its_floor(monkeypatch):
    passes = iter(
        [
            {"seconds": 60.0, "worker_peak_memory_mb": 400.0, "work_seconds": 100.0, "head_seconds": 8.0},
            {"seconds": 64.0, "worker_peak_memory_mb": 450.0, "work_seconds": 110.0, "head_seconds": 10.0},
            {"seconds": 62.0, "worker_peak_memory_mb": 420.0, "work_seconds": 104.0, "head_seconds": 9.0},
        ]
    )
    monkeypatch.setattr(book, "train_from_empty", lambda pairs, threads, jobs: next(passes))
    report = book.all_runs([("base", 0)], threads=1, jobs=2, repeats=3)
    assert report["seconds"] == {"median": 62.0, "min": 60.0, "max": 64.0, "n": 3}
    assert report["floor_seconds"] == {"median": 56.5, "min": 54.0, "max": 60.0, "n": 3}  # head + (work - head) / 2
    assert report["worker_peak_memory_mb"] == 450.0 and report["jobs"] == 2


def test_attention_paths_time_both_ways_with_and_without_a_gradient():
    from rlbook.bench import kernels

    paths = kernels.attention_paths(repeats=2, sequences=8, steps=5, steps_each=2)
    for way in ("written", "fused"):
        for kind in ("backward", "no_grad"):
            assert paths[f"{way}_{kind}"]["n"] == 2 and paths[f"{way}_{kind}"]["min"] > 0
    rows = kernels.attention_rows(paths)
    assert rows[0].startswith("| causal attention, 8 reads of 5 positions, with its backward pass: written out | ")
    assert len(rows) == 4 and all(" ms (range " in r and r.endswith(", n=2) |") for r in rows)


def test_run_all_times_every_notebook_in_a_fresh_kernel_by_name(tmp_path):
    import nbformat

    for name, source in (("01-one", "x = 1"), ("02-two", "import os\nprint(os.environ['RLBOOK_PROBE'])")):
        nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)]), tmp_path / f"{name}.ipynb")
    (tmp_path / "notes.txt").write_text("not a notebook")
    with kernels.environment(RLBOOK_PROBE="seen"):
        seconds = book.notebook_run_all(tmp_path)
    assert list(seconds) == ["01-one", "02-two"] and all(s > 0 for s in seconds.values())
