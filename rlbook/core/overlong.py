"""DAPO's two answers to answers the token budget cuts off: leave them out of the loss, or shape the reward by length.

An answer that runs into the budget ends without its end mark and is
scored ``incomplete`` (reward 0): its group learns that it was wrong, when it
may only have been long. DAPO (Yu et al. 2025) offers two remedies, which
chapter 9 runs in the worked world, where a worked answer is long:

- ``"filter"``: the cut-off answers keep their reward in their group's
  baseline but leave the loss (:func:`filtered`; TRL's
  ``mask_truncated_completions``);
- ``"shape"``: every answer's reward gets :func:`length_penalty` added, a
  ramp from 0 to -1 over the last ``overlong_cache`` tokens of the budget, so
  the policy is told it is getting long before it is cut off (TRL's
  ``get_soft_overlong_punishment``).
"""

from __future__ import annotations

import numpy as np
import torch

from .config import RLConfig
from .sampling import Rollouts


def length_penalty(lengths: torch.Tensor, budget: int, cache: int) -> np.ndarray:
    """DAPO's soft overlong punishment of answers of ``lengths`` tokens (Yu et al. 2025, eq. 13) (chapter 9).

    0 up to ``budget - cache`` tokens, then ``((budget - cache) - length) / cache``,
    falling linearly to -1 at the budget. An answer the budget cut off has
    the budget's length and gets -1. (The paper's third case, longer than
    the budget, cannot happen here: sampling stops at the budget.)
    """
    start = budget - cache
    over = (lengths.double() - start).clamp(min=0)
    return (-over / cache).numpy()


def shaped(cfg: RLConfig, rewards: np.ndarray, rollouts: Rollouts) -> np.ndarray:
    """``rewards`` with :func:`length_penalty` added under ``cfg.overlong == "shape"``; unchanged otherwise."""
    if cfg.overlong != "shape":
        return rewards
    return rewards + length_penalty(rollouts.lengths, cfg.budget, cfg.overlong_cache)


def filtered(cfg: RLConfig, used: torch.Tensor, rollouts: Rollouts) -> torch.Tensor:
    """The rows the update learns from: under ``cfg.overlong == "filter"``, ``used`` without the cut-off answers."""
    if cfg.overlong != "filter":
        return used
    return used & rollouts.ended
