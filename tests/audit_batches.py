"""Small audit batches and stored steps worked by hand (tests of rlbook.analysis.audit)."""

from __future__ import annotations

import torch

from rlbook.analysis import audit
from rlbook.core import rewards as rw
from rlbook.core.world import EOT_ID, encode

P1, P2 = "U:3+4?|A:", "U:5+5?|A:"


def batch(prompts, completions, verifier="exact", group_size=4, step=None):
    """An audit batch of the given completions, judged by the named verifier."""
    rows = [p for p in prompts for _ in range(group_size)]
    rewards, statuses = rw.score(rw.get_verifier(verifier), rows, completions)
    return audit.AuditBatch(rows, completions, statuses, rewards, group_size, step)


def stored(step, prompts, completions, verifier="exact", used=None, budget=4):
    """A stored per-step rollout dict, laid out as rlbook.core.rl keeps it."""
    rows = [p for p in prompts for _ in range(len(completions) // len(prompts))]
    rewards, statuses = rw.score(rw.get_verifier(verifier), rows, completions)
    tokens = torch.full((len(completions), budget), EOT_ID, dtype=torch.uint8)
    for i, text in enumerate(completions):
        tokens[i, : len(text)] = torch.tensor(encode(text), dtype=torch.uint8)
    return {
        "step": step,
        "prompts": list(prompts),
        "tokens": tokens,
        "lengths": torch.tensor([len(c) for c in completions], dtype=torch.uint8),
        "rewards": torch.tensor(rewards, dtype=torch.float32),
        "statuses": torch.tensor([rw.STATUSES.index(s) for s in statuses], dtype=torch.uint8),
        "used": torch.ones(len(completions), dtype=torch.bool) if used is None else torch.tensor(used),
    }


# Group 1 (3+4): right, right again, wrong, malformed.
# Group 2 (5+5): wrong, budget-stopped, wrong again, right.
EIGHT = ["7#", "7#", "8#", "7,7#", "11#", "10", "11#", "10#"]
