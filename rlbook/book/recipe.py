"""Chapter 9's facts (chapters/09-modern-recipe.qmd): DAPO's and GSPO's ingredients, each run on every seed.

Every number of the chapter, the choices of its sentences whose form
follows the runs, and the data its figures draw, from three families of runs:

- in the world of sums, ``ppo`` (4 updates per batch) against ``clip-higher``
  (its upper clip bound 1.28) and ``gspo`` (one ratio per answer), and
  ``main`` against ``dynamic`` (DAPO's dynamic sampling);
- in the worked world, ``worked`` against ``worked-seq-mean`` (each answer's
  tokens averaged first), and three runs under a budget that cuts off the
  longest worked answers: ``worked-tight`` as it is, ``worked-tight-filter``
  (cut-off answers out of the loss) and ``worked-tight-shape`` (DAPO's
  length penalty).

Its claims are in :mod:`rlbook.book._recipe_claims`; each comparison the
page draws between two runs is a finding marked with the seeds it held on,
and the tables give every seed's values.
"""

from __future__ import annotations

from statistics import mean
from typing import Any

import torch

from rlbook.analysis.credit.replay import recorded_batch
from rlbook.analysis.working import checkpoint_curve
from rlbook.book import phrasing
from rlbook.book._recipe_claims import CLAIMS, CLIPPED_ABOVE, ENTROPY_GAP, FEW_WORKED  # noqa: F401  (rlbook.book reads CLAIMS here)
from rlbook.book._shown import shown_seed
from rlbook.book.needs import Need, on_seeds
from rlbook.core import losses, overlong
from rlbook.core.packing import generated_logprobs
from rlbook.core.world import WorkedTask, split
from rlbook.runs import load, spec
from rlbook.runs.catalogue import TIGHT_BUDGET

PAGE = "chapters/09-modern-recipe.qmd"

CLIPPED = ("ppo", "clip-higher", "gspo")
"""The world of sums' runs with 4 updates per batch, whose ratios move and get clipped."""
SAMPLED = ("main", "dynamic")
"""``main`` and the same run with DAPO's dynamic sampling."""
AGGREGATED = ("worked", "worked-seq-mean")
"""The worked world's run with every token alike, and with each answer's tokens averaged first."""
TIGHT = ("worked-tight", "worked-tight-filter", "worked-tight-shape")
"""The worked world under the tight budget: as it is, its cut-off answers filtered, its rewards shaped by length."""
RUNS = CLIPPED + SAMPLED + AGGREGATED + TIGHT
LATE = 10
"""The steps of a run averaged for its start (the first ten) and its end (the last ten) in a per-step measure: one
step's batch is too small a sample of the cut-off answers."""
REPLAYED = 10
"""The step whose batch the exercises replay: its answers' log-probabilities when sampled and after the step's
updates (the checkpoint saved at that step)."""
ROWS = 64
"""How many answers of that batch an exercise hands the reader: the first four groups."""


def needs(seeds: tuple[int, ...]) -> tuple[Need, ...]:
    return on_seeds(RUNS, seeds)


def _held_out(run) -> dict[str, Any]:
    """Held-out accuracy at every checkpoint, with its first and last value."""
    steps = [e["step"] for e in run.evals]
    accuracy = [e["heldout_expected_reward"] for e in run.evals]
    return {"steps": steps, "accuracy": accuracy, "start": accuracy[0], "end": accuracy[-1]}


def _clipped(name: str, seed: int) -> dict[str, Any]:
    """A run's clipping, averaged over its steps, its entropy early and late, and its held-out accuracy."""
    run = load(name, seed)
    entropy = run.metric("entropy")
    return {
        **_held_out(run),
        "clip": mean(run.metric("clip_fraction")),
        "clip_high": mean(run.metric("clip_high_fraction")),
        "clip_low": mean(run.metric("clip_low_fraction")),
        "entropy_first": entropy[0],
        "entropy_late": mean(entropy[-LATE:]),
    }


def _sampled(seed: int) -> dict[str, Any]:
    """``main`` against ``dynamic``: the silent groups, what refilling them cost, and accuracy by answers sampled."""
    main, dynamic = load("main", seed), load("dynamic", seed)
    batch = len(main.rollouts[0]["statuses"])
    steps = spec("dynamic").rl_config().steps
    drawn = dynamic.metric("rollouts_sampled")
    running = [sum(drawn[:s]) for s in range(len(drawn) + 1)]
    dyn, base = _held_out(dynamic), _held_out(main)
    total = running[-1]
    # main's checkpoint whose answers sampled so far come nearest dynamic's total
    nearest = min(base["steps"], key=lambda s: abs(s * batch - total))
    return {
        "batch": batch,
        "silent_main": mean(main.metric("zero_variance_frac")[:steps]),
        "silent_dynamic": max(dynamic.metric("zero_variance_frac")),
        "sampled": total,
        "main_sampled": steps * batch,
        "extra": total / (steps * batch) - 1,
        "dynamic": {**dyn, "answers": [running[s] for s in dyn["steps"]]},
        "main": {**base, "answers": [s * batch for s in base["steps"]]},
        "main_at_steps": base["accuracy"][base["steps"].index(steps)],
        "nearest_step": nearest,
        "main_at_sampled": base["accuracy"][base["steps"].index(nearest)],
    }


def _worked(name: str, seed: int) -> dict[str, Any]:
    """A worked-world run's held-out curve (accuracy, share of worked answers, length) and its cut-off answers."""
    run = load(name, seed)
    points = checkpoint_curve(run)
    cut = run.metric("incomplete_rate")
    return {
        "steps": [p.step for p in points],
        "accuracy": [p.accuracy for p in points],
        "share": [p.share for p in points],
        "length": [p.length for p in points],
        "start": points[0].accuracy,
        "end": points[-1].accuracy,
        "share_start": points[0].share,
        "share_end": points[-1].share,
        "length_start": points[0].length,
        "length_end": points[-1].length,
        "cut_early": mean(cut[:LATE]),
        "cut_late": mean(cut[-LATE:]),
    }


def _replayed(name: str, seed: int) -> dict[str, Any]:
    """The first :data:`ROWS` answers of a run's batch at :data:`REPLAYED`: their log-probabilities when sampled and
    after that step's updates and their mask, as plain lists (Exercise 9.1)."""
    run = load(name, seed)
    batch = recorded_batch(run, REPLAYED)
    with torch.no_grad():
        logp, _ = generated_logprobs(run.policy(REPLAYED), batch.rollouts)
    mask = batch.rollouts.mask[:ROWS]
    return {
        "logp": torch.where(mask, logp[:ROWS], 0.0).tolist(),
        "old_logp": torch.where(mask, batch.rollouts.logprobs[:ROWS], 0.0).tolist(),
        "mask": mask.tolist(),
    }


def _lengths(style: str) -> list[int]:
    """The distinct lengths, in characters with the end mark, of the worked world's training answers in ``style``."""
    tasks = [t for t in split("train", "worked") if isinstance(t, WorkedTask)]
    return sorted({len(WorkedTask(t.operands, style).completion) for t in tasks})


def _outside(seed: int) -> float:
    """The share of the ``gspo`` run's answers at :data:`REPLAYED` whose ratio lies outside its clip range after
    that step's updates."""
    run, cfg = load("gspo", seed), spec("gspo").rl_config()
    batch = recorded_batch(run, REPLAYED)
    with torch.no_grad():
        logp, _ = generated_logprobs(run.policy(REPLAYED), batch.rollouts)
    ratio = losses.sequence_ratio(logp, batch.rollouts.logprobs, batch.rollouts.mask)
    return float(((ratio < 1 - cfg.eps_low) | (ratio > 1 + cfg.eps_high)).double().mean())


def _exercise(seed: int) -> dict[str, Any]:
    """What the chapter's exercises hand the reader, from the shown seed's runs."""
    main = load("main", seed)
    first = main.rollouts[0]
    budget = spec("worked-tight-shape").rl_config()
    gspo = spec("gspo").rl_config()
    return {
        "gspo": {**_replayed("gspo", seed), "eps": [gspo.eps_low, gspo.eps_high]},
        "first_batch": {
            "rewards": first["rewards"].tolist(),
            "group_size": len(first["rewards"]) // len(first["prompts"]),
            "groups": len(first["prompts"]),
        },
        "lengths": {"budget": budget.budget, "cache": budget.overlong_cache, "worked": _lengths("worked")},
    }


def _seed(seed: int) -> dict[str, Any]:
    return {
        "outside": _outside(seed),
        "clipped": {name: _clipped(name, seed) for name in CLIPPED},
        "sampled": _sampled(seed),
        "worked": {name: _worked(name, seed) for name in AGGREGATED + TIGHT},
    }


def _percent(x: float) -> str:
    """A share as a table prints it: to a tenth of a percent under 10 %, to a whole percent above."""
    return format(x, ".1%" if x < 0.1 else ".0%")


def _each(by_seed: dict, seeds: tuple[int, ...], value, fmt: str = ".2f") -> str:
    """One value per seed, in seed order, for a sentence ("0.56, 0.53 and 0.55")."""
    return phrasing.in_order([format(value(by_seed[s]), fmt) for s in seeds])


CLOSE = 0.05
"""Two runs' held-out accuracies at their last checkpoint closer than this are said to have ended close."""


def _gap_words(ends: dict[int, tuple[float, float, float]], seeds: tuple[int, ...], run: str) -> str:
    """How far ``run`` ended from the run it is set beside, in held-out accuracy, as it came out: within
    :data:`CLOSE` on every seed, or the seeds where the gap was wider, with each gap; and the seeds where ``run``
    ended below its own start, if any. ``ends[seed]`` is ``run``'s first and last accuracy and the other run's
    last."""
    wide = [s for s in seeds if abs(ends[s][1] - ends[s][2]) >= CLOSE]
    if not wide:
        words = f"On {phrasing.seeds(seeds, seeds)} the two ended within {CLOSE} of each other."
    else:
        gaps = phrasing.in_order([f"{abs(ends[s][1] - ends[s][2]):.2f}" for s in wide])
        words = f"On {phrasing.seeds(wide, seeds)} the gap was {gaps}"
        close = [s for s in seeds if s not in wide]
        words += f"; on {phrasing.seeds(close, seeds)} the two ended within {CLOSE} of each other." if close else "."
    fell = [s for s in seeds if ends[s][1] < ends[s][0]]
    if fell:
        words += f" `{run}` ended below its own start on {phrasing.seeds(fell, seeds)}."
    return words


def _clipped_gap(by_seed: dict, seeds: tuple[int, ...], run: str) -> str:
    """:func:`_gap_words` for ``run`` beside ``ppo`` (two runs of :data:`CLIPPED`)."""
    clipped = {s: by_seed[s]["clipped"] for s in seeds}
    return _gap_words({s: (c[run]["start"], c[run]["end"], c["ppo"]["end"]) for s, c in clipped.items()}, seeds, run)


def _tables(by_seed: dict, seeds: tuple[int, ...]) -> dict[str, list[dict]]:
    """The chapter's tables, one row per run and seed."""
    steps = spec("dynamic").rl_config().steps
    clipped = [
        {
            "run": name,
            "seed": s,
            "held-out accuracy": f"{c['start']:.3f} → {c['end']:.3f}",
            "clipped": _percent(c["clip"]),
            "clipped above": _percent(c["clip_high"]),
            "entropy": f"{c['entropy_first']:.2f} → {c['entropy_late']:.2f}",
        }
        for name in CLIPPED
        for s in seeds
        for c in [by_seed[s]["clipped"][name]]
    ]
    sampled = [
        {
            "seed": s,
            "zero-variance groups in main": _percent(d["silent_main"]),
            "answers sampled by main": f"{d['main_sampled']:,}",
            "answers sampled by dynamic": f"{d['sampled']:,}",
            f"dynamic at step {steps}": f"{d['dynamic']['end']:.3f}",
            f"main at step {steps}": f"{d['main_at_steps']:.3f}",
            "main, as many answers": f"{d['main_at_sampled']:.3f} (step {d['nearest_step']})",
        }
        for s in seeds
        for d in [by_seed[s]["sampled"]]
    ]
    worked = [
        {
            "run": name,
            "seed": s,
            "held-out accuracy": f"{w['start']:.3f} → {w['end']:.3f}",
            "worked answers": f"{w['share_start']:.0%} → {w['share_end']:.0%}",
            "length": f"{w['length_start']:.1f} → {w['length_end']:.1f}",
            "cut off": f"{w['cut_early']:.1%} → {w['cut_late']:.1%}",
        }
        for name in AGGREGATED + TIGHT
        for s in seeds
        for w in [by_seed[s]["worked"][name]]
    ]
    return {"clipped": clipped, "sampled": sampled, "worked": worked}


def compute(seeds: tuple[int, ...]) -> dict[str, Any]:
    """Every seed's measurements, the page's choices of words, and the figures' data."""
    by_seed = {s: _seed(s) for s in seeds}
    shown = shown_seed(seeds)
    rl = spec("worked-tight-shape").rl_config()
    worked, direct = _lengths("worked"), _lengths("direct")
    fits = [n for n in worked if n <= rl.budget]
    worth = overlong.length_penalty(torch.tensor(fits), rl.budget, rl.overlong_cache) + 1
    return {
        "seeds": list(seeds),
        "shown": shown,
        "by_seed": by_seed,
        "tight_budget": TIGHT_BUDGET,
        "ramp_start": rl.budget - rl.overlong_cache,
        "ramp": rl.overlong_cache,
        "eps_high": spec("clip-higher").rl_config().eps_high,
        "eps": spec("ppo").rl_config().eps_high,
        "gspo_eps": (spec("gspo").rl_config().eps_low, spec("gspo").rl_config().eps_high),
        "refill_rounds": spec("dynamic").rl_config().refill_rounds,
        "tables": _tables(by_seed, seeds),
        "seed_words": phrasing.listing(list(seeds)),
        "updates": phrasing.number_word(spec("ppo").rl_config().updates_per_batch),
        "late": phrasing.number_word(LATE),
        "single_budget": spec("ppo").rl_config().budget,
        "dynamic_steps": spec("dynamic").rl_config().steps,
        "direct_lengths": phrasing.listing(direct, "or"),
        "worked_span": f"{worked[0]} to {worked[-1]}",
        "fits": phrasing.listing(fits),
        "cut_lengths": phrasing.listing([n for n in worked if n > rl.budget]),
        "worth": phrasing.listing([f"{w:.2f}" for w in worth.tolist()]),
        "shortest_worked": worked[0],
        "clipped_above": f"{CLIPPED_ABOVE:.0%}",
        "entropy_gap": ENTROPY_GAP,
        "few_worked": f"{FEW_WORKED:.0%}",
        "outside": _each(by_seed, seeds, lambda d: d["outside"], ".0%"),
        "exercise": _exercise(shown),
        "replayed": {"step": REPLAYED, "rows": ROWS},
        "silent": _each(by_seed, seeds, lambda d: d["sampled"]["silent_main"], ".0%"),
        "extra": _each(by_seed, seeds, lambda d: d["sampled"]["extra"], ".0%"),
        "clip_higher_gap": _clipped_gap(by_seed, seeds, "clip-higher"),
        "gspo_gap": _clipped_gap(by_seed, seeds, "gspo"),
        "dynamic_gap": _gap_words(
            {
                s: (d["dynamic"]["start"], d["dynamic"]["end"], d["main_at_steps"])
                for s in seeds
                for d in [by_seed[s]["sampled"]]
            },
            seeds,
            "dynamic",
        ),
        "gspo_clip": _each(by_seed, seeds, lambda d: d["clipped"]["gspo"]["clip"], ".0%"),
        "ppo_clip": _each(by_seed, seeds, lambda d: d["clipped"]["ppo"]["clip"], ".1%"),
        "ppo_clip_high": _each(by_seed, seeds, lambda d: d["clipped"]["ppo"]["clip_high"], ".1%"),
        "tight_cut": _each(by_seed, seeds, lambda d: d["worked"]["worked-tight"]["cut_early"], ".0%"),
        "shape_end": _each(by_seed, seeds, lambda d: d["worked"]["worked-tight-shape"]["end"], ".3f"),
        "shape_start": _each(by_seed, seeds, lambda d: d["worked"]["worked-tight-shape"]["start"], ".3f"),
        "figures": {
            "clipped": {name: {s: by_seed[s]["clipped"][name] for s in seeds} for name in CLIPPED},
            "sampled": {name: {s: by_seed[s]["sampled"][name] for s in seeds} for name in SAMPLED},
            "worked": {name: {s: by_seed[s]["worked"][name] for s in seeds} for name in AGGREGATED + TIGHT},
        },
    }
