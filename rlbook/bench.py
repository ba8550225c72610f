"""``rlbook bench``: measure the speed the book promises its readers.

Every figure is the median of repeated measurements with its spread
(min-max), and every comparison (KV cache against none, one thread against
two) is a ratio of two measurements taken in the same invocation.
"""
from __future__ import annotations

import copy
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import psutil
import torch

from . import prefetch, rl, runs
from . import rewards as rw
from .policy import Policy, PolicyConfig
from .sampling import sample
from .train import adamw, equation_stream, pretrain_step, random_windows
from .world import encode, split

# The matrix-multiply kernels of a training step, as the torch profiler names them.
MATMUL_OPS = ("aten::mm", "aten::addmm", "aten::bmm")


def _spread(values: list[float]) -> dict:
    """Median and range of repeated measurements."""
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "n": len(values)}


def _timed(fn, repeats: int) -> list[float]:
    out = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


def matmul_flops(repeats: int, size: int = 512) -> dict:
    """Measured float32 matmul throughput of this machine at the current thread count (FLOP/s)."""
    a, b = torch.randn(size, size), torch.randn(size, size)
    for _ in range(3):
        a @ b
    inner = 20
    seconds = _timed(lambda: [a @ b for _ in range(inner)], repeats)
    return _spread([2 * size ** 3 * inner / s for s in seconds])


def sampling_throughput(policy: Policy, repeats: int, prompts: int = 100, n: int = 32) -> dict:
    """Generated tokens per second for ``prompts x n`` sequences, with and without the KV cache."""
    tasks = [t.prompt for t in (split("all") * ((prompts + 99) // 100))[:prompts]]
    result = {}
    for cache in (True, False):
        counts, rates = [], []
        for r in range(repeats):
            gen = torch.Generator().manual_seed(r)
            start = time.perf_counter()
            rollouts = sample(policy, tasks, n=n, generator=gen, use_cache=cache)
            elapsed = time.perf_counter() - start
            counts.append(int(rollouts.lengths.sum()))
            rates.append(counts[-1] / elapsed)
        result["kv_cache" if cache else "no_cache"] = _spread(rates)
    result["sequences"] = prompts * n
    result["cache_speedup"] = result["kv_cache"]["median"] / result["no_cache"]["median"]
    return result


@contextmanager
def _environment(**settings: str):
    """Set environment variables for the block (and the processes it starts), then put back what was there."""
    saved = {key: os.environ.get(key) for key in settings}
    os.environ.update(settings)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def fresh_pipeline(repeats: int, threads: int) -> dict:
    """Wall time of base (pretraining + SFT) and main (RL), trained from an empty cache.

    Before each of the two runs it measures the matmul FLOP/s again, so that
    :func:`training_flop_fractions` divides by the machine's speed of the
    moment rather than of the start of the benchmark.
    """
    pre, sft, rl, per_step, sampling_s, update_s, peak_pre, peak_rl = [], [], [], [], [], [], [], []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as tmp, _environment(RLBOOK_CACHE=tmp):
            peak_pre.append(matmul_flops(1)["median"])
            base = runs.load("base", 0, threads)
            peak_rl.append(matmul_flops(1)["median"])
            main = runs.load("main", 0, threads)
        pre.append(base.log["timing"]["pretrain_seconds"])
        sft.append(base.log["timing"]["sft_seconds"])
        rl.append(main.log["wall_seconds"])
        steps = main.metrics
        per_step.append(statistics.median(m["sample_seconds"] + m["update_seconds"] for m in steps))
        sampling_s.append(statistics.median(m["sample_seconds"] for m in steps))
        update_s.append(statistics.median(m["update_seconds"] for m in steps))
    return {"pretrain_seconds": _spread(pre), "sft_seconds": _spread(sft), "rl_seconds": _spread(rl),
            "rl_step_seconds": _spread(per_step), "rl_step_sampling_seconds": _spread(sampling_s),
            "rl_step_update_seconds": _spread(update_s), "base": base, "main": main,
            "paired": {"pretrain": list(zip(pre, peak_pre)), "update": list(zip(update_s, peak_rl))}}


def update_flop(main: runs.Run, params: int) -> float:
    """Median over ``main``'s steps of the FLOPs of one step's update: 6 x ``params`` a token for the policy
    (forward and backward), 2 x ``params`` a token for the reference's forward pass (the logged KL).

    The update reads each distinct (prompt, answer) pair of the batch once,
    up to :data:`rlbook.rl.ANSWERS_PER_READ` of them after each copy of a
    prompt, padding included (:func:`rlbook.rl.pack_answers`). The reference
    reads, packed the same way, only the pairs that the run had not met at
    an earlier step (:class:`rlbook.rl.ReferenceMemo`).
    """
    seen: set[bytes] = set()
    flops = []
    for stored in main.rollouts:
        group = len(stored["tokens"]) // len(stored["prompts"])
        ids = torch.tensor([encode(p) for p in stored["prompts"]]).repeat_interleave(group, dim=0)
        tokens = stored["tokens"].long()
        fresh = rl.unmet(rl.row_keys(ids, tokens), seen)
        seen.update(fresh)
        new = list(fresh.values())
        reference_reads = _tokens_read(ids[new], tokens[new]) if new else 0
        flops.append(6 * params * _tokens_read(ids, tokens) + 2 * params * reference_reads)
    return statistics.median(flops)


def _tokens_read(prompt_ids: torch.Tensor, tokens: torch.Tensor) -> int:
    """The token positions the update's packed reads of these rows hold, padding included."""
    packed = rl.pack_answers(prompt_ids, tokens)
    return packed.prompts.numel() + packed.grid.numel()


def training_flop_fractions(pipeline: dict) -> dict:
    """Fraction of matmul FLOP/s reached by pretraining and by the RL update.

    Pretraining counts 6 x params x tokens (forward and backward), over
    the matmul rate of as many cores as it has threads (``parts``). The RL
    update counts the same for the policy plus 2 x params x tokens for the
    reference policy's forward pass (the logged KL), which the update's time
    includes, each for the tokens it reads (:func:`update_flop`);
    ``rl_update_every_rollout_fraction`` counts instead (6 + 2) x params for
    the tokens of every rollout after its group's one prompt, as if no two
    rollouts were alike, which is the work the update stands for rather
    than the work it does.
    Each repeat of :func:`fresh_pipeline` gives one fraction, against the
    matmul rate measured just before that run.
    """
    base, main, paired = pipeline.pop("base"), pipeline.pop("main"), pipeline.pop("paired")
    params = base.policy().num_parameters()
    cfg = runs.spec("base").pretrain
    pre_flop = 6 * params * cfg.steps * cfg.batch * cfg.block_size
    rl_cfg = runs.spec("main").rl
    prompts = split("train")
    every_rollout = len(prompts) * len(prompts[0].prompt) + len(prompts) * rl_cfg.group_size * (rl_cfg.budget - 1)
    step_flop, every_flop = update_flop(main, params), (6 + 2) * params * every_rollout
    return {"parameters": params, "pretrain_flops": pre_flop / pipeline["pretrain_seconds"]["median"],
            "pretrain_threads": cfg.parts,
            "pretrain_fraction": _spread([pre_flop / s / (peak * cfg.parts) for s, peak in paired["pretrain"]]),
            "rl_update_flops": step_flop / pipeline["rl_step_update_seconds"]["median"],
            "rl_update_fraction": _spread([step_flop / s / peak for s, peak in paired["update"]]),
            "rl_update_every_rollout_fraction": _spread([every_flop / s / peak for s, peak in paired["update"]])}


def _pretrain_step(batch: int, width: int, parts: int, pool: ThreadPoolExecutor, seed: int = 0):
    """One step of ``base``'s pretraining recipe with ``batch`` windows, model width ``width``, in ``parts``, as a function.

    Returns the function and the number of parameters of the policy it trains.
    """
    cfg = replace(runs.spec("base").pretrain, batch=batch)
    torch.manual_seed(seed)
    policy = Policy(PolicyConfig(block_size=cfg.block_size, d_model=width))
    stream = equation_stream(cfg, chars=100_000, seed=seed)
    gen = torch.Generator().manual_seed(seed)
    opt = adamw(policy.parameters(), cfg.lr, weight_decay=0.01)
    step = lambda: pretrain_step(policy, opt, random_windows(stream, batch, cfg.block_size, gen), parts, pool)
    return step, policy.num_parameters()


# (windows, model width, parts) of the pretraining steps that pretrain_step_bound times: the book's step read
# whole on one thread and as base reads it (runs.spec("base").pretrain.parts), a batch four times larger, and
# the book's batch on wider models than the book's (d_model 32).
BOUND_SHAPES = ((128, 32, 1), (128, 32, 2), (512, 32, 1), (128, 48, 1), (128, 64, 1))


def pretrain_step_bound(repeats: int, shapes: tuple[tuple[int, int, int], ...] = BOUND_SHAPES,
                        steps: int = 20) -> dict:
    """What bounds pretraining's share of matmul FLOP/s: the batch, the model's width, and the time left to matmuls.

    ``shapes`` are (windows, width, parts) triples; the first is the book's
    step read whole. In each of ``repeats`` rounds it measures one thread's
    matmul FLOP/s and then times a pretraining step of each shape (the
    fastest of ``steps`` steps), so that every share (6 x params x tokens
    over the round's own matmul rate, times the threads a step in parts
    uses) is a ratio taken in one stretch of time, whatever the machine's
    speed does between rounds. With the torch profiler it also measures the
    share of the first shape's operator time spent in matmul kernels.
    """
    block = runs.spec("base").pretrain.block_size
    with ThreadPoolExecutor(max(1, max(parts for _, _, parts in shapes) - 1)) as pool:
        steppers = [_pretrain_step(batch, width, parts, pool) for batch, width, parts in shapes]
        for fn, _ in steppers:
            fn()
        seconds: list[list[float]] = [[] for _ in shapes]
        shares: list[list[float]] = [[] for _ in shapes]
        for _ in range(repeats):
            peak = matmul_flops(1)["median"]
            for i, ((batch, _, parts), (fn, params)) in enumerate(zip(shapes, steppers)):
                seconds[i].append(min(_timed(fn, steps)))
                shares[i].append(6 * params * batch * block / seconds[i][-1] / (peak * parts))
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
            for _ in range(steps):
                steppers[0][0]()
    ops = prof.key_averages()
    total = sum(op.self_cpu_time_total for op in ops)
    return {"shapes": [{"windows": batch, "width": width, "parts": parts, "parameters": params,
                        "step_seconds": _spread(secs), "fraction": _spread(share)}
                       for (batch, width, parts), (_, params), secs, share in zip(shapes, steppers, seconds, shares)],
            "matmul_time_share": sum(op.self_cpu_time_total for op in ops if op.key in MATMUL_OPS) / total}


def _bound_row(shape: dict, book_width: int) -> str:
    wider = "" if shape["width"] == book_width else f", width {shape['width']} ({shape['parameters']:,} parameters)"
    parts = shape["parts"]
    threads = f" in {parts} parts on {parts} threads" if parts > 1 else ""
    cores = f"{parts} cores' " if parts > 1 else "the "
    return (f"| pretraining step, {shape['windows']} windows{wider}{threads} | "
            f"{_fmt(shape['step_seconds'], 1000, ' ms')}; "
            f"{_fmt(shape['fraction'], 100, '%')} of {cores}matmul FLOP/s measured in the same rounds |")


def update_bound(policy: Policy, repeats: int, prompt_counts: tuple[int, ...] = (1, 60), steps: int = 20) -> dict:
    """What bounds the RL update's share of matmul FLOP/s: what a call costs, against what a token read costs.

    For each k of ``prompt_counts`` it samples a batch of ``main``'s recipe
    from ``policy`` on the first k training prompts. In each of ``repeats``
    rounds it measures the machine's matmul FLOP/s, then times one update
    (:func:`rlbook.rl.update`, without the reference's read) on each batch,
    the fastest of ``steps``, on a copy of the policy. The smallest batch's
    time is about what a call costs however little it reads; the extra time
    of the largest over its extra tokens read is what one more token costs,
    and its share (6 x params per token) is what the update would reach if
    calls cost nothing.
    """
    cfg = runs.spec("main").rl
    learner = copy.deepcopy(policy)
    opt = adamw(learner.parameters(), cfg.lr)
    tasks = split("train", cfg.world)
    gen = torch.Generator().manual_seed(0)
    batches, tokens = [], []
    for k in prompt_counts:
        rollouts = sample(policy, [t.prompt for t in tasks[:k]], n=cfg.group_size, budget=cfg.budget, generator=gen)
        rewards, statuses = rw.score(rl.make_verifier(cfg), rollouts.prompts, rollouts.completions())
        batches.append(rl.Batch(1, rollouts, rewards, statuses, *rl.credit(cfg, rewards, statuses)))
        tokens.append(_tokens_read(rollouts.prompt_ids, rollouts.tokens))
    for batch in batches:
        rl.update(learner, opt, batch, cfg)
    seconds: list[list[float]] = [[] for _ in batches]
    per_token, shares = [], []
    for _ in range(repeats):
        peak = matmul_flops(1)["median"]
        for i, batch in enumerate(batches):
            seconds[i].append(min(_timed(lambda: rl.update(learner, opt, batch, cfg), steps)))
        per_token.append((seconds[-1][-1] - seconds[0][-1]) / (tokens[-1] - tokens[0]))
        shares.append(6 * policy.num_parameters() / per_token[-1] / peak)
    return {"batches": [{"prompts": k, "tokens": n, "seconds": _spread(secs)}
                        for k, n, secs in zip(prompt_counts, tokens, seconds)],
            "per_token_seconds": _spread(per_token), "per_token_fraction": _spread(shares)}


def train_from_empty(pairs: list[tuple[str, int]], threads: int, jobs: int) -> dict:
    """Wall time to train the (run, seed) ``pairs`` from an empty cache, ``jobs`` at a time, and the work in it.

    The same worker pool that ``rlbook build`` uses (:func:`rlbook.prefetch.train_all`);
    :func:`training_work` then reads from the runs how much training that wall time held.
    """
    # Set before the workers start, so that their torch sees it.
    with tempfile.TemporaryDirectory() as tmp, _environment(RLBOOK_CACHE=tmp, RLBOOK_PROGRESS="0",
                                                             OMP_WAIT_POLICY="PASSIVE"):
        trained = prefetch.train_all(pairs, threads, jobs, out=lambda line: None)
        logs = [(name, runs.load(name, seed, threads).log) for name, seed in pairs]
    return {"seconds": trained.seconds, "worker_peak_memory_mb": trained.peak_memory_mb, **training_work(logs)}


def all_runs(pairs: list[tuple[str, int]], threads: int, jobs: int, repeats: int) -> dict:
    """:func:`train_from_empty` ``repeats`` times: the spread of each figure, and of the floor they imply.

    The floor is ``head + (work - head) / jobs`` (:func:`training_work`),
    taken in each repeat; memory is the largest peak of any repeat.
    """
    passes = [train_from_empty(pairs, threads, jobs) for _ in range(repeats)]
    floor = [p["head_seconds"] + (p["work_seconds"] - p["head_seconds"]) / jobs for p in passes]
    return {"jobs": jobs, "worker_peak_memory_mb": max(p["worker_peak_memory_mb"] for p in passes),
            **{key: _spread([p[key] for p in passes]) for key in ("seconds", "work_seconds", "head_seconds")},
            "floor_seconds": _spread(floor)}


def training_work(logs: list[tuple[str, dict]]) -> dict:
    """The training seconds in freshly trained runs' (name, log) pairs, as each run timed itself, and what bounds them.

    ``work_seconds`` adds every run's training (a base run's SFT, and the
    shared pretraining in the one run that trained it; an RL run's steps
    and evaluations), leaving out loading, writing and waiting.
    ``head_seconds`` is the pretraining of the runs without a parent
    (``base``): every other run descends from it, so while it trains no
    other worker has anything to do (its second thread takes the idle
    core, see :class:`rlbook.train.PretrainConfig`). With ``jobs`` workers, the runs cannot
    finish sooner than ``head + (work - head) / jobs``.
    """
    work = head = 0.0
    for name, log in logs:
        timing = log.get("timing")
        if timing is None:
            work += log["wall_seconds"]
            continue
        pretrained = timing["pretrain_seconds"] if timing["pretrained_now"] else 0.0
        work += timing["sft_seconds"] + pretrained
        head += pretrained if runs.spec(name).parent is None else 0.0
    return {"work_seconds": work, "head_seconds": head}


def tree_memory_mb(root: psutil.Process) -> float:
    """Memory of ``root`` and every process under it, in MB: the sum of their proportional set sizes (PSS).

    PSS divides each shared page among the processes that map it, so the
    libraries that every worker and kernel loads (torch above all) count
    once. Where the system does not report PSS (macOS, Windows), the unique
    set size stands in for it, which leaves the shared pages out.
    """
    total = 0
    for process in [root, *root.children(recursive=True)]:
        try:
            info = process.memory_full_info()
        except psutil.Error:  # it ended meanwhile, or is not ours to read
            continue
        total += getattr(info, "pss", info.uss)
    return total / 2 ** 20


def book_run(root: Path, cache: str | None) -> tuple[float, float]:
    """Wall time and peak memory of executing the whole book (``rlbook build``) with the given run cache.

    The memory is the largest :func:`tree_memory_mb` of the build, sampled
    every 0.2 s: the build, the workers that train its runs and its pages'
    kernels together.
    """
    env = dict(os.environ, RLBOOK_PROGRESS="0")
    if cache:
        env["RLBOOK_CACHE"] = cache
    start = time.perf_counter()
    command = [sys.executable, "-m", "rlbook.cli", "build", "--backend", "pandoc"]
    build = subprocess.Popen(command, cwd=root, env=env, stdout=subprocess.DEVNULL)
    tree, peak = psutil.Process(build.pid), 0.0
    while True:
        try:
            build.wait(timeout=0.2)
            break
        except subprocess.TimeoutExpired:
            peak = max(peak, tree_memory_mb(tree))
    seconds = time.perf_counter() - start
    if build.returncode:
        raise subprocess.CalledProcessError(build.returncode, command)
    return seconds, peak


# How often the full report repeats its longest measurements: every run from an empty cache, and the whole book
# from an empty and from a warm cache (a minute or more each).
WHOLE_REPEATS = 3


def measure(quick: bool, threads: int = runs.DEFAULT_THREADS) -> dict:
    """Every figure of the benchmark report, as a dict."""
    repeats = 2 if quick else 5
    torch.set_num_threads(threads)
    report = {"machine": {"cores": os.cpu_count(), "threads": threads, "torch": torch.__version__,
                          "python": platform.python_version(), "processor": platform.processor() or platform.machine()}}
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
    report["sampling"]["two_threads_over_one"] = (report["sampling"]["kv_cache_two_threads"]
                                                  / report["sampling"]["kv_cache"]["median"])
    report["update_bound"] = update_bound(policy, repeats)
    report["peak_memory_mb"] = prefetch.peak_memory_mb()
    if not quick:
        report["machine"]["jobs"] = prefetch.usable_cores()
        report["machine"]["book_runs"] = len(prefetch.book_runs())
        report["all_runs"] = all_runs(prefetch.book_runs(), threads, report["machine"]["jobs"], WHOLE_REPEATS)
        root = Path(__file__).resolve().parent.parent
        with tempfile.TemporaryDirectory() as tmp:
            caches = [str(Path(tmp) / f"empty-{i}") for i in range(WHOLE_REPEATS)]
            empty = [book_run(root, cache) for cache in caches]
            warm = [book_run(root, caches[-1]) for _ in range(WHOLE_REPEATS)]
            for kind, builds in (("empty", empty), ("warm", warm)):
                report[f"book_seconds_{kind}_cache"] = _spread([seconds for seconds, _ in builds])
                report[f"book_peak_memory_mb_{kind}_cache"] = max(peak for _, peak in builds)
    return report


def _fmt(s: dict, scale: float = 1.0, unit: str = "") -> str:
    return f"{s['median'] * scale:,.3g}{unit} (range {s['min'] * scale:,.3g}-{s['max'] * scale:,.3g}, n={s['n']})"


def markdown(report: dict) -> str:
    """The report as the Markdown of BENCHMARKS.md."""
    m, p, s, f = report["machine"], report["pipeline"], report["sampling"], report["fractions"]
    lines = [
        "# Benchmarks", "", "Regenerate with `rlbook bench --write BENCHMARKS.md`. Medians of repeated runs, with range.", "",
        f"Machine: {m['cores']} cores, torch threads per run: {m['threads']}, torch {m['torch']}, Python {m['python']}, "
        f"{m['processor']}.",
        "", "| measurement | value |", "|---|---|",
        f"| pretraining (`base`) | {_fmt(p['pretrain_seconds'], unit=' s')} |",
        f"| SFT (`base`) | {_fmt(p['sft_seconds'], unit=' s')} |",
        f"| RL (`main`, incl. checkpoint evaluations) | {_fmt(p['rl_seconds'], unit=' s')} |",
        f"| RL step | {_fmt(p['rl_step_seconds'], 1000, ' ms')} |",
        f"| RL step: sampling and scoring | {_fmt(p['rl_step_sampling_seconds'], 1000, ' ms')} |",
        f"| RL step: update | {_fmt(p['rl_step_update_seconds'], 1000, ' ms')} |",
        f"| sampling, {s['sequences']:,} sequences, KV cache | {_fmt(s['kv_cache'], unit=' tok/s')} |",
        f"| sampling, no cache | {_fmt(s['no_cache'], unit=' tok/s')} |",
        f"| KV cache speed-up (same run) | {s['cache_speedup']:.2f}x |",
        f"| sampling, same sequences, KV cache, 2 threads | {s['kv_cache_two_threads']:.3g} tok/s |",
        f"| 2 threads over {m['threads']}, sampling (same run) | {s['two_threads_over_one']:.2f}x |",
        f"| float32 matmul (512^3) | {_fmt(report['matmul_flops'], 1e-9, ' GFLOP/s')} |",
        f"| pretraining ({f['pretrain_threads']} threads), share of as many cores' matmul FLOP/s "
        f"(one thread's, measured just before, x {f['pretrain_threads']}) | {_fmt(f['pretrain_fraction'], 100, '%')}; "
        f"{f['pretrain_flops'] / 1e9:.2f} GFLOP/s, {f['parameters']:,} parameters |",
        f"| RL update, share of matmul FLOP/s measured just before | {_fmt(f['rl_update_fraction'], 100, '%')}; "
        f"{f['rl_update_flops'] / 1e9:.2f} GFLOP/s, counting the tokens it reads |",
        f"| RL update, share as if it read every rollout | {_fmt(f['rl_update_every_rollout_fraction'], 100, '%')} |",
        *(_bound_row(shape, PolicyConfig().d_model) for shape in report["pretrain_bound"]["shapes"]),
        f"| pretraining step, operator time in matmul kernels (torch profiler) | "
        f"{report['pretrain_bound']['matmul_time_share']:.0%} |",
        *(f"| RL update alone (no reference read), {b['prompts']} prompt{'s' * (b['prompts'] > 1)} x "
          f"{runs.spec('main').rl.group_size} answers, {b['tokens']:,} tokens read | {_fmt(b['seconds'], 1000, ' ms')} |"
          for b in report["update_bound"]["batches"]),
        f"| RL update, each token read beyond the smallest batch | "
        f"{_fmt(report['update_bound']['per_token_seconds'], 1e6, ' µs')}; "
        f"{_fmt(report['update_bound']['per_token_fraction'], 100, '%')} of the matmul FLOP/s measured in the same rounds |",
        f"| peak memory (this process) | {report['peak_memory_mb']:.0f} MB |",
    ]
    if "all_runs" in report:
        a = report["all_runs"]
        lines += [f"| every run the book needs ({m.get('book_runs')} runs), empty cache, {a['jobs']} at a time | "
                  f"{_fmt(a['seconds'], unit=' s')} |",
                  f"| those runs' training, as each run timed it (no loading, writing or waiting) | "
                  f"{_fmt(a['work_seconds'], unit=' s')} |",
                  f"| of which `base`'s pretraining, which every other run waits for | "
                  f"{_fmt(a['head_seconds'], unit=' s')} |",
                  f"| so at best, {a['jobs']} at a time: pretraining, then the rest shared evenly | "
                  f"{_fmt(a['floor_seconds'], unit=' s')} |"]
    for kind in ("empty", "warm"):
        if f"book_seconds_{kind}_cache" in report:
            lines += [f"| whole book executed, {kind} run cache | {_fmt(report[f'book_seconds_{kind}_cache'], unit=' s')} |",
                      f"| whole book, {kind} run cache: peak memory of the build, its workers and its kernels together "
                      f"(PSS) | {report[f'book_peak_memory_mb_{kind}_cache']:.0f} MB |"]
    if "all_runs" in report:
        lines.append(f"| peak memory of a worker that trained those runs | "
                     f"{report['all_runs']['worker_peak_memory_mb']:.0f} MB |")
    return "\n".join(lines) + "\n"


def main(args) -> int:
    """Entry point of ``rlbook bench``."""
    if args.peer == "trl":
        try:
            from .trl_bridge import peer_benchmark

            report = peer_benchmark(quick=args.quick)
        except ImportError as err:
            print(f"rlbook bench: error: --peer trl needs the trl extra (pip install -e \".[trl]\"): {err}",
                  file=sys.stderr)
            return 2
        print(json.dumps(report, indent=1) if args.json else report["summary"])
        return 0
    report = measure(args.quick)
    text = markdown(report)
    if args.write:
        Path(args.write).write_text(text)
    print(json.dumps(report, indent=1, default=str) if args.json else text)
    return 0
