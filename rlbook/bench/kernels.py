"""The kernel-level measurements of ``rlbook bench``: matmul FLOP/s, sampling throughput with and without the
KV cache, a fresh pipeline's timings, and how much of the matmul FLOP/s pretraining and the RL update reach.
"""

from __future__ import annotations

import copy
import os
import statistics
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import replace

import torch
import torch.nn.functional as F

from rlbook import runs
from rlbook.core import packing, rl
from rlbook.core import rewards as rw
from rlbook.core.policy import Policy, PolicyConfig, attend_written, causal_bias
from rlbook.core.sampling import sample
from rlbook.core.train import adamw, equation_stream, pretrain_step, random_windows
from rlbook.core.world import encode, split

# The matrix-multiply kernels of a training step, as the torch profiler names them.
MATMUL_OPS = ("aten::mm", "aten::addmm", "aten::bmm")


def spread(values: list[float]) -> dict:
    """Median and range of repeated measurements."""
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "n": len(values)}


def timed(fn, repeats: int) -> list[float]:
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
    seconds = timed(lambda: [a @ b for _ in range(inner)], repeats)
    return spread([2 * size**3 * inner / s for s in seconds])


def sampling_throughput(policy: Policy, repeats: int, prompts: int = 100, n: int = 32) -> dict:
    """Generated tokens per second for ``prompts x n`` sequences, with and without the KV cache."""
    tasks = [t.prompt for t in (split("all") * ((prompts + 99) // 100))[:prompts]]
    result: dict = {}
    for cache in (True, False):
        counts, rates = [], []
        for r in range(repeats):
            gen = torch.Generator().manual_seed(r)
            start = time.perf_counter()
            rollouts = sample(policy, tasks, n=n, generator=gen, use_cache=cache)
            elapsed = time.perf_counter() - start
            counts.append(int(rollouts.lengths.sum()))
            rates.append(counts[-1] / elapsed)
        result["kv_cache" if cache else "no_cache"] = spread(rates)
    result["sequences"] = prompts * n
    result["cache_speedup"] = result["kv_cache"]["median"] / result["no_cache"]["median"]
    return result


@contextmanager
def environment(**settings: str | None):
    """Set environment variables for the block (and the processes it starts; None unsets one), then put back
    what was there."""
    saved = {key: os.environ.get(key) for key in settings}
    for key, value in settings.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
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
        with tempfile.TemporaryDirectory() as tmp, environment(RLBOOK_CACHE=tmp):
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
    return {
        "pretrain_seconds": spread(pre),
        "sft_seconds": spread(sft),
        "rl_seconds": spread(rl),
        "rl_step_seconds": spread(per_step),
        "rl_step_sampling_seconds": spread(sampling_s),
        "rl_step_update_seconds": spread(update_s),
        "base": base,
        "main": main,
        "paired": {"pretrain": list(zip(pre, peak_pre)), "update": list(zip(update_s, peak_rl))},
    }


def update_flop(main: runs.Run, params: int) -> float:
    """Median over ``main``'s steps of the FLOPs of one step's update: 6 x ``params`` a token for the policy
    (forward and backward), 2 x ``params`` a token for the reference's forward pass (the logged KL).

    The update reads each distinct (prompt, answer) pair of the batch once,
    up to :data:`rlbook.core.packing.ANSWERS_PER_READ` of them after each copy of a
    prompt, padding included (:func:`rlbook.core.packing.pack_answers`). The reference
    reads, packed the same way, only the pairs that the run had not met at
    an earlier step (:class:`rlbook.core.packing.ReferenceMemo`).
    """
    seen: set[bytes] = set()
    flops = []
    for stored in main.rollouts:
        group = len(stored["tokens"]) // len(stored["prompts"])
        ids = torch.tensor([encode(p) for p in stored["prompts"]]).repeat_interleave(group, dim=0)
        tokens = stored["tokens"].long()
        fresh = packing.unmet(packing.row_keys(ids, tokens), seen)
        seen.update(fresh)
        new = list(fresh.values())
        reference_reads = _tokens_read(ids[new], tokens[new]) if new else 0
        flops.append(6 * params * _tokens_read(ids, tokens) + 2 * params * reference_reads)
    return statistics.median(flops)


def _tokens_read(prompt_ids: torch.Tensor, tokens: torch.Tensor) -> int:
    """The token positions the update's packed reads of these rows hold, padding included."""
    packed = packing.pack_answers(prompt_ids, tokens)
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
    cfg = runs.spec("base").base_configs()[0]
    pre_flop = 6 * params * cfg.steps * cfg.batch * cfg.block_size
    rl_cfg = runs.spec("main").rl_config()
    prompts = split("train")
    every_rollout = len(prompts) * len(prompts[0].prompt) + len(prompts) * rl_cfg.group_size * (rl_cfg.budget - 1)
    step_flop, every_flop = update_flop(main, params), (6 + 2) * params * every_rollout
    return {
        "parameters": params,
        "pretrain_flops": pre_flop / pipeline["pretrain_seconds"]["median"],
        "pretrain_threads": cfg.parts,
        "pretrain_fraction": spread([pre_flop / s / (peak * cfg.parts) for s, peak in paired["pretrain"]]),
        "rl_update_flops": step_flop / pipeline["rl_step_update_seconds"]["median"],
        "rl_update_fraction": spread([step_flop / s / peak for s, peak in paired["update"]]),
        "rl_update_every_rollout_fraction": spread([every_flop / s / peak for s, peak in paired["update"]]),
    }


def _pretrain_step(batch: int, width: int, parts: int, pool: ThreadPoolExecutor, seed: int = 0):
    """One step of ``base``'s pretraining recipe with ``batch`` windows, model width ``width``, in ``parts``, as a function.

    Returns the function and the number of parameters of the policy it trains.
    """
    cfg = replace(runs.spec("base").base_configs()[0], batch=batch)
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


def pretrain_step_bound(repeats: int, shapes: tuple[tuple[int, int, int], ...] = BOUND_SHAPES, steps: int = 20) -> dict:
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
    block = runs.spec("base").base_configs()[0].block_size
    with ThreadPoolExecutor(max(1, max(parts for _, _, parts in shapes) - 1)) as pool:
        steppers = [_pretrain_step(batch, width, parts, pool) for batch, width, parts in shapes]
        for fn, _ in steppers:
            fn()
        seconds: list[list[float]] = [[] for _ in shapes]
        shares: list[list[float]] = [[] for _ in shapes]
        for _ in range(repeats):
            peak = matmul_flops(1)["median"]
            for i, ((batch, _, parts), (fn, params)) in enumerate(zip(shapes, steppers)):
                seconds[i].append(min(timed(fn, steps)))
                shares[i].append(6 * params * batch * block / seconds[i][-1] / (peak * parts))
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
            for _ in range(steps):
                steppers[0][0]()
    ops = prof.key_averages()
    total = sum(op.self_cpu_time_total for op in ops)
    return {
        "shapes": [
            {
                "windows": batch,
                "width": width,
                "parts": parts,
                "parameters": params,
                "step_seconds": spread(secs),
                "fraction": spread(share),
            }
            for (batch, width, parts), (_, params), secs, share in zip(shapes, steppers, seconds, shares)
        ],
        "matmul_time_share": sum(op.self_cpu_time_total for op in ops if op.key in MATMUL_OPS) / total,
    }


def bound_row(shape: dict, book_width: int) -> str:
    wider = "" if shape["width"] == book_width else f", width {shape['width']} ({shape['parameters']:,} parameters)"
    parts = shape["parts"]
    threads = f" in {parts} parts on {parts} threads" if parts > 1 else ""
    cores = f"{parts} cores' " if parts > 1 else "the "
    return (
        f"| pretraining step, {shape['windows']} windows{wider}{threads} | "
        f"{fmt(shape['step_seconds'], 1000, ' ms')}; "
        f"{fmt(shape['fraction'], 100, '%')} of {cores}matmul FLOP/s measured in the same rounds |"
    )


def update_bound(policy: Policy, repeats: int, prompt_counts: tuple[int, ...] = (1, 60), steps: int = 20) -> dict:
    """What bounds the RL update's share of matmul FLOP/s: what a call costs, against what a token read costs.

    For each k of ``prompt_counts`` it samples a batch of ``main``'s recipe
    from ``policy`` on the first k training prompts. In each of ``repeats``
    rounds it measures the machine's matmul FLOP/s, then times one update
    (:func:`rlbook.core.rl.update`, without the reference's read) on each batch,
    the fastest of ``steps``, on a copy of the policy. The smallest batch's
    time is about what a call costs however little it reads; the extra time
    of the largest over its extra tokens read is what one more token costs,
    and its share (6 x params per token) is what the update would reach if
    calls cost nothing.
    """
    cfg = runs.spec("main").rl_config()
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
            seconds[i].append(min(timed(lambda batch=batch: rl.update(learner, opt, batch, cfg), steps)))
        per_token.append((seconds[-1][-1] - seconds[0][-1]) / (tokens[-1] - tokens[0]))
        shares.append(6 * policy.num_parameters() / per_token[-1] / peak)
    return {
        "batches": [
            {"prompts": k, "tokens": n, "seconds": spread(secs)} for k, n, secs in zip(prompt_counts, tokens, seconds)
        ],
        "per_token_seconds": spread(per_token),
        "per_token_fraction": spread(shares),
    }


def fmt(s: dict, scale: float = 1.0, unit: str = "") -> str:
    return f"{s['median'] * scale:,.3g}{unit} (range {s['min'] * scale:,.3g}-{s['max'] * scale:,.3g}, n={s['n']})"


def attention_paths(repeats: int, sequences: int = 960, steps: int = 13, steps_each: int = 20) -> dict:
    """Causal attention written out (:func:`rlbook.core.policy.attend_written`) against PyTorch's fused kernel.

    On random queries, keys and values of the policy's shape (4 heads of
    width 8) for ``sequences`` reads of ``steps`` positions (``main``'s batch:
    960 answers of a 9-character prompt and 4 characters), each way is timed
    with its backward pass and without a gradient, the fastest of
    ``steps_each`` calls in each of ``repeats`` rounds. :func:`rlbook.core.policy.attend`
    writes attention out where autograd records it; these are the timings
    behind that choice, kept here rather than in a docstring, where they would go stale.
    """
    cfg = PolicyConfig()
    shape = (sequences, cfg.n_head, steps, cfg.d_model // cfg.n_head)
    q, k, v = (torch.randn(shape, generator=torch.Generator().manual_seed(i), requires_grad=True) for i in range(3))
    bias = causal_bias(steps)
    ways = {
        "written": lambda: attend_written(q, k, v, bias),
        "fused": lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True),
    }
    out: dict = {}
    for name, attention in ways.items():

        def backward(attention=attention):
            attention().sum().backward()

        def forward(attention=attention):
            with torch.no_grad():
                attention()

        out[f"{name}_backward"] = spread([min(timed(backward, steps_each)) for _ in range(repeats)])
        out[f"{name}_no_grad"] = spread([min(timed(forward, steps_each)) for _ in range(repeats)])
    out.update(sequences=sequences, steps=steps)
    return out


def attention_rows(paths: dict) -> list[str]:
    """The rows of :func:`attention_paths` in BENCHMARKS.md."""
    read = f"{paths['sequences']:,} reads of {paths['steps']} positions"
    return [
        (
            f"| causal attention, {read}, with its backward pass: written out | "
            f"{fmt(paths['written_backward'], 1000, ' ms')} |"
        ),
        f"| the same, fused kernel | {fmt(paths['fused_backward'], 1000, ' ms')} |",
        f"| causal attention, {read}, no gradient: written out | {fmt(paths['written_no_grad'], 1000, ' ms')} |",
        f"| the same, fused kernel | {fmt(paths['fused_no_grad'], 1000, ' ms')} |",
    ]
