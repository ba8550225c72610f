"""Chapter 1's facts (chapters/01-rl-loop.qmd): the base policy sampled, one update taken apart, main's curve.

Every number and range of the chapter, the choices of its outcome-dependent
sentences (:mod:`rlbook.book.wording`, worded in the page), and the data its
figures draw, computed from the runs ``base`` and ``main`` on every seed.
The chapter shows seed 0's workshop; its claims are checked on every seed
where the prose makes them of every seed, and on seed 0 where the prose
speaks of the sums it shows.
"""

from __future__ import annotations

import math

import numpy as np

from rlbook.analysis import workshop as ws
from rlbook.analysis.disagreement import breakdown, format_share
from rlbook.book import phrasing
from rlbook.book._shown import shown_seed
from rlbook.book.claims import Claim, every
from rlbook.book.facts import Num
from rlbook.book.needs import Need, on_seeds
from rlbook.book.wording import choice
from rlbook.core import evaluate as ev
from rlbook.core import stats, world
from rlbook.runs import MAIN, load

PAGE = "chapters/01-rl-loop.qmd"

TEMPERATURES = (0.25, 0.5, 0.75, 1.0, 1.25, 1.5)
"""Where chapter 1 samples the base policy to show what temperature does."""
N_TEMPERATURE = 256
"""Samples per workshop sum at each temperature."""
FINE = 49
"""Points of the exact expected-reward curves against temperature."""
NOTICEABLE = 0.01
"""The rise, relative to its probability before, from which chapter 1 says a wrong answer gained probability in the
one-update demonstration; below it the answer barely moved."""


def needs(seeds: tuple[int, ...]) -> tuple[Need, ...]:
    return on_seeds(("base", "main"), seeds)


def _answers(samples: ev.EvalResult, task: world.Task) -> list[list]:
    """The distinct answers sampled for ``task``: [text, count, status], commonest first."""
    return [[text, count, status] for text, count, status in samples.answers(samples.tasks.index(task))]


def _greedy(policy, task: world.Task) -> str:
    """The answer built by taking the most likely character at each step (greedy decoding), without its end mark."""
    return ev.evaluate(policy, [task], greedy=True).completions[0][0].rstrip("#")


def _workshop(seed: int) -> dict:
    """The workshop of one seed's base policy: the three sums, their samples, exact odds and one update."""
    base = load("base", seed)
    policy = base.policy(step=1)
    samples = ws.recorded_samples(base)
    picks = ws.pick_workshop_sums(samples, policy)
    kinds = ws.classify_prompts(samples)
    rate = {k: float(samples.per_prompt[samples.tasks.index(t)]) for k, t in picks.items()}
    exact = {k: ws.exact_expected_reward(policy, t) for k, t in picks.items()}
    wrong, unsure = picks["never right"], picks["uncertain"]
    sft = ev.evaluate(policy, world.split("sft"), n=ws.N_SAMPLES, seed=seed + 1)
    heldout = world.split("heldout")
    low, one, high = TEMPERATURES[0], 1.0, TEMPERATURES[-1]
    cooled = [ws.exact_expected_reward(policy, t, low) - ws.exact_expected_reward(policy, t, one) for t in heldout]
    spread = ws.estimate_spread(policy, unsure, seed=seed)
    demo = ws.one_update(policy, unsure, MAIN.group_size, seed=seed)
    rise = dict(zip(demo.answers, (demo.after - demo.before) / demo.before))
    negative = [a for a in demo.answers if (demo.advantage_of(a) or 0) < 0]
    greedy = _greedy(policy, unsure)
    return {
        "sft_rate": sft.expected_reward,
        "heldout_rate": samples.expected_reward,
        "format_share": format_share(breakdown(samples)),
        "kinds": {k: len(v) for k, v in kinds.items()},
        "names": {k: t.name for k, t in picks.items()},
        "answers_right": {k: t.answer for k, t in picks.items()},
        "rate": rate,
        "exact": exact,
        "panels": [
            {"kind": k, "name": t.name, "rate": rate[k], "answers": _answers(samples, t)} for k, t in picks.items()
        ],
        "wrong_top": _answers(samples, wrong)[0][:2],
        "unsure_distinct": len(_answers(samples, unsure)),
        "wrong_group": float(stats.prob_any_success(exact["never right"], MAIN.group_size)),
        "right_all_right": exact["confidently right"] ** MAIN.group_size,
        "per_prompt": samples.per_prompt,
        "temperature": {
            "temperatures": TEMPERATURES,
            "sampled": ws.reward_vs_temperature(policy, list(picks.values()), TEMPERATURES, n=N_TEMPERATURE, seed=seed),
            "heldout": ws.reward_vs_temperature(policy, heldout, TEMPERATURES, n=ws.N_SAMPLES, seed=seed).mean(0),
            "fine": np.linspace(low, high, FINE),
            "exact": [ws.exact_reward_curve(policy, t, np.linspace(low, high, FINE)) for t in picks.values()],
            "at": {
                k: {str(T): ws.exact_expected_reward(policy, t, T) for T in (low, one, high)} for k, t in picks.items()
            },
            "greedy": greedy,
            "greedy_right": greedy == str(unsure.answer),
            "cooled_up": sum(d > 0 for d in cooled),
            "cooled_down": sum(d < 0 for d in cooled),
        },
        "spread": {
            "ns": spread.ns,
            "sd": spread.sd,
            "binomial": spread.binomial_sd,
            "p": spread.p,
            "repeats": spread.repeats,
            "count": round(rate["uncertain"] * ws.N_SAMPLES),  # right answers in a workshop's draw at the exact rate
            "wilson": stats.wilson_interval(round(rate["uncertain"] * ws.N_SAMPLES), ws.N_SAMPLES),
        },
        "update": {
            "rows": [[a, n, r, adv, b, c] for a, n, r, adv, b, c in demo.table()],
            "baseline": demo.baseline,
            "right": int(demo.rewards.sum()),
            "size": len(demo.completions),
            "adv_right": demo.advantage_of(unsure.completion),
            "before": float(demo.before[demo.answers.index(unsure.completion)]),
            "after": float(demo.after[demo.answers.index(unsure.completion)]),
            "gains": sorted(([a.rstrip("#"), float(rise[a])] for a in negative if rise[a] > 0), key=lambda g: -g[1]),
        },
    }


def _curves(seeds: tuple[int, ...]) -> list[dict]:
    """main's learning curve on each seed: batch reward per step, held-out expected reward per checkpoint."""
    curves = []
    for seed in seeds:
        run = load("main", seed)
        curves.append(
            {
                "seed": seed,
                "steps": [m["step"] for m in run.metrics],
                "batch": run.metric("reward_mean"),
                "eval_steps": [e["step"] for e in run.evals],
                "heldout": [e["heldout_expected_reward"] for e in run.evals],
            }
        )
    return curves


def _main_batches(seed: int) -> dict:
    """The rewards of ``main``'s first and last training batches on ``seed``, one row per prompt's group."""
    run = load("main", seed)
    batches = {}
    for name, step in (("first", 1), ("last", MAIN.steps)):
        stored = next(r for r in run.rollouts if r["step"] == step)
        rewards = stored["rewards"].numpy().astype(float)
        batches[name] = rewards.reshape(len(stored["prompts"]), -1).tolist()
    return batches


def compute(seeds: tuple[int, ...]) -> dict:
    """Every fact of chapter 1 on ``seeds`` (the workshop on each seed, shown for :data:`SHOWN`)."""
    by_seed = {seed: _workshop(seed) for seed in seeds}
    shown = by_seed[shown_seed(seeds)]
    curves = _curves(seeds)
    start = np.array([c["heldout"][0] for c in curves])
    end = np.array([c["heldout"][-1] for c in curves])
    t = shown["temperature"]
    at = t["at"]
    unsure, wrong, right = (shown["names"][k] for k in ("uncertain", "never right", "confidently right"))
    against = [s for s in seeds if any(rise >= NOTICEABLE for _, rise in by_seed[s]["update"]["gains"])]
    ratio = np.asarray(shown["spread"]["sd"]) / np.asarray(shown["spread"]["binomial"])
    batches = _main_batches(shown_seed(seeds))
    return {
        "seeds": list(seeds),
        "shown": shown_seed(seeds),
        "by_seed": by_seed,
        "vocab": len(world.VOCAB),
        "budget": MAIN.budget,
        "group": MAIN.group_size,
        "steps": MAIN.steps,
        "checkpoint_every": MAIN.checkpoint_every,
        "lr": Num(MAIN.lr, "sci"),
        "demo_lr": Num(ws.DEMO_LR, "sci"),
        "n_sft": len(world.split("sft")),
        "n_heldout": len(world.split("heldout")),
        "n_train": len(world.split("train")),
        "samples": ws.N_SAMPLES,
        "n_temperature": N_TEMPERATURE,
        "sft_rate": Num(shown["sft_rate"]),
        "heldout_rate": Num(shown["heldout_rate"]),
        "heldout_pct": Num(shown["heldout_rate"], ".0%"),
        "format_share": Num(shown["format_share"], ".0%"),
        "right": right,
        "wrong": wrong,
        "unsure": unsure,
        "unsure_prompt": f"U:{unsure}?|A:",
        "right_count": round(shown["rate"]["confidently right"] * ws.N_SAMPLES),
        "wrong_top": shown["wrong_top"][0].rstrip("#"),
        "wrong_top_count": shown["wrong_top"][1],
        "unsure_distinct": shown["unsure_distinct"],
        "unsure_rate": Num(shown["rate"]["uncertain"]),
        "exact_right": Num(shown["exact"]["confidently right"], ".2f"),
        "exact_unsure": Num(shown["exact"]["uncertain"], ".2f"),
        "wrong_odds": Num(1 / shown["exact"]["never right"], "approx"),
        "wrong_group_odds": Num(1 / shown["wrong_group"], "approx"),
        "right_all_right": Num(shown["right_all_right"], ".0%"),
        "kinds": shown["kinds"],
        "bars": {"right": Num(ws.RIGHT_BAR, ".0%"), "rare": Num(ws.RARE_BAR, ".0%")},
        "wrong_favourite": wrong_favourite(wrong, shown["wrong_top"][0], shown["wrong_top"][1], ws.N_SAMPLES),
        "temperature": {
            "low": TEMPERATURES[0],
            "high": TEMPERATURES[-1],
            "greedy": greedy(t["greedy"], shown["answers_right"]["uncertain"], t["greedy_right"]),
            "greedy_reward": int(t["greedy_right"]),
            "unsure_one": Num(at["uncertain"]["1.0"]),
            "unsure_low": Num(at["uncertain"]["0.25"]),
            "right_one": Num(at["confidently right"]["1.0"]),
            "right_high": Num(at["confidently right"]["1.5"]),
            "heldout_low": Num(t["heldout"][0]),
            "heldout_one": Num(t["heldout"][3]),
            "heldout_high": Num(t["heldout"][-1]),
            "cooled_up": phrasing.number_word(t["cooled_up"]),
            "cooled_down": phrasing.number_word(t["cooled_down"]),
        },
        "spread": {
            "within": Num(float(max(ratio.max(), 1 / ratio.min())), ".2f"),
            "sd32": Num(shown["spread"]["sd"][shown["spread"]["ns"].index(32)]),
            "p": Num(shown["spread"]["p"]),
            "count": shown["spread"]["count"],
            "lo": Num(shown["spread"]["wilson"][0]),
            "hi": Num(shown["spread"]["wilson"][1]),
        },
        "update": {
            **{k: shown["update"][k] for k in ("right", "size")},
            "baseline": Num(shown["update"]["baseline"], ".3f"),
            "adv_right": Num(shown["update"]["adv_right"], "+.3f"),
            "adv_wrong": Num(-shown["update"]["baseline"], "+.3f"),
            "before": Num(shown["update"]["before"], ".3f"),
            "after": Num(shown["update"]["after"], ".3f"),
            "against": against_advantage(shown["update"]["gains"], against, seeds),
        },
        "try_it": ws.try_it([[0, 0, 0, 1], [1, 1, 0, 0], [1, 1, 1, 1]]),
        "rewards_first": batches["first"],
        "rewards_last": batches["last"],
        "main": {
            "curves": curves,
            "start": Num(start.mean()),
            "end": Num(end.mean()),
            "end_range": phrasing.span(end.tolist()),
            "lift_min": Num(float((end - start).min())),
        },
    }


FAVOURITE = ("dominant", "scattered")
"""The cases of :func:`wrong_favourite`: the never-right sum's favourite wrong answer dominates, or none does."""


def wrong_favourite(name: str, top: str, count: int, samples: int) -> dict:
    """What the policy does on the shown never-right sum ``name`` (chapter 1), as a choice.

    Its commonest answer ``top`` came up ``count`` times in ``samples``: the
    case is "dominant" (the policy is confidently wrong) only when that
    favourite reaches :data:`rlbook.analysis.workshop.DOMINANT` of the
    samples, "scattered" otherwise.
    """
    case = "dominant" if count >= ws.DOMINANT * samples else "scattered"
    return choice(case, FAVOURITE, sum=name, top=top.rstrip("#"), count=count, samples=samples)


GREEDY = ("right", "wrong")
"""The cases of :func:`greedy`: the uncertain sum's greedy answer is the right one, or it is not."""


def greedy(answer: str, right: int, is_right: bool) -> dict:
    """Whether the greedy ``answer`` to chapter 1's uncertain sum is its ``right`` answer, as a choice."""
    if is_right:
        return choice("right", GREEDY, greedy=answer)
    return choice("wrong", GREEDY, greedy=answer, right=right)


AGAINST = ("clear", "clear_faint", "elsewhere", "nowhere")
"""The cases of :func:`against_advantage`: in the shown demonstration some wrong answers gained clearly, with or
without others that barely moved; or no answer gained clearly there but some did on other seeds; or on no seed."""


def percent(rise: float) -> str:
    """A relative rise in percent with its sign and two significant digits, never rounded to zero: "+33%",
    "+0.0077%", as the second panel of chapter 1's one-update figure labels it."""
    digits = max(0, 1 - math.floor(math.log10(rise * 100))) if rise else 0
    return f"{rise * 100:+.{digits}f}%"


def against_advantage(gains: list, against: list[int], seeds: tuple[int, ...]) -> dict:
    """Whether chapter 1's one-update demonstration moved answers against their advantage, as a choice.

    Every answer is written by the same weights, so a step aimed at some
    answers moves the others too. ``gains`` are the shown seed's answers with
    a negative advantage whose probability rose, each [answer, rise relative
    to its probability before]. Those that rose by :data:`NOTICEABLE` or more
    are listed with their rise as ``gained``, those below as ``faint``, so
    that a negligible rise is never offered as a gain. Where none rose
    noticeably: "elsewhere" with the seeds ``against`` where some did,
    "nowhere" with every seed.
    """
    clear = [f"`{answer}` ({percent(rise)})" for answer, rise in gains if rise >= NOTICEABLE]
    faint = [f"`{answer}` ({percent(rise)})" for answer, rise in gains if rise < NOTICEABLE]
    bar = Num(NOTICEABLE, ".0%")
    if clear and faint:
        return choice("clear_faint", AGAINST, gained=phrasing.listing(clear), faint=phrasing.listing(faint))
    if clear:
        return choice("clear", AGAINST, gained=phrasing.listing(clear))
    if against:
        return choice("elsewhere", AGAINST, bar=bar, seeds=phrasing.seeds(against, seeds))
    return choice("nowhere", AGAINST, bar=bar, seeds=phrasing.seeds(seeds, seeds))


def _every(key):
    """A check that ``key(seed facts)`` holds on every seed of the facts."""
    return every(key)


CLAIMS = (
    Claim(
        "sft-beats-heldout",
        "SFT prompts are answered better than held-out ones, on every seed",
        _every(lambda s: s.sft_rate > s.heldout_rate),
        lambda F: [(F.by_seed[s].sft_rate, F.by_seed[s].heldout_rate) for s in F.seeds],
        kind="law",
    ),
    Claim(
        "misses-are-wrong-sums",
        "most held-out misses are well-formed sums with the wrong value, on every seed",
        _every(lambda s: s.format_share < 0.5),
        lambda F: [F.by_seed[s].format_share for s in F.seeds],
        kind="law",
    ),
    Claim(
        "one-of-each-kind",
        "the workshop finds one confidently right, one never right and one uncertain sum",
        _every(
            lambda s: (
                s.rate["confidently right"] >= ws.RIGHT_BAR
                and s.rate["never right"] == 0
                and ws.RARE_BAR <= s.rate["uncertain"] < ws.RIGHT_BAR
            )
        ),
        lambda F: [F.by_seed[s].rate for s in F.seeds],
        kind="law",
    ),
    Claim(
        "wrong-sum-gives-no-signal",
        "on the shown never-right sum a group of 16 is almost always all wrong",
        lambda F: F.by_seed[F.shown].wrong_group < 0.05,
        lambda F: F.by_seed[F.shown].wrong_group,
        kind="law",
    ),
    Claim(
        "cooling-follows-greedy",
        "cooling moves the uncertain sum towards its greedy answer's verdict",
        _every(
            lambda s: (
                (s.temperature.at["uncertain"]["0.25"] > s.temperature.at["uncertain"]["1.0"])
                == s.temperature.greedy_right
            )
        ),
        kind="finding",
    ),
    Claim(
        "cooling-finds-nothing-new",
        "cooling cannot raise the never-right sum",
        _every(lambda s: s.temperature.at["never right"]["0.25"] <= s.temperature.at["never right"]["1.0"]),
        kind="law",
    ),
    Claim(
        "heating-lowers-right",
        "heating lowers even the confidently right sum",
        _every(lambda s: s.temperature.at["confidently right"]["1.5"] < s.temperature.at["confidently right"]["1.0"]),
        kind="law",
    ),
    Claim(
        "cooling-both-ways",
        "cooling raises some held-out sums and lowers others",
        _every(lambda s: s.temperature.cooled_up > 0 and s.temperature.cooled_down > 0),
        kind="law",
    ),
    Claim(
        "spread-is-binomial",
        "every measured spread is within a factor 1.5 of the binomial prediction",
        _every(lambda s: all(0.6 < a / b < 1.5 for a, b in zip(s.spread.sd, s.spread.binomial))),
        lambda F: F.spread.within,
        kind="law",
    ),
    Claim(
        "update-raises-right",
        "one step raised the right answer's probability, on every seed",
        _every(lambda s: s.update.adv_right > 0 and s.update.after > s.update.before),
        kind="law",
    ),
    Claim(
        "all-right-group-is-silent",
        "a group that is all right has all-zero advantages",
        lambda F: F.try_it[-1]["advantages"] == (0.0,) * 4,
        kind="law",
    ),
    Claim(
        "main-lifts",
        "main raises the held-out expected reward on every seed",
        lambda F: F.main.lift_min > 0,
        lambda F: F.main.lift_min,
        kind="law",
    ),
)
