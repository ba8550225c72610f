"""The same rollouts judged by two versions of a verifier (chapter 8's reward versioning).

When a verifier changes between two evaluations, their difference mixes a
change of policy with a change of rule. Re-scoring the very same samples
under each version separates the two:

- :func:`rescore` and :func:`version_rows`: an evaluation judged again, and
  the before/after gain under every pairing of two verifiers;
- :func:`version_flips`: how many samples change reward between versions;
- :func:`training_flips` and :func:`changed_advantages`: the same for the
  rollouts a run trained on, and how many of their advantages a change of
  version would have moved.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import torch

from rlbook.analysis import audit
from rlbook.core import rewards as rw
from rlbook.core.advantages import compute_advantages
from rlbook.core.evaluate import EvalResult
from rlbook.core.stats import difference_ci


def label(verifier) -> str:
    """How an evaluation's settings name a verifier: ``"exact@1.0"``."""
    return f"{verifier.name}@{verifier.version}"


def rescore(result: EvalResult, verifier) -> EvalResult:
    """The same completions judged by another verifier (or version): new rewards and statuses, same samples."""
    flat_prompts = [t.prompt for t, row in zip(result.tasks, result.completions) for _ in row]
    flat = [c for row in result.completions for c in row]
    rewards, statuses = rw.score(verifier, flat_prompts, flat)
    n = result.rewards.shape[1]
    return replace(
        result,
        rewards=rewards.reshape(result.rewards.shape),
        statuses=[statuses[i * n : (i + 1) * n] for i in range(len(result.tasks))],
        settings=dict(result.settings, verifier=label(verifier)),
    )


def version_rows(before: EvalResult, after: EvalResult, verifiers: tuple = (), seed: int = 0) -> list[dict]:
    """The before/after gain for every pairing of two verifiers, exact 1.0 and 2.0 unless told (chapter 8).

    Rows: the verifier that scored each side (``"name@version"``), whether it
    is the same one, the two expected rewards and the difference with a
    paired interval. Rows with mixed verifiers are what a report gets when
    the verifier changed between the two evaluations.
    """
    verifiers = verifiers or (rw.ExactVerifier("1.0"), rw.ExactVerifier("2.0"))
    scored = {
        (side, i): rescore(result, v)
        for side, result in (("before", before), ("after", after))
        for i, v in enumerate(verifiers)
    }
    names = [label(v) for v in verifiers]
    rows = []
    for ib in range(len(verifiers)):
        for ia in range(len(verifiers)):
            b, a = scored["before", ib], scored["after", ia]
            rows.append(
                {
                    "before_verifier": names[ib],
                    "after_verifier": names[ia],
                    "same_verifier": ia == ib,
                    "before": b.expected_reward,
                    "after": a.expected_reward,
                    "difference": difference_ci(a.per_prompt, b.per_prompt, paired=True, seed=seed),
                }
            )
    return rows


def version_flips(result: EvalResult, old, new) -> int:
    """How many samples of ``result`` get a different reward from verifier ``new`` than from ``old``."""
    return int((rescore(result, old).rewards != rescore(result, new).rewards).sum())


def training_flips(run, old, new) -> dict[int, int]:
    """Per training step of ``run``: how many stored rollouts ``new`` rewards differently from ``old`` (only steps with any)."""
    flips = {}
    for stored in run.rollouts:
        batch = audit.from_stored(stored)
        changed = int((batch.rescored(old).rewards != batch.rescored(new).rewards).sum())
        if changed:
            flips[stored["step"]] = changed
    return flips


def changed_advantages(run, old, new) -> dict[str, int]:
    """What training ``run`` against ``new`` instead of ``old`` would have changed in its batches (exercise 8.5).

    Each step's stored rollouts are judged by both verifiers and turned into
    advantages by the run's own method (its record's ``advantage.method``).
    Returns the rollouts whose reward differs (``flipped``), the groups that
    hold at least one of them (``groups``), and the rollouts whose advantage
    differs (``advantages``): with a group-mean baseline one changed reward
    moves the baseline, so every answer of its group gets a new advantage.
    """
    method = run.record["advantage"]["method"]
    flipped = groups = moved = 0
    for stored in run.rollouts:
        batch = audit.from_stored(stored)
        shape = (-1, batch.group_size)
        r_old = batch.rescored(old).rewards.reshape(shape)
        r_new = batch.rescored(new).rewards.reshape(shape)
        a_old = compute_advantages(torch.as_tensor(r_old, dtype=torch.float32), method).numpy()
        a_new = compute_advantages(torch.as_tensor(r_new, dtype=torch.float32), method).numpy()
        flipped += int((r_old != r_new).sum())
        groups += int((r_old != r_new).any(axis=1).sum())
        moved += int((~np.isclose(a_old, a_new, rtol=0, atol=1e-6)).sum())
    return {"flipped": flipped, "groups": groups, "advantages": moved}
