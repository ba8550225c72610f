"""Hand-made policies whose probabilities the tests can write down."""

from __future__ import annotations

import math

import torch

from rlbook.core.policy import Policy, PolicyConfig
from rlbook.core.world import STOI, VOCAB


def random_policy(seed: int = 0) -> Policy:
    """A freshly initialised policy, seeded."""
    torch.manual_seed(seed)
    return Policy(PolicyConfig())


def constant_policy(probs: dict[str, float]) -> Policy:
    """A policy whose next-character distribution is ``probs`` whatever the context.

    The final LayerNorm is made to output a fixed unit vector, so the logits
    are one column of the read-out: log-probabilities we can write down.
    """
    policy = random_policy()
    logits = torch.full((len(VOCAB),), -30.0)
    for ch, p in probs.items():
        logits[STOI[ch]] = math.log(p)
    with torch.no_grad():
        policy.ln_f.weight.zero_()
        policy.ln_f.bias.zero_()
        policy.ln_f.bias[0] = 1.0
        policy.head.weight.zero_()
        policy.head.weight[:, 0] = logits
    return policy
