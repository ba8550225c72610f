"""``rlbook bench``: measure the speed the book promises its readers.

Every figure is the median of repeated measurements with its spread
(min-max), and every comparison (KV cache against none, one thread against
two) is a ratio of two measurements taken in the same invocation.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import tempfile
from pathlib import Path

import torch

from rlbook import runs
from rlbook.book.prefetch import book_runs
from rlbook.core.policy import PolicyConfig
from rlbook.runs import prefetch

from .book import all_runs, book_run, native_runs, notebook_run_all
from .browser import lines as browser_lines
from .browser import measure as measure_browser
from .kernels import (
    attention_paths,
    attention_rows,
    bound_row,
    environment,
    fmt,
    fresh_pipeline,
    matmul_flops,
    pretrain_step_bound,
    sampling_throughput,
    spread,
    training_flop_fractions,
    update_bound,
)
from .stacked import stacked_rows, stacked_seeds
from .worked import pipeline as worked_pipeline
from .worked import rows as worked_rows
from .worked import without_chapter

# How often the full report repeats its longest measurements by default: every run from an empty cache, and the whole
# book from an empty and from a warm cache (a minute or more each); `rlbook bench --repeats N` sets it.
WHOLE_REPEATS = 3

BOOK_BUILDS = {
    "empty": "whole book, empty run cache: every run trained, every page executed",
    "warm": "whole book, warm run cache, every page executed (`rlbook build --fresh`)",
    "unchanged": "whole book rebuilt with nothing changed: every page reused (`rlbook build`)",
}
"""The whole-book builds the full report times, by the key of their figures, with the words of its rows."""

STACKED_SEEDS = (0, 1, 2)
"""The seeds of ``base`` whose policies the stacked-seeds measurement trains as one model."""


def measure(quick: bool, threads: int = runs.DEFAULT_THREADS, whole_repeats: int = WHOLE_REPEATS) -> dict:
    """Every figure of the benchmark report, as a dict."""
    repeats = 2 if quick else 5
    torch.set_num_threads(threads)
    report: dict = {
        "machine": {
            "cores": os.cpu_count(),
            "threads": threads,
            "torch": torch.__version__,
            "python": platform.python_version(),
            "processor": platform.processor() or platform.machine(),
        }
    }
    report["matmul_flops"] = matmul_flops(repeats)
    pipeline = fresh_pipeline(1 if quick else 3, threads)
    report["fractions"] = training_flop_fractions(pipeline)
    report["pipeline"] = pipeline
    report["pretrain_bound"] = pretrain_step_bound(repeats)
    policy = runs.load("base", 0, threads).policy()
    report["sampling"] = sampling_throughput(policy, repeats)  # on the run's thread count, measured above
    torch.set_num_threads(2)  # then on two, back to back, for what one process gets from two cores
    report["sampling"]["kv_cache_two_threads"] = sampling_throughput(policy, repeats)["kv_cache"]["median"]
    torch.set_num_threads(threads)
    report["sampling"]["two_threads_over_one"] = (
        report["sampling"]["kv_cache_two_threads"] / report["sampling"]["kv_cache"]["median"]
    )
    report["update_bound"] = update_bound(policy, repeats)
    report["attention"] = attention_paths(repeats)
    report["stacked"] = stacked_seeds([runs.load("base", s, threads).policy().train() for s in STACKED_SEEDS], repeats)
    report["worked"] = worked_pipeline(1 if quick else 3, threads)
    report["peak_memory_mb"] = prefetch.peak_memory_mb()
    if not quick:
        report["machine"]["jobs"] = prefetch.usable_cores()
        report["machine"]["book_runs"] = len(book_runs())
        report["all_runs"] = all_runs(book_runs(), threads, report["machine"]["jobs"], whole_repeats)
        report["native_runs"] = native_runs(book_runs(), threads, report["machine"]["jobs"], whole_repeats)
        before = without_chapter(book_runs())
        report["machine"]["runs_before_chapter"] = len(before)
        report["runs_before_chapter"] = all_runs(before, threads, report["machine"]["jobs"], whole_repeats)
        root = Path(__file__).resolve().parents[2]
        with tempfile.TemporaryDirectory() as tmp:
            caches = [str(Path(tmp) / f"empty-{i}") for i in range(whole_repeats)]
            empty = [book_run(root, cache) for cache in caches]
            warm = [book_run(root, caches[-1]) for _ in range(whole_repeats)]
            unchanged = [book_run(root, caches[-1], fresh=False) for _ in range(whole_repeats)]
            for kind, builds in (("empty", empty), ("warm", warm), ("unchanged", unchanged)):
                report[f"book_seconds_{kind}_cache"] = spread([seconds for seconds, _ in builds])
                report[f"book_peak_memory_mb_{kind}_cache"] = max(peak for _, peak in builds)
            with environment(RLBOOK_CACHE=caches[-1], RLBOOK_PROGRESS="0"):
                report["notebook_run_all_seconds"] = notebook_run_all(root / "_build" / "notebooks")
    return report


def markdown(report: dict) -> str:
    """The report as the Markdown of BENCHMARKS.md."""
    m, p, s, f = report["machine"], report["pipeline"], report["sampling"], report["fractions"]
    lines = [
        "# Benchmarks",
        "",
        "Regenerate with `rlbook bench --write BENCHMARKS.md`. Medians of repeated runs, with range.",
        "",
        (
            f"Machine: {m['cores']} cores, torch threads per run: {m['threads']}, torch {m['torch']}, Python {m['python']}, "
            f"{m['processor']}."
        ),
        "",
        "| measurement | value |",
        "|---|---|",
        f"| pretraining (`base`) | {fmt(p['pretrain_seconds'], unit=' s')} |",
        f"| SFT (`base`) | {fmt(p['sft_seconds'], unit=' s')} |",
        f"| RL (`main`, incl. checkpoint evaluations) | {fmt(p['rl_seconds'], unit=' s')} |",
        f"| RL step | {fmt(p['rl_step_seconds'], 1000, ' ms')} |",
        f"| RL step: sampling and scoring | {fmt(p['rl_step_sampling_seconds'], 1000, ' ms')} |",
        f"| RL step: update | {fmt(p['rl_step_update_seconds'], 1000, ' ms')} |",
        f"| sampling, {s['sequences']:,} sequences, KV cache | {fmt(s['kv_cache'], unit=' tok/s')} |",
        f"| sampling, no cache | {fmt(s['no_cache'], unit=' tok/s')} |",
        f"| KV cache speed-up (same run) | {s['cache_speedup']:.2f}x |",
        f"| sampling, same sequences, KV cache, 2 threads | {s['kv_cache_two_threads']:.3g} tok/s |",
        f"| 2 threads over {m['threads']}, sampling (same run) | {s['two_threads_over_one']:.2f}x |",
        f"| float32 matmul (512^3) | {fmt(report['matmul_flops'], 1e-9, ' GFLOP/s')} |",
        (
            f"| pretraining ({f['pretrain_threads']} threads), share of as many cores' matmul FLOP/s "
            f"(one thread's, measured just before, x {f['pretrain_threads']}) | {fmt(f['pretrain_fraction'], 100, '%')}; "
            f"{f['pretrain_flops'] / 1e9:.2f} GFLOP/s, {f['parameters']:,} parameters |"
        ),
        (
            f"| RL update, share of matmul FLOP/s measured just before | {fmt(f['rl_update_fraction'], 100, '%')}; "
            f"{f['rl_update_flops'] / 1e9:.2f} GFLOP/s, counting the tokens it reads |"
        ),
        f"| RL update, share as if it read every rollout | {fmt(f['rl_update_every_rollout_fraction'], 100, '%')} |",
        *(bound_row(shape, PolicyConfig().d_model) for shape in report["pretrain_bound"]["shapes"]),
        (
            f"| pretraining step, operator time in matmul kernels (torch profiler) | "
            f"{report['pretrain_bound']['matmul_time_share']:.0%} |"
        ),
        *(
            f"| RL update alone (no reference read), {b['prompts']} prompt{'s' * (b['prompts'] > 1)} x "
            f"{runs.spec('main').rl_config().group_size} answers, {b['tokens']:,} tokens read | "
            f"{fmt(b['seconds'], 1000, ' ms')} |"
            for b in report["update_bound"]["batches"]
        ),
        (
            f"| RL update, each token read beyond the smallest batch | "
            f"{fmt(report['update_bound']['per_token_seconds'], 1e6, ' µs')}; "
            f"{fmt(report['update_bound']['per_token_fraction'], 100, '%')} of the matmul FLOP/s measured in the same rounds |"
        ),
        *(attention_rows(report["attention"]) if "attention" in report else []),
        *(stacked_rows(report["stacked"], len(STACKED_SEEDS)) if "stacked" in report else []),
        f"| peak memory (this process) | {report['peak_memory_mb']:.0f} MB |",
    ]
    if "all_runs" in report:
        a = report["all_runs"]
        lines += [
            (
                f"| every run the book needs ({m.get('book_runs')} runs), empty cache, {a['jobs']} at a time | "
                f"{fmt(a['seconds'], unit=' s')} |"
            ),
            (
                f"| those runs' training, as each run timed it (no loading, writing or waiting) | "
                f"{fmt(a['work_seconds'], unit=' s')} |"
            ),
            (
                f"| of which `base`'s pretraining, which every other run waits for | "
                f"{fmt(a['head_seconds'], unit=' s')} |"
            ),
            (
                f"| so at best, {a['jobs']} at a time: pretraining, then the rest shared evenly | "
                f"{fmt(a['floor_seconds'], unit=' s')} |"
            ),
        ]
    if "native_runs" in report:
        lines.append(
            "| the same runs with the machine's own kernels (`RLBOOK_NUMERICS=native`), against the pinned AVX2 "
            f"configuration above | {fmt(report['native_runs']['seconds'], unit=' s')} |"
        )
    for kind, built in BOOK_BUILDS.items():
        if f"book_seconds_{kind}_cache" in report:
            lines += [
                f"| {built} | {fmt(report[f'book_seconds_{kind}_cache'], unit=' s')} |",
                (
                    f"| {built}: peak memory of the build, its workers and its kernels together "
                    f"(PSS) | {report[f'book_peak_memory_mb_{kind}_cache']:.0f} MB |"
                ),
            ]
    for name, seconds in report.get("notebook_run_all_seconds", {}).items():
        lines.append(f"| notebook `{name}`: Run All in a fresh kernel, every run and fact cached | {seconds:.1f} s |")
    if "all_runs" in report:
        lines.append(
            f"| peak memory of a worker that trained those runs | "
            f"{report['all_runs']['worker_peak_memory_mb']:.0f} MB |"
        )
    if "worked" in report:
        lines += worked_rows(report)
    return "\n".join(lines) + "\n"


def main(args) -> int:
    """Entry point of ``rlbook bench``."""
    if args.peer == "trl":
        try:
            from rlbook.trl import peer_benchmark

            report = peer_benchmark(quick=args.quick)
        except ImportError as err:
            print(
                f'rlbook bench: error: --peer trl needs the trl extra (pip install -e ".[trl]"): {err}', file=sys.stderr
            )
            return 2
        print(json.dumps(report, indent=1) if args.json else report["summary"])
        return 0
    if getattr(args, "browser", False):
        try:
            figures = measure_browser()
        except RuntimeError as err:
            print(f"rlbook bench: error: --browser: {err}", file=sys.stderr)
            return 2
        print(json.dumps(figures, indent=1) if args.json else "\n".join(browser_lines(figures)))
        return 0
    report = measure(args.quick, whole_repeats=getattr(args, "repeats", WHOLE_REPEATS))
    text = markdown(report)
    if args.write:
        Path(args.write).write_text(text)
    print(json.dumps(report, indent=1, default=str) if args.json else text)
    return 0
