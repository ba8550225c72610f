"""Chapter 10's facts (chapters/10-preferences-dpo.qmd): pairs, a Bradley–Terry reward model, DPO against ``main``.

Every number of the chapter and the data its figure draws. On each seed the
learners of :mod:`rlbook.runs.preference` are trained on pairs of ``base``'s
answers and set beside ``main``, which samples as many answers in its run
as the pairs were made from, each from its policy of the moment:

- held-out accuracy of ``main`` and of the three DPO learners;
- how the log-probabilities of the pairs' chosen and rejected answers moved
  under ``main`` and under ``dpo``;
- how often each learner ranks a held-out pair as the verifier does: the
  reward models by their scores, DPO by its implicit reward;
- the answers DPO writes after training that its pairs never held: the
  answers it had no verdict on.

Its claims are in :mod:`rlbook.book._preference_claims`.
"""

from __future__ import annotations

from statistics import mean
from typing import Any

import torch

from rlbook.book import phrasing, store
from rlbook.book._preference_claims import CLAIMS, RANKED, WRONG  # noqa: F401  (rlbook.book reads CLAIMS here)
from rlbook.book._shown import shown_seed
from rlbook.book.facts import Facts, dumps
from rlbook.book.needs import Need, on_seeds
from rlbook.core import rewards as rw
from rlbook.core.policy import Policy
from rlbook.core.preferences import Pairs, implicit_reward, reward_scores, sequence_logprobs
from rlbook.core.sampling import sample
from rlbook.core.world import split
from rlbook.runs import DEFAULT_THREADS, MAIN, load
from rlbook.runs import preference as pref

PAGE = "chapters/10-preferences-dpo.qmd"

POLICIES = ("dpo", "dpo-noisy", "dpo-small-beta")
"""The DPO learners, in the order the chapter meets them."""
MODELS = ("bt", "bt-noisy")
"""The Bradley–Terry reward models."""
SAMPLES = 16
"""Answers per training prompt sampled from a trained policy to find the answers its pairs never held."""
EXERCISE_PAIRS = 8
"""How many of the shown seed's pairs the exercises hand the reader, with their log-probabilities."""


def needs(seeds: tuple[int, ...]) -> tuple[Need, ...]:
    return on_seeds(("base", "main"), seeds)


def _moved(policy: Policy, reference: Policy, pairs: Pairs) -> dict[str, float]:
    """Mean change of log pi of the pairs' chosen and rejected answers from ``reference`` to ``policy``."""
    with torch.no_grad():
        moved = {
            side: sequence_logprobs(policy, pairs.prompt_ids, answers)
            - sequence_logprobs(reference, pairs.prompt_ids, answers)
            for side, answers in (("chosen", pairs.chosen), ("rejected", pairs.rejected))
        }
    return {side: float(change.mean()) for side, change in moved.items()}


def _ranked(chosen: torch.Tensor, rejected: torch.Tensor) -> float:
    """The share of pairs whose chosen answer scores strictly above the rejected one."""
    return float((chosen > rejected).double().mean())


def _keys(prompt_ids: torch.Tensor, tokens: torch.Tensor) -> list[bytes]:
    """One key per (prompt, answer) row, equal for equal rows."""
    rows = torch.cat([prompt_ids, tokens], dim=1).to(torch.int16).numpy()
    return [row.tobytes() for row in rows]


def _unseen(policy: Policy, pairs: Pairs, seed: int) -> dict[str, float]:
    """Of ``SAMPLES`` answers per training prompt from ``policy``: the share its pairs never held, and the share
    of those that are wrong."""
    held = set(_keys(pairs.prompt_ids, pairs.chosen)) | set(_keys(pairs.prompt_ids, pairs.rejected))
    prompts = [t.prompt for t in split("train")]
    gen = torch.Generator().manual_seed(11_000 + seed)
    batch = sample(policy, prompts, n=SAMPLES, temperature=MAIN.temperature, budget=MAIN.budget, generator=gen)
    right = rw.score(rw.get_verifier("exact"), batch.prompts, batch.completions())[0] >= 1.0
    new = [k not in held for k in _keys(batch.prompt_ids, batch.tokens)]
    unseen = [r for r, n in zip(right.tolist(), new) if n]
    return {
        "share": len(unseen) / len(new),
        "wrong": (len(unseen) - sum(unseen)) / len(unseen) if unseen else float("nan"),
        "count": len(unseen),
    }


def _exercise(seed: int, pairs: Pairs, dpo: Policy) -> dict[str, Any]:
    """The first :data:`EXERCISE_PAIRS` pairs' log-probabilities under ``base`` and ``dpo``, as plain lists."""
    base = load("base", seed).policy()
    few = Pairs(
        pairs.prompt_ids[:EXERCISE_PAIRS],
        pairs.chosen[:EXERCISE_PAIRS],
        pairs.rejected[:EXERCISE_PAIRS],
        pairs.swapped[:EXERCISE_PAIRS],
        0,
        0,
        0,
    )
    with torch.no_grad():
        logp = {
            f"{who}_{side}": sequence_logprobs(policy, few.prompt_ids, answers).tolist()
            for who, policy in (("policy", dpo), ("ref", base))
            for side, answers in (("chosen", few.chosen), ("rejected", few.rejected))
        }
    return {**logp, "beta": pref.learner("dpo").cfg.beta}


def _seed(seed: int) -> Facts:
    """One seed's measurements (:func:`_measure`), kept in the facts cache on their own.

    The audit reads each seed in several groups (all ten seeds, their
    triples, each seed alone for the exercises); kept so, the learners of a
    seed train once, whatever group asks for them.
    """
    needs = on_seeds(("base", "main"), (seed,))
    key = store.facts_key(__name__, (seed,), DEFAULT_THREADS, needs)
    entry = store.entry_path("preference-learners", (seed,), DEFAULT_THREADS, key)
    return store.fetch(entry, needs, DEFAULT_THREADS, lambda: dumps(_measure(seed)))


def _measure(seed: int) -> dict[str, Any]:
    """One seed: every learner trained and measured beside ``main``."""
    base, main = load("base", seed).policy(), load("main", seed)
    clean, heldout = pref.pairs(seed), pref.heldout_pairs(seed)
    batch = MAIN.group_size * len(split("train"))
    policies: dict[str, dict[str, Any]] = {}
    dpo_policy = base
    for name in POLICIES:
        policy, curve = pref.train_policy(name, seed)
        with torch.no_grad():
            ranked = _ranked(
                *(
                    implicit_reward(
                        sequence_logprobs(policy, heldout.prompt_ids, answers),
                        sequence_logprobs(base, heldout.prompt_ids, answers),
                        pref.learner(name).cfg.beta,
                    )
                    for answers in (heldout.chosen, heldout.rejected)
                )
            )
        policies[name] = {
            "steps": [s for s, _ in curve],
            "accuracy": [a for _, a in curve],
            "end": curve[-1][1],
            "moved": _moved(policy, base, clean),
            "ranked": ranked,
            "unseen": _unseen(policy, clean, seed),
        }
        if name == "dpo":
            dpo_policy = policy
    models = {}
    for name in MODELS:
        model = pref.train_reward_model(name, seed)
        with torch.no_grad():
            models[name] = {
                "ranked": _ranked(
                    *(reward_scores(model, heldout.prompt_ids, a) for a in (heldout.chosen, heldout.rejected))
                )
            }
    steps = [e["step"] for e in main.evals]
    accuracy = [e["heldout_expected_reward"] for e in main.evals]
    return {
        "pairs": {
            "count": len(clean),
            "sampled": clean.sampled,
            "silent": clean.silent / clean.groups,
            "heldout": len(heldout),
            "swapped": float(pref.pairs(seed, pref.learner("dpo-noisy").cfg.noise).swapped.double().mean()),
        },
        "main": {
            "steps": steps,
            "answers": [s * batch for s in steps],
            "accuracy": accuracy,
            "start": accuracy[0],
            "end": accuracy[-1],
            "moved": _moved(main.policy(), base, clean),
            "unseen": _unseen(main.policy(), clean, seed),
        },
        "policies": policies,
        "models": models,
        "exercise": _exercise(seed, clean, dpo_policy),
    }


def _each(by_seed: dict, seeds: tuple[int, ...], value, fmt: str = ".3f") -> str:
    """One value per seed, in seed order, for a sentence."""
    return phrasing.in_order([format(value(by_seed[s]), fmt) for s in seeds])


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
            **{f"{name} (reward model)": f"{d['models'][name]['ranked']:.1%}" for name in MODELS},
            **{f"{name} (implicit reward)": f"{d['policies'][name]['ranked']:.1%}" for name in POLICIES},
        }
        for s in seeds
        for d in [by_seed[s]]
    ]
    return {"accuracy": accuracy, "moved": moved, "ranked": ranked}


def compute(seeds: tuple[int, ...]) -> dict[str, Any]:
    """Every seed's measurements, the page's numbers, and the figure's data."""
    by_seed = {s: _seed(s) for s in seeds}
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
