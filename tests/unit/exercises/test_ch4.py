"""Chapter 4's exercise check (Exercise 4.1, the PPO-clip token loss): the reference passes, plausible mistakes
fail with a message that names them, junk gets a message."""

from __future__ import annotations

import pytest
import torch

from rlbook.exercises import ch4


def ppo_solution(logp, old_logp, adv, mask, eps):
    ratio = torch.exp(logp - old_logp)
    a = adv[:, None]
    objective = torch.minimum(ratio * a, ratio.clamp(1 - eps, 1 + eps) * a)
    return -(objective * mask).sum() / mask.sum()


def test_the_registered_reference_passes():
    assert ch4.check_ppo_clip_loss(ch4.my_ppo_clip_loss).passed


# --- the PPO-clip token loss -------------------------------------------------------------------------------


def test_ppo_solution_passes():
    assert ch4.check_ppo_clip_loss(ppo_solution).passed


def _masked_mean(x, mask):
    return (x * mask).sum() / mask.sum()


def _objective(lp, old, a, e):
    ratio = torch.exp(lp - old)
    return torch.minimum(ratio * a[:, None], ratio.clamp(1 - e, 1 + e) * a[:, None])


@pytest.mark.parametrize(
    "wrong, hint",
    [
        *((m.wrong, m.says) for m in ch4.MISTAKES),
        (
            lambda lp, old, a, m, e: -_masked_mean(torch.exp(lp - old).clamp(1 - e, 1 + e) * a[:, None], m),
            "clipped term alone",
        ),
        (
            lambda lp, old, a, m, e: (
                -_masked_mean(
                    torch.maximum(
                        torch.exp(lp - old) * a[:, None], torch.exp(lp - old).clamp(1 - e, 1 + e) * a[:, None]
                    ),
                    m,
                )
            ),
            "max instead of min",
        ),
        (
            lambda lp, old, a, m, e: (
                -torch.minimum(
                    torch.exp(lp - old) * a[:, None], torch.exp(lp - old).clamp(1 - e, 1 + e) * a[:, None]
                ).mean()
            ),
            "masked (generated) tokens only",
        ),
        (lambda lp, old, a, m, e: -_masked_mean(torch.exp(lp - old) * a[:, None], m), "no clipping at all"),
        (lambda lp, old, a, m, e: -(_objective(lp, old, a, e) * m).sum() / m.numel(), "mask.numel()"),
        (lambda lp, old, a, m, e: ppo_solution(lp, old, a, m, e).detach(), "no gradient"),
        (lambda lp, old, a, m, e: ppo_solution(lp, old, a, m, e).reshape(1), "0-dimensional"),
    ],
)
def test_ppo_mistakes_fail_with_a_hint(wrong, hint):
    result = ch4.check_ppo_clip_loss(wrong)
    assert not result.passed
    assert hint in result.message


def test_ppo_stub():
    assert not ch4.check_ppo_clip_loss(None).passed
    assert "no answer yet" in ch4.check_ppo_clip_loss(lambda *args: None).message


# --- PPO: spellings, gradient mistakes, junk ---------------------------------------------------------------


def _ppo_with_where(logp, old_logp, adv, mask, eps):
    ratio = torch.exp(logp - old_logp)
    a = adv[:, None]
    objective = torch.where(mask, torch.minimum(ratio * a, ratio.clamp(1 - eps, 1 + eps) * a), 0.0)
    return -objective.sum() / mask.sum()


def _ppo_clamping_the_product(logp, old_logp, adv, mask, eps):
    ratio = torch.exp(logp - old_logp)
    a = adv[:, None]
    low, high = torch.minimum((1 - eps) * a, (1 + eps) * a), torch.maximum((1 - eps) * a, (1 + eps) * a)
    return -_masked_mean(torch.minimum(ratio * a, torch.clamp(ratio * a, low, high)), mask)


@pytest.mark.parametrize("right", [_ppo_with_where, _ppo_clamping_the_product])
def test_ppo_in_other_spellings_passes(right):
    assert ch4.check_ppo_clip_loss(right).passed


def _ppo_detached_clip(logp, old_logp, adv, mask, eps):
    ratio = torch.exp(logp - old_logp)
    a = adv[:, None]
    return -_masked_mean(torch.minimum(ratio * a, ratio.detach().clamp(1 - eps, 1 + eps) * a), mask)


def _ppo_unclipped_gradient(logp, old_logp, adv, mask, eps):
    ratio = torch.exp(logp - old_logp)
    a = adv[:, None]
    value = torch.minimum(ratio * a, ratio.clamp(1 - eps, 1 + eps) * a)
    return -_masked_mean(ratio * a + (value - ratio * a).detach(), mask)


def _ppo_fully_detached(logp, old_logp, adv, mask, eps):
    return ppo_solution(logp.detach(), old_logp, adv, mask, eps) + 0 * logp.sum()


@pytest.mark.parametrize(
    "wrong, hint",
    [
        (_ppo_detached_clip, "do not detach it before clamping"),
        (_ppo_unclipped_gradient, "unclipped gradient on every token"),
        (_ppo_fully_detached, "no gradient reaches logp"),
    ],
)
def test_ppo_gradient_mistakes_are_told_apart(wrong, hint):
    result = ch4.check_ppo_clip_loss(wrong)
    assert not result.passed and "value is right but the gradient is not" in result.message and hint in result.message


@pytest.mark.parametrize(
    "junk, hint",
    [(lambda *a: 0.5, "0-dimensional tensor"), (lambda *a: "loss", "0-dimensional tensor"), (42, "must be a function")],
)
def test_ppo_junk_gets_a_message(junk, hint):
    result = ch4.check_ppo_clip_loss(junk)
    assert not result.passed and hint in result.message
