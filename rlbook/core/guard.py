"""The response policy of the RL loop (chapter 4): a verifier that fails or hangs is recorded, not raised; a batch
with too many malformed rollouts is excluded; too many excluded batches in a row abort the run.

The faults chapter 4's runs inject (:data:`FAULT_KINDS`) are injected from outside the code they test: a
:class:`FaultyVerifier` wraps the run's verifier, and the run's hooks (:mod:`rlbook.core.interventions`) corrupt a batch
or poisons a loss; :func:`score_guarded` and the update never know that a fault was planned.
"""

from __future__ import annotations

import threading
import time

import numpy as np
import torch

from . import rewards as rw
from .config import FAULT_KINDS, Guard, RLConfig, check_faults
from .events import intervention
from .sampling import Rollouts
from .world import EOT_ID, STOI

__all__ = [
    "FAULT_KINDS",
    "MALFORMED_BURST",
    "FaultyVerifier",
    "Guard",
    "check_faults",
    "corrupt",
    "faults_at",
    "guard_batch",
    "intervene",
    "score_guarded",
    "trailing_exclusions",
]

MALFORMED_BURST = 0.8
"""The share of a batch's rollouts that a ``malformed_burst`` fault corrupts."""


class FaultyVerifier:
    """A verifier with a planned fault (chapter 4): ``verifier_outage`` raises, ``verifier_timeout`` hangs.

    A hang lasts one and a half times ``timeout_s``, once, then the wrapped
    verifier judges as usual: :func:`score_guarded` must give up on it first.
    """

    def __init__(self, verifier: rw.Verifier, fault: str, timeout_s: float):
        if fault not in ("verifier_outage", "verifier_timeout"):
            raise ValueError(f"a verifier fault is 'verifier_outage' or 'verifier_timeout', not {fault!r}")
        self.verifier, self.fault, self.timeout_s = verifier, fault, timeout_s
        self.hung = False

    def __call__(self, prompt: str, completion: str) -> rw.Verdict:
        if self.fault == "verifier_outage":
            raise ConnectionError("injected fault: verifier service unavailable")
        if not self.hung:
            self.hung = True
            time.sleep(self.timeout_s * 1.5)
        return self.verifier(prompt, completion)


def score_guarded(verifier, rollouts: Rollouts, timeout_s: float):
    """Rewards and statuses, with a crash or a time-out of the verifier recorded, never raised.

    Returns ``(rewards, statuses, error)``: on failure every rollout is
    ``unverifiable`` with reward 0 and ``error`` says what happened.
    """
    outcome: dict = {}

    def guarded():
        try:
            outcome["value"] = rw.score(verifier, rollouts.prompts, rollouts.completions())
        except Exception as err:  # noqa: BLE001 - any verifier failure becomes a recorded event
            outcome["error"] = f"verifier raised {type(err).__name__}: {err}"

    worker = threading.Thread(target=guarded, daemon=True)  # a hung verifier never keeps Python alive
    worker.start()
    worker.join(timeout_s)
    if "value" in outcome:
        rewards, statuses = outcome["value"]
        return rewards, statuses, None
    error = outcome.get("error", f"verifier timed out after {timeout_s:.1f} s")
    return np.zeros(len(rollouts)), ["unverifiable"] * len(rollouts), error


def corrupt(rollouts: Rollouts, share: float, gen: torch.Generator) -> Rollouts:
    """Inject a burst of malformed rollouts: a share of rows answer ``U`` then end (chapter 4 fault)."""
    hit = torch.rand(len(rollouts), generator=gen) < share
    tokens = rollouts.tokens.clone()
    mask = rollouts.mask.clone()
    tokens[hit] = EOT_ID
    tokens[hit, 0] = STOI["U"]
    mask[hit] = False
    mask[hit, :2] = True
    return Rollouts(
        rollouts.prompts,
        rollouts.prompt_ids,
        tokens,
        rollouts.logprobs,
        mask,
        rollouts.policy_version,
        dict(rollouts.settings, corrupted=int(hit.sum())),
    )


def intervene(
    log: dict, step: int, kind: str, reason: str, metric: str, value: float, threshold: float, affected: int
) -> None:
    """Append an :func:`intervention` to the run log."""
    log["interventions"].append(intervention(step, kind, reason, metric, value, threshold, int(affected)))


def guard_batch(cfg: RLConfig, log: dict, step: int, statuses: list[str], error: str | None) -> bool:
    """Apply the response policy to a scored batch; True when the batch may be learned from."""
    n = len(statuses)
    if error is not None:
        rate = statuses.count("unverifiable") / n
        intervene(log, step, "updates paused", error, "verifier_error_rate", rate, cfg.guard.max_verifier_error_rate, n)
        return False
    malformed = statuses.count("malformed") / n
    if malformed > cfg.guard.max_malformed_rate:
        intervene(
            log,
            step,
            "batch excluded",
            "malformed rollouts above the limit",
            "malformed_rate",
            malformed,
            cfg.guard.max_malformed_rate,
            statuses.count("malformed"),
        )
        return False
    return True


def trailing_exclusions(log: dict) -> int:
    """How many of the last steps in a row were excluded or paused (the abort rule's counter)."""
    count = 0
    for m in reversed(log["metrics"]):
        if not m["excluded"]:
            break
        count += 1
    return count


def faults_at(cfg: RLConfig, step: int) -> set[str]:
    """The kinds of fault ``cfg`` plans at ``step``."""
    return {kind for at, kind in cfg.faults if at == step}
