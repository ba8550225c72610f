"""TRL's own ``DPOTrainer._compute_loss`` against :func:`rlbook.core.preferences.dpo_loss`, loss and gradient.

TRL's loss reads per-token log-probabilities from its model's forward pass
(``outputs.log_probs``), sums each answer's over its completion mask, and
takes the reference's precomputed sums from the batch. Here a stand-in
model hands it random per-token log-probabilities (float64, zero outside the completion, as a model's
fused head gives them) for a batch of
chosen rows followed by rejected rows, as TRL lays them out; rlbook's loss
gets the same sums. Both are differentiated with respect to those
log-probabilities. The trainer's attributes are those ``DPOConfig``'s
defaults give a trainer with ``precompute_ref_log_probs=True``; only
``beta`` varies. Nothing here trains a run.
"""

from __future__ import annotations

from collections import defaultdict
from types import SimpleNamespace

import pytest
import torch

from rlbook.core.preferences import dpo_loss
from rlbook.runs import preference

trl = pytest.importorskip("trl")
from trl import DPOConfig, DPOTrainer

PAIRS, WIDTH = 5, 7


class _Accelerator:
    device = torch.device("cpu")

    @staticmethod
    def gather_for_metrics(x):
        return x

    @staticmethod
    def gather(x):
        return x


class _Model:
    """What ``_compute_loss`` reads of a model's output: per-token log-probs and the figures it logs.

    As a model's fused head does, it gives 0 where the label is -100
    (outside the completion), so the loss's sums cover the completion only.
    """

    training = True

    def __init__(self, log_probs: torch.Tensor):
        self.log_probs = log_probs

    def __call__(self, labels: torch.Tensor, **_):
        rows, steps = self.log_probs.shape
        return SimpleNamespace(
            log_probs=self.log_probs * (labels[:, 1:] != -100),
            entropy=torch.zeros(rows, steps, dtype=torch.float64),
            mean_logits=torch.zeros(rows, steps, dtype=torch.float64),
            is_top1=torch.zeros(rows, steps, dtype=torch.bool),
        )


def _config(**kwargs) -> DPOConfig:
    """A CPU-only ``DPOConfig`` with ``kwargs``: the rest of its fields are TRL's defaults."""
    return DPOConfig(output_dir="unused", use_cpu=True, bf16=False, fp16=False, report_to="none", **kwargs)


def _trainer(beta: float) -> SimpleNamespace:
    config = _config(beta=beta, precompute_ref_log_probs=True)
    return SimpleNamespace(
        model=_Model(torch.zeros(1, 1)),
        accelerator=_Accelerator(),
        aux_loss_enabled=False,
        ld_alpha=config.ld_alpha,
        precompute_ref_logps=True,
        f_divergence_type=config.f_divergence_type,
        loss_types=config.loss_type,
        loss_weights=config.loss_weights or [1.0] * len(config.loss_type),
        beta=config.beta,
        use_weighting=config.use_weighting,
        _metrics={"train": defaultdict(list), "eval": defaultdict(list)},
        _total_train_tokens=0,
        _tp_size=1,
    )


def _batch(gen: torch.Generator) -> tuple[dict, torch.Tensor, torch.Tensor]:
    """Inputs for TRL (chosen rows, then rejected), the per-token log-probs, and each row's completion mask."""
    prompt = 3
    lengths = torch.randint(1, WIDTH - prompt, (2 * PAIRS,), generator=gen)
    completion = torch.zeros(2 * PAIRS, WIDTH, dtype=torch.long)
    for row, n in enumerate(lengths.tolist()):
        completion[row, prompt : prompt + n] = 1
    log_probs = -torch.rand(2 * PAIRS, WIDTH - 1, generator=gen, dtype=torch.float64) * 3
    inputs = {
        "input_ids": torch.randint(0, 20, (2 * PAIRS, WIDTH), generator=gen),
        "attention_mask": torch.ones(2 * PAIRS, WIDTH, dtype=torch.long),
        "completion_mask": completion,
        "ref_chosen_logps": -torch.rand(PAIRS, generator=gen, dtype=torch.float64) * 8,
        "ref_rejected_logps": -torch.rand(PAIRS, generator=gen, dtype=torch.float64) * 8,
    }
    return inputs, log_probs, completion[:, 1:]


@pytest.mark.parametrize("beta", [preference.learner(n).cfg.beta for n in ("dpo", "dpo-small-beta")] + [0.5])
def test_trl_s_dpo_loss_is_rlbook_s_in_value_and_gradient(beta):
    gen = torch.Generator().manual_seed(int(beta * 100))
    inputs, log_probs, mask = _batch(gen)
    theirs_in = log_probs.clone().requires_grad_(True)
    ours_in = log_probs.clone().requires_grad_(True)
    trainer = _trainer(beta)
    trainer.model = _Model(theirs_in)
    theirs = DPOTrainer._compute_loss(trainer, trainer.model, inputs, return_outputs=False)
    sums = (ours_in * mask).sum(dim=1)
    ours = dpo_loss(sums[:PAIRS], sums[PAIRS:], inputs["ref_chosen_logps"], inputs["ref_rejected_logps"], beta)
    theirs.backward()
    ours.backward()
    assert float(theirs.detach()) == pytest.approx(float(ours.detach()), abs=1e-12)
    assert torch.allclose(theirs_in.grad, ours_in.grad, atol=1e-12)
    assert ours_in.grad[mask == 0].abs().max() == 0  # the prompt and the padding get no gradient


def test_the_small_beta_learner_is_trl_s_default():
    assert preference.learner("dpo-small-beta").cfg.beta == _config().beta
