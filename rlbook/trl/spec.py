"""What a TRL run of the book's task is and what it leaves (appendix): :class:`TRLSpec`, :data:`DEMO`, :class:`TRLRun`.

Types only, apart from the trainer and the audit, so that both import them
and neither imports the other: :mod:`rlbook.trl.trainer` makes a
:class:`TRLRun`, which :mod:`rlbook.trl.audit` and :mod:`rlbook.trl.tables` read.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from rlbook.core.config import RLConfig
from rlbook.core.policy import Policy, PolicyConfig
from rlbook.runs.catalogue import MAIN
from rlbook.runs.run import metric_over_steps


@dataclass(frozen=True)
class TRLSpec:
    """A named TRL run of the book's task: an rlbook configuration, its batch and its evaluation (appendix)."""

    name: str
    rl: RLConfig = MAIN
    prompts_per_step: int = 0
    eval_every: int = 0
    base: str = "base"


DEMO = TRLSpec("trl-main", replace(MAIN, steps=20), eval_every=10)
"""The appendix's run: the first 20 steps of ``main`` (60 prompts x 16 samples), evaluated every 10 steps as ``main`` is."""


@dataclass
class TRLRun:
    """A finished TRL run in the shapes of :class:`rlbook.runs.Run` (appendix).

    ``metrics``: one dict per optimizer step, rlbook's metric names
    (:func:`rlbook.trl.audit.metrics_from_log`); ``rollouts``: per-step stored
    rollouts as in ``Run.rollouts`` (:func:`rlbook.trl.audit.stored_rollouts`);
    ``evals``: rlbook's independent checkpoint evaluations
    (:func:`rlbook.core.loop.checkpoint_eval`); ``log_history``: TRL's own
    ``trainer.state.log_history``; ``captured``: what
    :class:`rlbook.trl.trainer.VerifierReward` kept; ``checkpoints``: step,
    version, weights hash and weights; ``config``: the ``GRPOConfig``
    arguments given; ``step_seconds``: wall time of each optimizer step;
    ``processes``: one entry per process, in rank order, saying what it trained
    on (:func:`rlbook.trl.trainer.process_summary`).
    """

    spec: TRLSpec
    seed: int
    threads: int
    log_history: list[dict]
    captured: list[dict]
    metrics: list[dict]
    rollouts: list[dict]
    evals: list[dict]
    checkpoints: list[dict]
    config: dict
    base_policy: dict
    step_seconds: list[float]
    wall_seconds: float
    versions: dict
    processes: list[dict] = field(default_factory=list)

    @property
    def steps(self) -> list[int]:
        """The evaluated checkpoint steps."""
        return [c["step"] for c in self.checkpoints]

    def policy(self, step: int | None = None) -> Policy:
        """The policy at checkpoint ``step`` (default: the last) as an rlbook Policy."""
        chosen = self.checkpoints[-1] if step is None else next(c for c in self.checkpoints if c["step"] == step)
        policy = Policy(PolicyConfig(**chosen["config"]))
        policy.load_state_dict(chosen["state"])
        policy.version = chosen["version"]
        return policy

    def eval_at(self, step: int) -> dict:
        """The independent evaluation at checkpoint ``step``."""
        return next(e for e in self.evals if e["step"] == step)

    def metric(self, key: str) -> list:
        """One metric over the steps, None where a step did not log it, as a book run's (:class:`rlbook.runs.Run`)."""
        return metric_over_steps(self.metrics, key)
