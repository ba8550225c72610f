"""A run's settings in words: the recipe of ``base`` and ``main``, and what each named run changes.

Used by the page "The world at a glance" (:mod:`rlbook.analysis.glance`):
its recipe callout says what ``base`` and ``main`` do, and its table of runs
says how each run departs from the run it is compared with. Nothing is typed
per run: :data:`WORDS` says each setting of :class:`PretrainConfig`,
:class:`SFTConfig` and :class:`RLConfig` in words, and the words of a run are
computed from its configuration. A setting is left out where it does not act
(CISPO's cap in a PPO run, the KL estimator without a penalty) and, in a
recipe, at a value that changes nothing (rewards scaled by 1, no faults).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from rlbook.core.config import Guard, RLConfig
from rlbook.core.rewards import ShapedVerifier
from rlbook.core.train import PretrainConfig, SFTConfig


def _never(value: Any) -> bool:
    return False


def _always(config: Any) -> bool:
    return True


@dataclass(frozen=True)
class Phrase:
    """How one setting is said.

    ``say`` turns the setting's value into words; a recipe leaves the setting
    out where ``quiet(value)`` holds (a value that changes nothing), and every
    list of words leaves it out where ``acts(config)`` is false (the other
    settings give it no effect).
    """

    say: Callable[[Any], str]
    quiet: Callable[[Any], bool] = _never
    acts: Callable[[Any], bool] = _always


WORLD_WORDS = {
    "single": "the single-step world (a+b, one digit each)",
    "multi": "the multi-step world (a+b+c, with both partial sums)",
    "worked": "the worked world (two-digit a+b, answered directly or with its columns)",
}
"""Each world of :data:`rlbook.core.world.WORLDS` in words."""

LOSS_WORDS = {
    "pg": "the plain policy gradient (REINFORCE, no ratio)",
    "ppo": "PPO's clipped ratio",
    "cispo": "CISPO's capped ratio as a weight",
    "gspo": "GSPO's clipped ratio, one per answer",
}
"""Each loss of :data:`rlbook.core.losses.LOSSES` in words."""

AGGREGATION_WORDS = {
    "token_mean": "every generated token of the batch weighs the same",
    "seq_mean": "each answer's tokens averaged first, then the answers",
    "constant": "token losses summed and divided by a constant",
}
"""Each aggregation of :data:`rlbook.core.losses.AGGREGATIONS` in words."""

ADVANTAGE_WORDS = {
    "centered": "advantage: reward minus the group's mean",
    "group_std": "advantage: reward minus the group's mean, over the group's standard deviation",
    "batch_std": "advantage: reward minus the group's mean, over the batch's standard deviation",
    "rloo": "advantage: reward minus the mean of the rest of the group",
}
"""Each advantage of :data:`rlbook.core.advantages.ADVANTAGE_METHODS` in words."""

KL_WORDS = {
    "k3": "the KL estimated per token by k3",
    "k3-ratio": "the KL estimated per token by k3 times the importance ratio",
}
"""Each estimator of :data:`rlbook.core.losses.KL_ESTIMATORS` in words."""

VERIFIER_WORDS = {
    "exact": "rewarded by the exact verifier",
    "fail-open": "rewarded by the fail-open verifier",
    "exact+process": f"rewarded by the exact verifier plus {ShapedVerifier().weight:g} × the process score",
    "judge": "rewarded by the learned judge's probability",
}
"""Each verifier an :class:`RLConfig` can name in words."""

SELECTION_WORDS = {"none": "learns from every rollout", "accepted": "learns only from accepted rollouts"}
"""Each selection rule of :data:`rlbook.core.config.SELECTIONS` in words."""

OVERLONG_WORDS = {
    "none": "answers the budget cuts off scored like any other",
    "filter": "answers the budget cuts off left out of the loss",
    "shape": "DAPO's length penalty added to every reward",
}
"""Each treatment of long answers of :data:`rlbook.core.config.OVERLONG` in words."""

FAULT_WORDS = {
    "verifier_outage": "the verifier down",
    "verifier_timeout": "the verifier hanging",
    "malformed_burst": "a burst of malformed answers",
    "nan_loss": "a non-finite loss",
}
"""Each planned fault of :data:`rlbook.core.config.FAULT_KINDS` in words."""


def _steps(steps: list[int]) -> str:
    """Steps as runs of consecutive numbers: [8] is "step 8", [8, 10, 11, 12] is "steps 8 and 10 to 12"."""
    runs: list[list[int]] = []
    for step in sorted(steps):
        if runs and step == runs[-1][-1] + 1:
            runs[-1].append(step)
        else:
            runs.append([step])
    parts = [str(r[0]) if len(r) == 1 else f"{r[0]} to {r[-1]}" for r in runs]
    listed = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    return ("step " if len(steps) == 1 else "steps ") + listed


def faults_words(faults: tuple) -> str:
    """A run's planned faults (chapter 5's ``faults`` and ``abort``), kind by kind in the order they first come:
    "the verifier down at step 8, ..."; the glance page's table of runs shows them."""
    if not faults:
        return "no planned faults"
    by_kind: dict[str, list[int]] = {}
    for step, kind in faults:
        by_kind.setdefault(kind, []).append(step)
    return ", ".join(f"{FAULT_WORDS[kind]} at {_steps(steps)}" for kind, steps in by_kind.items())


def guard_words(guard: Guard) -> str:
    """The response policy (chapter 5's guard) in words: when a batch is excluded and when the run stops."""
    return (
        f"a batch more than {guard.max_malformed_rate:.0%} malformed is excluded, and "
        f"{guard.abort_after} excluded or paused batches in a row stop the run"
    )


WORDS: dict[type, Mapping[str, Phrase | None]] = {
    PretrainConfig: {
        "world": Phrase(lambda w: "equations of " + WORLD_WORDS[w]),
        "steps": Phrase(lambda n: f"{n:,} steps" if n else "none of its own (the parent's pretrained policy)"),
        "batch": Phrase(lambda n: f"batches of {n} windows"),
        "block_size": Phrase(lambda n: f"windows of {n} characters"),
        "lr": Phrase(lambda lr: f"learning rate {lr:g}"),
        "warmup": Phrase(lambda n: f"{n} warm-up steps" if n else "no warm-up"),
        "space_prob": Phrase(lambda p: f"a space in each gap of a line with probability {p:g}", quiet=lambda p: p == 0),
        "chain_share": Phrase(lambda s: f"{s:.0%} of the lines three-term chains", acts=lambda c: c.world == "multi"),
        "parts": None,  # how a batch is shared out over threads, not what is learned
        "d_model": Phrase(lambda n: f"a policy {n} wide"),
        "rope": Phrase(lambda r: "rotary positions" if r else "learned positions"),
    },
    SFTConfig: {
        "steps": Phrase(lambda n: f"{n} full-batch steps on the SFT examples"),
        "lr": Phrase(lambda lr: f"learning rate {lr:g}"),
        "replay": Phrase(lambda r: f"plus {r:g} × a loss on replayed pretraining text" if r else "no replay"),
        "replay_batch": Phrase(lambda n: f"{n} replayed windows a step", acts=lambda c: c.replay > 0),
        "max_grad_norm": Phrase(lambda g: "no gradient clipping" if g is None else f"gradient norm clipped to {g:g}"),
        "worked_share": Phrase(
            lambda s: f"{s:.0%} of the examples in the worked style", acts=lambda c: c.worked_share is not None
        ),
    },
    RLConfig: {
        "world": Phrase(lambda w: WORLD_WORDS[w]),
        "steps": Phrase(lambda n: f"{n} steps"),
        "group_size": Phrase(lambda n: f"groups of {n} answers"),
        "prompts_per_step": Phrase(lambda n: f"{n} prompts a step" if n else "every training prompt at every step"),
        "temperature": Phrase(lambda t: f"sampled at temperature {t:g}"),
        "budget": Phrase(lambda n: f"answers of at most {n} characters"),
        "lr": Phrase(lambda lr: f"learning rate {lr:g}"),
        "warmup": Phrase(lambda n: f"{n} warm-up steps" if n else "no warm-up"),
        "loss": Phrase(lambda name: LOSS_WORDS[name]),
        "eps_low": Phrase(lambda e: f"lower clip bound 1 - {e:g}", acts=lambda c: c.loss in ("ppo", "gspo")),
        "eps_high": Phrase(lambda e: f"upper clip bound 1 + {e:g}", acts=lambda c: c.loss in ("ppo", "gspo")),
        "cispo_cap": Phrase(lambda cap: f"the ratio capped at {cap:g}", acts=lambda c: c.loss == "cispo"),
        "aggregation": Phrase(lambda name: AGGREGATION_WORDS[name]),
        "advantage": Phrase(lambda name: ADVANTAGE_WORDS[name]),
        "reward_scale": Phrase(lambda s: f"rewards times {s:g}", quiet=lambda s: s == 1),
        "kl_beta": Phrase(lambda b: f"a KL penalty of weight {b:g} to the starting policy" if b else "no KL penalty"),
        "kl_estimator": Phrase(lambda name: KL_WORDS[name], acts=lambda c: c.kl_beta > 0),
        "updates_per_batch": Phrase(lambda n: "one update per batch" if n == 1 else f"{n} updates per batch"),
        "verifier": Phrase(lambda name: VERIFIER_WORDS[name]),
        "verifier_version": Phrase(lambda v: f"verifier version {v}", quiet=lambda v: v is None),
        "stale": Phrase(lambda n: f"learns from the batch sampled {n} steps earlier", quiet=lambda n: n == 0),
        "selection": Phrase(lambda name: SELECTION_WORDS[name], quiet=lambda name: name == "none"),
        "refill_rounds": Phrase(
            lambda n: f"zero-variance groups dropped and refilled in up to {n} rounds", quiet=lambda n: n == 0
        ),
        "overlong": Phrase(lambda name: OVERLONG_WORDS[name], quiet=lambda name: name == "none"),
        "overlong_cache": Phrase(
            lambda n: f"the length penalty over the budget's last {n} characters", acts=lambda c: c.overlong == "shape"
        ),
        "checkpoint_every": Phrase(lambda n: f"a checkpoint every {n} steps"),
        "eval_n": Phrase(lambda n: f"each checkpoint scored on {n} samples per held-out prompt"),
        "faults": Phrase(faults_words, quiet=lambda f: not f),
        "guard": Phrase(guard_words, quiet=lambda g: g == Guard()),
    },
}
"""Each setting of each stage's configuration in words; None for a setting that changes how fast, not what."""


Stage = PretrainConfig | SFTConfig | RLConfig
"""The configuration of one stage of a run: pretraining, SFT or RL."""


def _phrases(config: Stage) -> list[tuple[str, Phrase]]:
    words = WORDS[type(config)]
    return [(f.name, p) for f in dataclasses.fields(config) if (p := words[f.name]) is not None]


def recipe_words(config: Stage) -> list[str]:
    """Every setting of one stage's configuration that acts, in words, leaving out values that change nothing
    (the glance page's recipe callout)."""
    found = []
    for name, phrase in _phrases(config):
        value = getattr(config, name)
        if phrase.acts(config) and not phrase.quiet(value):
            found.append(phrase.say(value))
    return found


def change_words(before: Stage, after: Stage) -> list[str]:
    """What ``after`` does differently from ``before`` (two configurations of one stage), in words (the glance
    page's table of runs).

    A setting is said where its value changed and it acts in ``after``, or
    where it acts in ``after`` and did not in ``before`` (CISPO's cap, once
    the loss is CISPO).
    """
    if type(before) is not type(after):
        raise TypeError(f"{type(before).__name__} and {type(after).__name__} are different stages")
    found = []
    for name, phrase in _phrases(after):
        old, new = getattr(before, name), getattr(after, name)
        if phrase.acts(after) and (old != new or not phrase.acts(before)):
            found.append(phrase.say(new))
    return found
