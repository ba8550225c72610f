"""Chapter 10's facts (chapters/10-preferences-dpo.qmd): pairs, a Bradley–Terry reward model, DPO against ``main``.

Every number of the chapter and the data its figure draws, from each seed's
measurements (:mod:`rlbook.analysis.preference_learners`): the learners from
pairs beside ``main``, in held-out accuracy, in how they moved the pairs'
answers, in how they rank held-out pairs, and in the answers they write that
no pair held.

Its claims are in :mod:`rlbook.book._preference_claims`.
"""

from __future__ import annotations

from statistics import mean
from typing import Any

from rlbook.analysis import preference_learners as pl
from rlbook.analysis.preference_learners import EXERCISE_PAIRS, MODELS, POLICIES, SAMPLES
from rlbook.book import phrasing, store
from rlbook.book._preference_claims import CLAIMS, RANKED, WRONG  # noqa: F401  (rlbook.book reads CLAIMS here)
from rlbook.book._shown import shown_seed
from rlbook.book.facts import Facts, dumps
from rlbook.book.needs import Need, on_seeds
from rlbook.runs import DEFAULT_THREADS, MAIN
from rlbook.runs import preference as pref

PAGE = "chapters/10-preferences-dpo.qmd"


def needs(seeds: tuple[int, ...]) -> tuple[Need, ...]:
    return on_seeds(("base", "main"), seeds)


def seed_part(seed: int) -> Facts:
    """One seed's measurements (:func:`rlbook.analysis.preference_learners.measure`), kept in the facts cache on
    their own.

    Keyed on the measuring module's code, not on this one's: rewording a
    claim trains no learner again. The audit reads each seed in several
    groups (its triples, each seed alone for the exercises), and the prefetch
    computes each seed's part as a task of its own; kept so, a seed's
    learners train once.
    """
    needs = on_seeds(("base", "main"), (seed,))
    key = store.facts_key(pl.__name__, (seed,), DEFAULT_THREADS, needs)
    entry = store.entry_path("preference-learners", (seed,), DEFAULT_THREADS, key)
    return store.fetch(entry, needs, DEFAULT_THREADS, lambda: dumps(pl.measure(seed)))


def _each(by_seed: dict, seeds: tuple[int, ...], value, fmt: str = ".3f") -> str:
    """One value per seed, in seed order, for a sentence."""
    return phrasing.in_order([format(value(by_seed[s]), fmt) for s in seeds])


def _spread(shares: list[float]) -> str:
    """How far apart the highest and lowest of ``shares`` lie, in words: "43 points", or "less than a point"."""
    points = 100 * (max(shares) - min(shares))
    return f"{points:.0f} points" if points >= 1 else "less than a point"


def _tables(by_seed: dict, seeds: tuple[int, ...]) -> dict[str, list[dict]]:
    """The chapter's tables, one row per seed (and learner)."""
    accuracy = [
        {
            "seed": s,
            "base": f"{d['main']['start']:.3f}",
            "main": f"{d['main']['end']:.3f}",
            **{name: f"{d['policies'][name]['end']:.3f}" for name in POLICIES},
        }
        for s in seeds
        for d in [by_seed[s]]
    ]
    moved = [
        {"run": name, "seed": s, "chosen (right)": f"{m['chosen']:+.2f}", "rejected (wrong)": f"{m['rejected']:+.2f}"}
        for name in ("main", "dpo", "dpo-small-beta")
        for s in seeds
        for m in [by_seed[s]["main"]["moved"] if name == "main" else by_seed[s]["policies"][name]["moved"]]
    ]
    ranked = [
        {
            "seed": s,
            "pairs": f"{d['pairs']['count']:,}",
            "bt (reward model)": f"{d['models']['bt']['ranked']:.1%}",
            "bt, its training pairs": f"{d['models']['bt']['fitted']:.1%}",
            **{f"{name} (reward model)": f"{d['models'][name]['ranked']:.1%}" for name in MODELS if name != "bt"},
            **{f"{name} (implicit reward)": f"{d['policies'][name]['ranked']:.1%}" for name in POLICIES},
        }
        for s in seeds
        for d in [by_seed[s]]
    ]
    return {"accuracy": accuracy, "moved": moved, "ranked": ranked}


def compute(seeds: tuple[int, ...]) -> dict[str, Any]:
    """Every seed's measurements, the page's numbers, and the figure's data."""
    by_seed = {s: seed_part(s) for s in seeds}
    shown = shown_seed(seeds)
    cfg = pref.learner("dpo").cfg
    return {
        "seeds": list(seeds),
        "shown": shown,
        "by_seed": by_seed,
        "seed_words": phrasing.listing(list(seeds)),
        "rounds": cfg.rounds,
        "group_size": cfg.group_size,
        "beta": cfg.beta,
        "small_beta": pref.learner("dpo-small-beta").cfg.beta,
        "noise": f"{pref.learner('dpo-noisy').cfg.noise:.0%}",
        "sampled": f"{by_seed[shown]['pairs']['sampled']:,}",
        "main_steps": MAIN.steps,
        "heldout_rounds": pref.HELDOUT_ROUNDS,
        "samples": SAMPLES,
        "silent": _each(by_seed, seeds, lambda d: d["pairs"]["silent"], ".0%"),
        "base_acc": _each(by_seed, seeds, lambda d: d["main"]["start"]),
        "main_acc": _each(by_seed, seeds, lambda d: d["main"]["end"]),
        "dpo_acc": _each(by_seed, seeds, lambda d: d["policies"]["dpo"]["end"]),
        "noisy_acc": _each(by_seed, seeds, lambda d: d["policies"]["dpo-noisy"]["end"]),
        "small_acc": _each(by_seed, seeds, lambda d: d["policies"]["dpo-small-beta"]["end"]),
        "heldout_pairs": _each(by_seed, seeds, lambda d: d["pairs"]["heldout"], ","),
        "bt_ranked": _each(by_seed, seeds, lambda d: d["models"]["bt"]["ranked"], ".1%"),
        "bt_noisy_ranked": _each(by_seed, seeds, lambda d: d["models"]["bt-noisy"]["ranked"], ".1%"),
        "bt_spread": _spread([by_seed[s]["models"]["bt"]["ranked"] for s in seeds]),
        "dpo_ranked": _each(by_seed, seeds, lambda d: d["policies"]["dpo"]["ranked"], ".1%"),
        "dpo_unseen": _each(by_seed, seeds, lambda d: d["policies"]["dpo"]["unseen"]["share"], ".1%"),
        "small_unseen": _each(by_seed, seeds, lambda d: d["policies"]["dpo-small-beta"]["unseen"]["share"], ".0%"),
        "wrong": f"{WRONG:.0%}",
        "ranked": f"{RANKED:.0%}",
        "dpo_unseen_wrong": _each(by_seed, seeds, lambda d: d["policies"]["dpo"]["unseen"]["wrong"], ".0%"),
        "main_unseen": _each(by_seed, seeds, lambda d: d["main"]["unseen"]["share"], ".1%"),
        "main_unseen_wrong": _each(by_seed, seeds, lambda d: d["main"]["unseen"]["wrong"], ".0%"),
        "main_chosen": _each(by_seed, seeds, lambda d: d["main"]["moved"]["chosen"], "+.2f"),
        "dpo_chosen": _each(by_seed, seeds, lambda d: d["policies"]["dpo"]["moved"]["chosen"], "+.2f"),
        "dpo_rejected": _each(by_seed, seeds, lambda d: d["policies"]["dpo"]["moved"]["rejected"], "+.2f"),
        "small_chosen": _each(by_seed, seeds, lambda d: d["policies"]["dpo-small-beta"]["moved"]["chosen"], "+.2f"),
        "mean_gap": mean(by_seed[s]["main"]["end"] - by_seed[s]["policies"]["dpo"]["end"] for s in seeds),
        "tables": _tables(by_seed, seeds),
        "exercise": by_seed[shown]["exercise"],
        "exercise_pairs": EXERCISE_PAIRS,
        "figures": {
            "main": {s: by_seed[s]["main"] for s in seeds},
            "dpo": {s: by_seed[s]["policies"]["dpo"] for s in seeds},
            "sampled": by_seed[shown]["pairs"]["sampled"],
        },
    }
