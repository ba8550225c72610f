"""Chapter 4's facts (chapters/04-update-choices.qmd): the choices in the update, taken one at a time.

Every number and range of the chapter, the choices of its outcome-dependent
sentences (:mod:`rlbook.book._update_words`, worded in the page), and the
data its figures and tables draw: importance ratios after several steps on
one batch of ``ppo``, what PPO's clip and CISPO's cap do to them, the update
choices of :data:`rlbook.analysis.credit.COMPARISON` compared on seeds 0 to
2, and what a reward scale does to one update under AdamW and SGD. The
chapter shows seed 0's batch; its claims are checked on every seed where the
prose makes them of every seed.
"""

from __future__ import annotations

import numpy as np

from rlbook.analysis import credit, kl_estimators
from rlbook.book import _update_words as words
from rlbook.book import phrasing
from rlbook.book._shown import shown_seed
from rlbook.book.claims import Claim, every_seed
from rlbook.book.facts import Num
from rlbook.book.needs import Need, on_seeds
from rlbook.runs import MAIN, load, spec

PAGE = "chapters/04-update-choices.qmd"

BINS = np.linspace(-1.5, 1.5, 31)
"""Edges of the ratio histograms, in log10 of the ratio (ratios beyond them count in the outer bins)."""
SCALE = 10.0
"""The reward scale whose effect on one update the chapter measures (the ``reward-x10`` run's)."""


def needs(seeds: tuple[int, ...]) -> tuple[Need, ...]:
    return on_seeds(credit.COMPARED, seeds)


def _last_step() -> int:
    """The ablations' length: ``main`` is cut there, so every run is compared over the same steps."""
    cfg = spec(credit.COMPARED[1]).rl
    assert cfg is not None  # the compared runs are RL runs
    return cfg.steps


def _drift(seed: int, reuse: int, cap: float) -> dict:
    """Ratios after 1 to ``2 * reuse`` steps on ``ppo``'s first batch of ``seed``, and what the run logged."""
    ppo = load("ppo", seed)
    drift = credit.ratio_drift(ppo, step=1, updates=2 * reuse, eps=MAIN.eps_low, cap=cap)
    shown = (1, reuse, 2 * reuse)
    return {
        "outside": drift.outside_ppo,
        "clipped": drift.ppo_clipped,
        "capped": drift.cispo_capped,
        "logged": ppo.metrics[0]["clip_fraction"],
        "tokens": len(drift.ratios[0]),
        "histograms": [{"steps": k, "clipped": drift.ppo_clipped[k - 1], **drift.histogram(k, BINS)} for k in shown],
    }


def _panels(curves: dict[str, credit.Curves]) -> list[dict]:
    """The comparison figure's data: per question, each run's held-out mean and range; then the KL of reused runs."""

    def heldout(name: str) -> dict:
        c = curves[name]
        return {
            "run": name,
            "steps": c.eval_steps,
            "mean": np.nanmean(c.heldout, 0),
            "low": np.nanmin(c.heldout, 0),
            "high": np.nanmax(c.heldout, 0),
            "disguise": name in credit.DISGUISES,
        }

    def kl(name: str) -> dict:
        c = curves[name]
        return {"run": name, "steps": np.arange(1, c.kl.shape[1] + 1), "median": np.nanmedian(c.kl, 0)}

    panels = [
        {"title": question, "kind": "heldout", "series": [heldout(n) for n in names]}
        for question, names in credit.panels().items()
    ]
    return [*panels, {"title": "KL to the base", "kind": "kl", "series": [kl(n) for n in ("main", *credit.REUSED)]}]


def _lost(curves: dict[str, credit.Curves], margin: float, seeds: tuple[int, ...]) -> dict[str, list[int]]:
    """The runs that *lost a seed*, each with the seeds it lost: those the guard stopped, and those that ended more
    than ``margin`` below main's worst seed."""
    worst = float(curves["main"].final.min())
    lost = {}
    for name, c in curves.items():
        ends = zip(seeds, c.heldout[:, -1], strict=True)  # NaN where the guard stopped the seed before the end
        below = {s for s, end in ends if not np.isnan(end) and float(end) < worst - margin}
        where = sorted(set(c.stopped) | below)
        if name != "main" and where:
            lost[name] = where
    return lost


def _stops(curves: dict[str, credit.Curves]) -> list[dict]:
    """What each seed the guard stopped did before the stop, from its log: its run, its seed and its story."""
    return [
        {"run": name, "seed": seed, **credit.stop_story(load(name, seed))}
        for name in credit.REUSED
        for seed in curves[name].stopped
    ]


COLLAPSE = 0.5
"""A seed collapsed at the first checkpoint where its held-out expected reward fell below this share of its start."""


def collapses(curve: credit.Curves, seeds: tuple[int, ...]) -> list[dict]:
    """Where each seed of ``curve`` collapsed (:data:`COLLAPSE`): the seed, the checkpoint before and the one at
    which it fell, with their values; seeds that never fell that far are left out."""
    found = []
    for seed, row in zip(seeds, curve.heldout):
        for j in range(1, len(row)):
            if not np.isnan(row[j]) and row[j] < COLLAPSE * row[0]:
                steps = curve.eval_steps
                found.append(
                    {
                        "seed": seed,
                        "from_step": int(steps[j - 1]),
                        "from": float(row[j - 1]),
                        "step": int(steps[j]),
                        "to": float(row[j]),
                    }
                )
                break
    return found


def equal_updates(ppo: credit.Curves, main_evals: list[list[dict]], reuse: int) -> dict | None:
    """``ppo`` and ``main`` after the same number of optimiser steps: the most that both reached at a checkpoint.

    ``ppo`` takes ``reuse`` optimiser steps per batch and ``main`` one, so
    ``ppo``'s step s is ``main``'s step s * reuse. ``main_evals`` are the
    evaluations of ``main``'s full run on each seed, past the comparison's
    last step. None when no count beyond the start is shared. A ``ppo`` seed
    the guard stopped before the checkpoint is left out of its mean. ``order``
    is "above" when every seed of ``ppo`` is above every seed of ``main``,
    "below" when every one is below, and "overlapping" otherwise.
    """
    main_steps = set.intersection(*({int(e["step"]) for e in evals} for evals in main_evals))
    shared = [int(s) * reuse for s in ppo.eval_steps if s > 0 and int(s) * reuse in main_steps]
    if not shared:
        return None
    updates = max(shared)
    at = ppo.heldout[:, list(ppo.eval_steps).index(updates // reuse)]
    ppo_values = at[~np.isnan(at)]
    main_values = np.array(
        [next(e["heldout_expected_reward"] for e in ev if e["step"] == updates) for ev in main_evals]
    )
    if ppo_values.min() > main_values.max():
        order = "above"
    elif ppo_values.max() < main_values.min():
        order = "below"
    else:
        order = "overlapping"
    return {
        "updates": updates,
        "ppo_step": updates // reuse,
        "ppo": float(ppo_values.mean()),
        "main": float(main_values.mean()),
        "order": order,
    }


def _kl_toy() -> dict:
    """k1, k2 and k3 worked out exactly on :mod:`rlbook.analysis.kl_estimators`' toy: the table, the figures the
    prose prints, and what each gradient is, by estimator and samples (``"k3|fresh"``) and for k1 in the reward."""
    toy = kl_estimators.toy()
    rows = kl_estimators.table(toy)
    truths = kl_estimators.true_gradients(toy)
    by = {f"{r['estimator']}|{r['samples']}": r for r in rows}

    def shown(value: float) -> float:
        """Rounded as the table prints it, a rounding of zero printed without a sign."""
        return round(value, 3) + 0.0

    return {
        "outcomes": phrasing.number_word(len(toy.logits)),
        "kl": Num(float(kl_estimators.kl(toy.pi, toy.ref)), ".3f"),
        "table": [{**r, **{k: shown(r[k]) for k in ("mean", "bias", "gradient error")}} for r in rows],
        "bias": {key: r["bias"] for key, r in by.items()},
        "gradient_of": {key: r["gradient of"] for key, r in by.items()},
        "k2_bias": Num(by["k2|fresh"]["bias"], "+.3f"),
        "k3_reused_bias": Num(by["k3|reused"]["bias"], "+.3f"),
        "k3_fresh_error": Num(by["k3|fresh"]["gradient error"], ".0%"),
        "k3_reused_error": Num(by["k3|reused"]["gradient error"], ".0%"),
        "reward_of": {
            samples: kl_estimators.gradient_of(kl_estimators.reward_gradient(toy, samples), truths)
            for samples in kl_estimators.SAMPLES
        },
        "true": kl_estimators.TARGETS[0],
        "reverse": kl_estimators.TARGETS[1],
        "zero": kl_estimators.TARGETS[2],
    }


UNCLIPPED = ("pg",)
"""The losses of :data:`rlbook.core.losses.LOSSES` that neither clip nor cap a token: their share is 0 by design."""


def _results(curves: dict[str, credit.Curves]) -> list[dict]:
    """:func:`rlbook.analysis.credit.results_table` as chapter 4's Table 4.2 shows it.

    Its ``clipped`` share counts, under PPO's loss, the tokens whose
    gradient the clip removed, and under CISPO's, those whose weight the cap
    lowered; the column is named for both, and a loss of :data:`UNCLIPPED`
    gets None (a dash) instead of a share that cannot be anything but 0.
    """
    rows = []
    for row in credit.results_table(curves):
        cfg = spec(row["run"]).rl
        assert cfg is not None  # the compared runs are RL runs
        shown = None if cfg.loss in UNCLIPPED else row["clipped"]
        rows.append(
            {("clipped or capped" if k == "clipped" else k): (shown if k == "clipped" else v) for k, v in row.items()}
        )
    return rows


def _seed_kl(curves: dict[str, credit.Curves]) -> dict[str, list[float]]:
    """Each run's median KL to the base over the final steps, seed by seed (NaN for a seed that did not get there)."""
    return {
        name: [float(np.nanmedian(k)) if not np.isnan(k).all() else float("nan") for k in c.kl[:, -10:]]
        for name, c in curves.items()
    }


def _versus(curves: dict[str, credit.Curves], pairs: tuple[tuple[str, str], ...]) -> dict[str, str]:
    return {f"{a}|{b}": credit.versus(curves, a, b) for a, b in pairs}


PAIRS = (
    ("ppo", "main"),
    ("cispo", "ppo"),
    ("ppo-kl", "ppo"),
    ("ppo-kl-ratio", "ppo-kl"),
    ("seq-mean", "main"),
    ("group-std", "main"),
)
"""The pairs of runs the chapter sets against each other, each worded by :func:`rlbook.analysis.credit.versus`."""


def compute(seeds: tuple[int, ...]) -> dict:
    """Every fact of chapter 4 on ``seeds`` (the ratio histograms for :data:`SHOWN`)."""
    ppo_cfg, cispo_cfg, kl_cfg = spec("ppo").rl, spec("cispo").rl, spec("ppo-kl").rl
    assert ppo_cfg is not None and cispo_cfg is not None and kl_cfg is not None  # RL runs of the catalogue
    reuse, cap = ppo_cfg.updates_per_batch, cispo_cfg.cispo_cap
    last = _last_step()
    drifts = {seed: _drift(seed, reuse, cap) for seed in seeds}
    shown = drifts[shown_seed(seeds)]
    curves = credit.update_curves(credit.COMPARED, seeds=seeds, last_step=last)
    gaps = credit.rounding_gaps(curves)
    margin = credit.lost_margin(gaps)
    lost_where = _lost(curves, margin, seeds)
    lost = list(lost_where)
    kl = {name: c.recent_kl() for name, c in curves.items()}
    final = {name: Num(float(c.final.mean()), ".3f") for name, c in curves.items()}
    worst = {name: float(c.final.min()) for name, c in curves.items()}
    spikes = credit.kl_spikes(curves["cispo"])
    scale = {seed: credit.scale_effect(load("main", seed), scale=SCALE) for seed in seeds}
    never = {seed: max(load("main", seed).metric("clip_fraction")) for seed in seeds}
    penalised = {name for name in credit.COMPARED if (cfg := spec(name).rl) is not None and cfg.kl_beta}
    return {
        "seeds": list(seeds),
        "shown": shown_seed(seeds),
        "reuse": reuse,
        "twice": 2 * reuse,
        "cap": Num(cap, "g"),
        "eps": Num(MAIN.eps_low, "g"),
        "beta": Num(kl_cfg.kl_beta, "g"),
        "last": last,
        "group": MAIN.group_size,
        "scale": Num(SCALE, "g"),
        "n_seeds": phrasing.number_word(len(seeds)),
        "drift": {
            "by_seed": drifts,
            "bins": BINS,
            "histograms": shown["histograms"],
            "ratio_drift": words.ratio_drift(shown["outside"], reuse),
            "cap_binds": words.cap_binds(shown["capped"], shown["tokens"], cap, reuse),
            "before_steps": phrasing.number_word(reuse - 1),
            "clipped_reuse": Num(shown["clipped"][reuse - 1], ".1%"),
            "clipped_before": Num(shown["clipped"][reuse - 2], ".1%"),
            "logged": Num(shown["logged"], ".1%"),
        },
        "main_clip": never,
        "settings": credit.settings_table(credit.COMPARED),
        "results": _results(curves),
        "per_seed": credit.seed_table(curves),
        "panels": _panels(curves),
        "agreed": credit.agreed_until(curves),
        "first": int(curves["main"].eval_steps[1]),
        "agreed_with_main": words.agreed(
            credit.agreed_until(curves), int(curves["main"].eval_steps[1]), credit.AGREEMENT
        ),
        "gaps": {name: {"early": Num(early, ".3f"), "late": Num(late, ".3f")} for name, (early, late) in gaps.items()},
        "margin": Num(margin, ".3f"),
        "floor": Num(credit.LOST_FLOOR, "g"),
        "late_gap": Num(max(late for _, late in gaps.values()), ".3f"),
        "n_variants": phrasing.number_word(len(credit.COMPARED) - 1),
        "lost": lost,
        "lost_seeds": words.lost_seeds(lost_where, credit.REUSED, last, seeds),
        "stops": words.stops(_stops(curves)),
        "ppo_lost": "ppo" in lost,
        "single_lost": [n for n in lost if n not in credit.REUSED],
        "kl": {name: Num(v, ".3f") for name, v in kl.items()},
        "kl_values": kl,
        "furthest": words.furthest(kl, _seed_kl(curves), penalised, seeds),
        "final": final,
        "worst": worst,
        "penalty": words.penalty(
            collapses(curves["ppo-kl"], seeds),
            float(np.nanmin(curves["ppo-kl"].heldout[:, 1:])),
            curves["ppo-kl"].heldout[:, 0].tolist(),
            seeds,
        ),
        "collapses": collapses(curves["ppo-kl"], seeds),
        "ppo_updates": last * reuse,
        "equal_updates": words.compared(
            equal_updates(curves["ppo"], [load("main", seed).evals for seed in seeds], reuse), MAIN.steps
        ),
        "kl_ratio_finals": phrasing.in_order([f"{v:.3f}" for v in curves["ppo-kl-ratio"].final]),
        "kl_finals": phrasing.in_order([f"{v:.3f}" for v in curves["ppo-kl"].final]),
        "versus": _versus(curves, PAIRS),
        "separation": Num(credit.separation_chance(len(seeds), len(seeds)), ".1f"),
        "spikes": [{**r, "largest KL": f"{r['largest KL']:,.0f}"} for r in spikes],
        "spike_peak": Num(max(r["largest KL"] for r in spikes), ",.0f"),
        "scale_effect": scale,
        "adam_ratio": Num(scale[shown_seed(seeds)]["adam_norm_ratio"], ".4f"),
        "adam_cosine": Num(scale[shown_seed(seeds)]["adam_cosine"], ".4f"),
        "sgd_ratio": Num(scale[shown_seed(seeds)]["sgd_norm_ratio"], ".2f"),
        "kl_toy": _kl_toy(),
    }


def _every(key):
    """A check that ``key(facts, seed)`` holds on every seed of the facts."""
    return every_seed(key)


CLAIMS = (
    Claim(
        "replay-matches-ppo-log",
        "replayed, ppo's first batch clips what the ppo run logged for its step 1",
        _every(lambda F, s: abs(F.drift.by_seed[s].clipped[F.reuse - 2] - F.drift.by_seed[s].logged) < 0.01),
        lambda F: [(d.clipped[F.reuse - 2], d.logged) for d in F.drift.by_seed.values()],
        kind="law",
    ),
    Claim(
        "cispo-binds-less",
        "CISPO's cap binds on fewer tokens than PPO's clip, after every number of steps",
        _every(lambda F, s: max(F.drift.by_seed[s].capped) < min(F.drift.by_seed[s].clipped)),
        lambda F: [(max(d.capped), min(d.clipped)) for d in F.drift.by_seed.values()],
        kind="law",
    ),
    Claim(
        "clip-within-region",
        "PPO clips no more tokens than lie outside its region",
        _every(lambda F, s: all(o >= c for o, c in zip(F.drift.by_seed[s].outside, F.drift.by_seed[s].clipped))),
        kind="law",
    ),
    Claim(
        "drift-slower-than-steps",
        "the ratios drift much more slowly than the steps add up",
        _every(lambda F, s: F.drift.by_seed[s].outside[-1] < F.reuse * F.drift.by_seed[s].outside[0]),
        lambda F: [(d.outside[0], d.outside[-1]) for d in F.drift.by_seed.values()],
        kind="law",
    ),
    Claim(
        "main-never-clips",
        "with one update per batch PPO's clip never acts in main",
        _every(lambda F, s: F.main_clip[s] == 0.0),
        lambda F: F.main_clip,
        kind="law",
    ),
    Claim(
        "reuse-travels-further",
        "reusing a batch travels further from the base than main",
        lambda F: min(F.kl_values["ppo"], F.kl_values["cispo"]) > F.kl_values["main"],
        lambda F: F.kl_values,
        kind="law",
    ),
    Claim(
        "one-update-loses-no-seed",
        "no run with one update per batch lost a seed",
        lambda F: not F.single_lost,
        lambda F: F.lost,
        kind="law",
    ),
    Claim(
        "reuse-alone-loses-no-seed",
        "ppo, which only adds reuse, lost no seed",
        lambda F: not F.ppo_lost,
        lambda F: F.lost,
        kind="law",
    ),
    Claim(
        "k1-k3-unbiased",
        "on the toy k1 and k3 average to the KL on fresh samples and, with the ratio, on reused ones; k3 alone not",
        lambda F: (
            all(abs(F.kl_toy.bias[k]) < 1e-12 for k in ("k1|fresh", "k3|fresh", "k1|reused, ratio", "k3|reused, ratio"))
            and abs(F.kl_toy.bias["k3|reused"]) > 1e-3
        ),
        lambda F: F.kl_toy.bias,
        kind="law",
    ),
    Claim(
        "k3-loss-follows-reverse-kl",
        "on the toy k3 as a loss has the gradient of KL(π_ref‖π) on fresh samples and of neither KL on reused ones",
        lambda F: (
            F.kl_toy.gradient_of["k3|fresh"] == F.kl_toy.reverse
            and F.kl_toy.gradient_of["k3|reused"] not in (F.kl_toy.true, F.kl_toy.reverse)
        ),
        lambda F: F.kl_toy.gradient_of,
        kind="law",
    ),
    Claim(
        "ratio-gives-true-gradient",
        "on the toy k1 and k3 times the ratio have the gradient of KL(π‖π_ref) on reused samples",
        lambda F: all(F.kl_toy.gradient_of[f"{k}|reused, ratio"] == F.kl_toy.true for k in ("k1", "k3")),
        lambda F: F.kl_toy.gradient_of,
        kind="law",
    ),
    Claim(
        "k1-loss-has-no-gradient",
        "on the toy k1 as a loss on fresh samples has a mean gradient of zero, k2 that of KL(π‖π_ref)",
        lambda F: (
            F.kl_toy.gradient_of["k1|fresh"] == F.kl_toy.zero and F.kl_toy.gradient_of["k2|fresh"] == F.kl_toy.true
        ),
        lambda F: F.kl_toy.gradient_of,
        kind="law",
    ),
    Claim(
        "k1-in-reward-true-gradient",
        "on the toy k1 in the reward reaches the weights with the gradient of KL(π‖π_ref), fresh or reused with ratio",
        lambda F: all(F.kl_toy.reward_of[s] == F.kl_toy.true for s in ("fresh", "reused, ratio")),
        lambda F: F.kl_toy.reward_of,
        kind="law",
    ),
    Claim(
        "adam-absorbs-scale",
        "under AdamW a reward scale of 10 all but cancels",
        _every(lambda F, s: abs(F.scale_effect[s].adam_norm_ratio - 1) < 0.01),
        lambda F: [e.adam_norm_ratio for e in F.scale_effect.values()],
        kind="law",
    ),
    Claim(
        "sgd-passes-scale",
        "under SGD a reward scale of 10 makes the step 10 times longer",
        _every(lambda F, s: abs(F.scale_effect[s].sgd_norm_ratio - 10) < 0.01),
        lambda F: [e.sgd_norm_ratio for e in F.scale_effect.values()],
        kind="law",
    ),
)
