"""The configuration of an RL run: every choice of :class:`RLConfig`, and the response policy :class:`Guard`.

Types below the code that reads them: the RL loop (:mod:`rlbook.core.rl`),
the response policy (:mod:`rlbook.core.guard`), the run catalogue and the
TRL bridge all import their configuration from here, so none of them needs
another for its types. Chapters 3 to 5 name these fields; the run record
(chapter 8) writes them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import advantages as adv_lib
from . import losses
from . import rewards as rw
from .choices import check_choice
from .reward_model import JudgeVerifier
from .world import BUDGET, WORLDS

FAULT_KINDS = ("verifier_outage", "verifier_timeout", "malformed_burst", "nan_loss")
"""The faults an :class:`~rlbook.core.rl.RLConfig` can plan at a step (``faults=((step, kind), ...)``, chapter 4):
the verifier down or hanging (:class:`FaultyVerifier`), a burst of malformed rollouts (:func:`corrupt`), a
non-finite loss (the loop poisons the batch's advantages)."""


@dataclass(frozen=True)
class Guard:
    """The response policy: when a batch is excluded, updates paused, or the run aborted (chapter 4).

    - ``max_malformed_rate``: a batch with a larger share of malformed rollouts is excluded;
    - ``max_verifier_error_rate``: the threshold recorded when a verifier error pauses the updates (any error
      pauses them: every rollout of the batch is then unverifiable);
    - ``verifier_timeout_s``: how long the loop waits for the verifier before it counts as hung;
    - ``abort_after``: that many excluded or paused batches in a row abort the run.
    """

    max_malformed_rate: float = 0.5
    max_verifier_error_rate: float = 0.1
    verifier_timeout_s: float = 2.0
    abort_after: int = 3


def check_faults(faults: tuple) -> None:
    """Raise ValueError unless ``faults`` is a tuple of ``(step, kind)`` pairs, each kind one of :data:`FAULT_KINDS`."""
    for entry in faults:
        if not (isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[0], int)):
            raise ValueError(f"RLConfig.faults holds (step, kind) pairs, not {entry!r}")
        if entry[1] not in FAULT_KINDS:
            raise ValueError(f"RLConfig.faults: {entry[1]!r} is not one of {FAULT_KINDS}")


OVERLONG = ("none", "filter", "shape")
"""What :attr:`RLConfig.overlong` does with long answers (DAPO, Yu et al. 2025; chapter 9): nothing, leave the
answers the budget cut off out of the loss (``"filter"``), or add DAPO's soft length penalty to every reward
(``"shape"``, :func:`rlbook.core.overlong.length_penalty`)."""

SELECTIONS = ("none", "accepted")
"""The selection rules of :attr:`RLConfig.selection`: learn from every rollout, or only from the accepted ones."""


@dataclass(frozen=True)
class RLConfig:
    """Every choice of an RL run.

    The book's runs do not rest on the defaults: ``main``'s settings are
    written out in full in the catalogue (:data:`rlbook.runs.catalogue.MAIN`),
    and every other run of the book is ``main`` or another named setting with
    a change. The defaults are where a reader's own run starts.

    A choice field refuses any value but those listed (ValueError naming the
    field and the values, :mod:`rlbook.core.choices`). The fields:

    - ``world``: the task, ``"single"`` (a+b), ``"multi"`` (a+b+c) or ``"worked"`` (a+b= with a, b from 10 to 99,
      answered directly or with its working) (:data:`rlbook.core.world.WORLDS`);
    - ``steps``: RL steps; ``group_size``: answers sampled per prompt (G);
    - ``prompts_per_step``: prompts drawn per step, 0 for every training prompt;
    - ``temperature``: the sampling temperature; ``budget``: the token budget of an answer;
    - ``lr``: AdamW's learning rate after ``warmup`` steps of linear warm-up (:func:`warmup_lr`);
    - ``loss``: the token loss, one of :data:`rlbook.core.losses.LOSSES` (``"pg"``, ``"ppo"``, ``"cispo"``,
      ``"gspo"``);
    - ``eps_low``, ``eps_high``: the clip range of PPO (per token) and GSPO (per answer); ``cispo_cap``: CISPO's
      cap on the ratio;
    - ``aggregation``: how token losses become one number (:data:`rlbook.core.losses.AGGREGATIONS`);
    - ``advantage``: the group baseline (:data:`rlbook.core.advantages.ADVANTAGE_METHODS`);
    - ``reward_scale``: a factor on every reward before the advantages;
    - ``kl_beta``: weight of the KL penalty to the starting policy (0: logged only);
    - ``kl_estimator``: the penalty's estimator, one of :data:`rlbook.core.losses.KL_ESTIMATORS`
      (``"k3"``, or ``"k3-ratio"``, k3 weighted by the importance ratio);
    - ``updates_per_batch``: gradient steps on each batch;
    - ``verifier``, ``verifier_version``: the reward (:data:`rlbook.core.rewards.VERIFIERS` and the
      verifier's ``VERSIONS``; None for its default version);
    - ``stale``: the update learns from the batch sampled that many steps earlier;
    - ``selection``: one of :data:`SELECTIONS` (``"accepted"`` learns only from accepted rollouts);
    - ``refill_rounds``: DAPO's dynamic sampling: groups whose rewards are all equal are dropped and up to that
      many rounds of new groups are sampled to refill the batch (0: off; :mod:`rlbook.core.refill`);
    - ``overlong``, ``overlong_cache``: one of :data:`OVERLONG`, and the length penalty's ramp in tokens;
    - ``checkpoint_every``: steps between checkpoints (each one evaluated, :func:`checkpoint_eval`);
    - ``eval_n``: samples per prompt in a checkpoint's evaluation;
    - ``faults``: ``(step, kind)`` pairs of faults to inject, kinds from :data:`rlbook.core.guard.FAULT_KINDS`;
    - ``guard``: the response policy (:class:`rlbook.core.guard.Guard`).
    """

    world: str = "single"
    steps: int = 100
    group_size: int = 16
    prompts_per_step: int = 0
    temperature: float = 1.0
    budget: int = BUDGET
    lr: float = 3e-4
    warmup: int = 10
    loss: str = "ppo"
    eps_low: float = 0.2
    eps_high: float = 0.2
    cispo_cap: float = 4.0
    aggregation: str = "token_mean"
    advantage: str = "centered"
    reward_scale: float = 1.0
    kl_beta: float = 0.0
    kl_estimator: str = "k3"
    updates_per_batch: int = 1
    verifier: str = "exact"
    verifier_version: str | None = None
    stale: int = 0
    selection: str = "none"
    refill_rounds: int = 0
    overlong: str = "none"
    overlong_cache: int = 4
    checkpoint_every: int = 10
    eval_n: int = 32
    faults: tuple = ()
    guard: Guard = field(default_factory=Guard)

    def __post_init__(self) -> None:
        check_choice(self, "world", WORLDS)
        check_choice(self, "loss", losses.LOSSES)
        check_choice(self, "aggregation", losses.AGGREGATIONS)
        check_choice(self, "advantage", adv_lib.ADVANTAGE_METHODS)
        check_choice(self, "kl_estimator", losses.KL_ESTIMATORS)
        # "judge": chapter 4's learned judge, which the runs' cache builds from its weights (rlbook.core.reward_model)
        check_choice(self, "verifier", (*rw.VERIFIERS, JudgeVerifier.name))
        if self.verifier_version is not None and self.verifier in rw.VERIFIERS:
            check_choice(self, "verifier_version", rw.VERIFIERS[self.verifier].VERSIONS)
        check_choice(self, "selection", SELECTIONS)
        check_choice(self, "overlong", OVERLONG)
        if self.refill_rounds < 0:
            raise ValueError(f"RLConfig.refill_rounds counts rounds of sampling, not {self.refill_rounds!r}")
        if self.overlong == "shape" and not 0 < self.overlong_cache <= self.budget:
            raise ValueError(
                f"RLConfig.overlong_cache is the length penalty's ramp, from 1 to the budget ({self.budget}) tokens, "
                f"not {self.overlong_cache!r}"
            )
        check_faults(self.faults)

    def loss_params(self) -> dict:
        """The settings of the chosen loss: PPO's and GSPO's clip range, CISPO's cap, none for the policy gradient."""
        if self.loss in ("ppo", "gspo"):
            return {"eps_low": self.eps_low, "eps_high": self.eps_high}
        if self.loss == "cispo":
            return {"cap_high": self.cispo_cap}
        return {}
