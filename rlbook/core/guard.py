"""The response policy of the RL loop (chapter 4): a verifier that fails or hangs is recorded, not raised; a batch
with too many malformed rollouts is excluded; too many excluded batches in a row abort the run. The faults that
chapter 4's runs inject are named here too.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

from . import rewards as rw
from .sampling import Rollouts
from .world import EOT_ID, STOI

if TYPE_CHECKING:
    from .rl import RLConfig

FAULT_KINDS = ("verifier_outage", "verifier_timeout", "malformed_burst", "nan_loss")


@dataclass(frozen=True)
class Guard:
    """The response policy: when a batch is excluded, updates paused, or the run aborted (chapter 4)."""

    max_malformed_rate: float = 0.5
    max_verifier_error_rate: float = 0.1
    verifier_timeout_s: float = 2.0
    abort_after: int = 3


def score_guarded(verifier, rollouts: Rollouts, timeout_s: float, fault: str | None = None):
    """Rewards and statuses, with a crash or a time-out of the verifier recorded, never raised.

    Returns ``(rewards, statuses, error)``: on failure every rollout is
    ``unverifiable`` with reward 0 and ``error`` says what happened.
    """
    def run():
        if fault == "verifier_outage":
            raise ConnectionError("injected fault: verifier service unavailable")
        if fault == "verifier_timeout":
            time.sleep(timeout_s * 1.5)
        return rw.score(verifier, rollouts.prompts, rollouts.completions())

    outcome: dict = {}

    def guarded():
        try:
            outcome["value"] = run()
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
    return Rollouts(rollouts.prompts, rollouts.prompt_ids, tokens, rollouts.logprobs, mask,
                    rollouts.policy_version, dict(rollouts.settings, corrupted=int(hit.sum())))


def intervene(log: dict, step: int, kind: str, reason: str, metric: str, value: float, threshold: float,
               affected: int) -> None:
    log["interventions"].append({"step": step, "kind": kind, "reason": reason,
                                 "trigger": {"metric": metric, "value": float(value), "threshold": float(threshold)},
                                 "affected_rollouts": int(affected)})


def guard_batch(cfg: RLConfig, log: dict, step: int, statuses: list[str], error: str | None) -> bool:
    """Apply the response policy to a scored batch; True when the batch may be learned from."""
    n = len(statuses)
    if error is not None:
        rate = statuses.count("unverifiable") / n
        intervene(log, step, "updates paused", error, "verifier_error_rate", rate,
                   cfg.guard.max_verifier_error_rate, n)
        return False
    malformed = statuses.count("malformed") / n
    if malformed > cfg.guard.max_malformed_rate:
        intervene(log, step, "batch excluded", "malformed rollouts above the limit", "malformed_rate", malformed,
                   cfg.guard.max_malformed_rate, statuses.count("malformed"))
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
    return {kind for at, kind in cfg.faults if at == step}
