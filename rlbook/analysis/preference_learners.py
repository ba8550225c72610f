"""Chapter 10's measurements of one seed: the learners from pairs trained and set beside ``main``.

:func:`measure` trains the learners of :mod:`rlbook.runs.preference` on
pairs of ``base``'s answers and sets them beside ``main``, which samples as
many answers in its run as the pairs were made from, each from its policy of
the moment:

- held-out accuracy of ``main`` and of the three DPO learners;
- how the log-probabilities of the pairs' chosen and rejected answers moved
  under ``main`` and under each DPO learner (:func:`_moved`);
- how often each learner ranks a held-out pair as the verifier does: the
  reward models by their scores, DPO by its implicit reward; and how often
  a reward model ranks its own training pairs so (``fitted``: the clean
  pairs, whichever it was trained on), which sets what it fitted beside
  what carried over to new prompts;
- the answers a policy writes after training that its pairs never held:
  the answers it had no verdict on (:func:`_unseen`).

:mod:`rlbook.book.preference` keeps each seed's measurements in the facts
cache, keyed on this module's code and not on the chapter's claims, so
rewording a claim trains no learner again.
"""

from __future__ import annotations

from typing import Any

import torch

from rlbook.core import rewards as rw
from rlbook.core.policy import Policy
from rlbook.core.preferences import Pairs, implicit_reward, pair_logprobs, reward_scores, sequence_logprobs
from rlbook.core.sampling import sample
from rlbook.core.world import split
from rlbook.runs import MAIN, load
from rlbook.runs import preference as pref

POLICIES = ("dpo", "dpo-noisy", "dpo-small-beta")
"""The DPO learners, in the order the chapter meets them."""
MODELS = ("bt", "bt-noisy")
"""The Bradley–Terry reward models."""
SAMPLES = 16
"""Answers per training prompt sampled from a trained policy to find the answers its pairs never held."""
EXERCISE_PAIRS = 8
"""How many of the shown seed's pairs the exercises hand the reader, with their log-probabilities."""


def _moved(policy: Policy, pairs: Pairs, before: tuple[torch.Tensor, torch.Tensor]) -> dict[str, float]:
    """Mean change of log pi of the pairs' chosen and rejected answers from ``before`` (the reference's, as
    :func:`rlbook.core.preferences.pair_logprobs` reads them) to ``policy``."""
    after = pair_logprobs(policy, pairs)
    return {side: float((now - then).mean()) for side, now, then in zip(("chosen", "rejected"), after, before)}


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


def measure(seed: int) -> dict[str, Any]:
    """One seed: every learner trained and measured beside ``main``."""
    base, main = load("base", seed).policy(), load("main", seed)
    clean, heldout = pref.pairs(seed), pref.heldout_pairs(seed)
    before, heldout_before = pref.base_logprobs(seed), pair_logprobs(base, heldout)
    batch = MAIN.group_size * len(split("train"))
    policies: dict[str, dict[str, Any]] = {}
    dpo_policy = base
    for name in POLICIES:
        policy, curve = pref.train_policy(name, seed)
        beta = pref.learner(name).cfg.beta
        ranked = _ranked(
            *(implicit_reward(now, then, beta) for now, then in zip(pair_logprobs(policy, heldout), heldout_before))
        )
        policies[name] = {
            "steps": [s for s, _ in curve],
            "accuracy": [a for _, a in curve],
            "end": curve[-1][1],
            "moved": _moved(policy, clean, before),
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
                where: _ranked(*(reward_scores(model, pairs.prompt_ids, a) for a in (pairs.chosen, pairs.rejected)))
                for where, pairs in (("ranked", heldout), ("fitted", clean))
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
            "moved": _moved(main.policy(), clean, before),
            "unseen": _unseen(main.policy(), clean, seed),
        },
        "policies": policies,
        "models": models,
        "exercise": _exercise(seed, clean, dpo_policy),
    }
