"""Token-level losses on hand-worked tokens (rlbook.core.losses)."""

from __future__ import annotations

import math

import pytest
import torch

from rlbook.core.losses import (
    AGGREGATIONS,
    KL_ESTIMATORS,
    LOSSES,
    aggregate,
    cispo_loss,
    gspo_loss,
    importance_ratio,
    kl_k3,
    kl_k3_ratio,
    kl_penalty,
    pg_loss,
    policy_gradient_loss,
    ppo_clip_loss,
    sequence_ratio,
    token_loss,
)


def tokens(ratios, dtype=torch.float64):
    """(logp, old_logp) of one row of tokens whose importance ratios are ``ratios``."""
    logp = torch.tensor([[math.log(r) for r in ratios]], dtype=dtype, requires_grad=True)
    return logp, torch.zeros_like(logp)


def grad_of(loss, logp):
    (grad,) = torch.autograd.grad(loss, logp)
    return grad


# --- aggregation -------------------------------------------------------------

PER_TOKEN = torch.tensor([[1.0, 2.0, 3.0], [4.0, 100.0, -100.0]])  # masked-out values are junk
MASK = torch.tensor([[1, 1, 1], [1, 0, 0]])


@pytest.mark.parametrize(
    "how, expected",
    [
        ("token_mean", (1 + 2 + 3 + 4) / 4),  # every generated token weighs the same
        ("seq_mean", (2 + 4) / 2),  # mean of per-answer means: (1+2+3)/3 and 4/1
        ("constant", (1 + 2 + 3 + 4) / (2 * 3)),  # sum over B * T
    ],
)
def test_aggregations_with_unequal_lengths(how, expected):
    assert aggregate(PER_TOKEN, MASK, how).item() == pytest.approx(expected)
    assert aggregate(PER_TOKEN, MASK.bool(), how).item() == pytest.approx(expected)


def test_constant_aggregation_takes_the_token_budget():
    assert aggregate(PER_TOKEN, MASK, "constant", max_tokens=5).item() == pytest.approx(10 / (2 * 5))


def test_unknown_aggregation_is_rejected():
    assert AGGREGATIONS == ("token_mean", "seq_mean", "constant")
    with pytest.raises(ValueError, match="'sum'"):
        aggregate(PER_TOKEN, MASK, "sum")


# --- REINFORCE ---------------------------------------------------------------


def test_policy_gradient_loss_by_hand():
    logp = torch.tensor([[-1.0, -2.0], [-0.5, -9.0]], requires_grad=True)
    mask = torch.tensor([[1, 1], [1, 0]])
    adv = torch.tensor([1.0, -1.0])  # one advantage per sequence, spread over its tokens
    loss = policy_gradient_loss(logp, adv, mask)
    assert loss.item() == pytest.approx(-((-1) + (-2) + 0.5) / 3)
    assert torch.allclose(grad_of(loss, logp), torch.tensor([[-1 / 3, -1 / 3], [1 / 3, 0.0]]))


def test_per_sequence_and_per_token_advantages_agree():
    logp = torch.randn(3, 4)
    mask = torch.ones(3, 4)
    adv = torch.tensor([0.5, -1.0, 2.0])
    assert torch.allclose(
        policy_gradient_loss(logp, adv, mask), policy_gradient_loss(logp, adv[:, None].expand(3, 4), mask)
    )


# --- PPO clip ----------------------------------------------------------------


@pytest.mark.parametrize(
    "ratio, adv, objective, grad_flows",
    [
        (2.0, 1.0, 1.2, False),  # pushed up past 1 + eps: clipped, no gradient
        (2.0, -1.0, -2.0, True),  # moved the wrong way: unclipped, keeps its gradient
        (0.5, 1.0, 0.5, True),
        (0.5, -1.0, -0.8, False),  # pushed down past 1 - eps: clipped, no gradient
        (1.0, 1.0, 1.0, True),
        (1.0, -1.0, -1.0, True),
    ],
)
def test_ppo_clip_by_hand(ratio, adv, objective, grad_flows):
    logp, old = tokens([ratio])
    loss, _ = ppo_clip_loss(logp, old, torch.tensor([adv]), torch.ones(1, 1), eps_low=0.2, eps_high=0.2)
    assert loss.item() == pytest.approx(-objective)
    # unclipped: d(-ratio * A)/d logp = -ratio * A, since d ratio / d logp = ratio
    expected_grad = -ratio * adv if grad_flows else 0.0
    assert grad_of(loss, logp).item() == pytest.approx(expected_grad)


def test_ppo_clip_statistics():
    logp, old = tokens([2.0, 2.0, 0.5, 0.5, 1.0, 1.0])
    adv = torch.tensor([[1.0, -1.0, 1.0, -1.0, 1.0, -1.0]])
    _, stats = ppo_clip_loss(logp, old, adv, torch.ones(1, 6))
    assert stats == pytest.approx(
        {"clip_fraction": 2 / 6, "clip_low_fraction": 1 / 6, "clip_high_fraction": 1 / 6, "ratio_mean": 7 / 6}
    )


def test_clip_higher_widens_only_the_upper_bound():
    logp, old = tokens([1.25])
    adv, mask = torch.tensor([1.0]), torch.ones(1, 1)
    assert ppo_clip_loss(logp, old, adv, mask, eps_high=0.2)[0].item() == pytest.approx(-1.2)
    assert ppo_clip_loss(logp, old, adv, mask, eps_high=0.28)[0].item() == pytest.approx(-1.25)


def test_ppo_gradient_matches_finite_differences():
    torch.manual_seed(0)
    logp = (0.3 * torch.randn(3, 5, dtype=torch.float64)).requires_grad_()
    old = torch.zeros(3, 5, dtype=torch.float64)
    adv = torch.randn(3, dtype=torch.float64)
    mask = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [0, 1, 1, 0, 0]])
    for how in AGGREGATIONS:
        assert torch.autograd.gradcheck(lambda lp, how=how: ppo_clip_loss(lp, old, adv, mask, how=how)[0], (logp,))


def test_on_policy_ppo_gradient_is_the_reinforce_gradient():
    logp = torch.randn(2, 3, requires_grad=True)
    adv, mask = torch.tensor([1.0, -0.5]), torch.tensor([[1, 1, 0], [1, 1, 1]])
    ppo, _ = ppo_clip_loss(logp, logp.detach(), adv, mask)
    assert torch.allclose(grad_of(ppo, logp), grad_of(policy_gradient_loss(logp, adv, mask), logp))


# --- CISPO -------------------------------------------------------------------


def test_cispo_gradient_is_the_capped_weight_times_the_advantage():
    logp, old = tokens([0.5, 1.0, 6.0])
    adv = torch.tensor([[1.0, -1.0, 2.0]])
    loss, stats = cispo_loss(logp, old, adv, torch.ones(1, 3), cap_high=4.0)
    weight = torch.tensor([[0.5, 1.0, 4.0]], dtype=torch.float64)  # ratio 6 capped at 4
    # no gradient through the weight: d loss / d logp = -sg(w) * A / N exactly
    assert torch.allclose(grad_of(loss, logp), -weight * adv / 3)
    assert stats["clip_fraction"] == pytest.approx(1 / 3) and stats["clip_high_fraction"] == pytest.approx(1 / 3)


def test_cispo_keeps_the_gradient_that_ppo_drops():
    logp, old = tokens([6.0])
    adv, mask = torch.tensor([2.0]), torch.ones(1, 1)
    assert grad_of(ppo_clip_loss(logp, old, adv, mask)[0], logp).item() == 0.0
    assert grad_of(cispo_loss(logp, old, adv, mask)[0], logp).item() == pytest.approx(-4.0 * 2.0)


def test_cispo_lower_cap():
    logp, old = tokens([0.5])
    loss, stats = cispo_loss(logp, old, torch.tensor([1.0]), torch.ones(1, 1), cap_low=0.8)
    assert grad_of(loss, logp).item() == pytest.approx(-0.8)
    assert stats["clip_low_fraction"] == 1.0


# --- masking -----------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(LOSSES))
@pytest.mark.parametrize("how", AGGREGATIONS)
def test_prompt_and_padding_tokens_change_nothing(name, how):
    torch.manual_seed(1)
    mask = torch.tensor([[0, 0, 1, 1, 0], [0, 1, 1, 1, 1]]).bool()
    old = -torch.rand(2, 5)
    adv = torch.tensor([1.0, -1.0])
    base = old + 0.1 * torch.randn(2, 5)
    other = torch.where(mask, base, -5 * torch.rand(2, 5))  # new values at masked positions only
    results = []
    for values in (base, other):
        logp = values.clone().requires_grad_()
        loss, _ = token_loss(name, logp, old, adv, mask, how)
        results.append((loss, grad_of(loss, logp)))
    (loss_a, grad_a), (loss_b, grad_b) = results
    assert loss_a.item() == pytest.approx(loss_b.item())
    assert torch.equal(grad_a, grad_b)
    assert torch.all(grad_a[~mask] == 0)


# --- KL ----------------------------------------------------------------------


def test_k3_is_zero_at_the_reference_and_positive_elsewhere():
    logp = torch.log(torch.tensor([0.1, 0.5, 0.9]))
    assert torch.equal(kl_k3(logp, logp), torch.zeros(3))
    assert torch.all(kl_k3(logp, logp.roll(1)) > 0)
    assert torch.all(kl_k3(logp, logp - 0.01) > 0) and torch.all(kl_k3(logp, logp + 0.01) > 0)
    # logp = 0, ref = log 2: d = log 2, exp(d) - d - 1 = 1 - log 2
    assert kl_k3(torch.tensor(0.0), torch.tensor(math.log(2))).item() == pytest.approx(1 - math.log(2))


def test_k3_averages_to_the_kl_divergence():
    torch.manual_seed(2)
    pi = torch.tensor([0.6, 0.3, 0.1])
    ref = torch.tensor([0.3, 0.3, 0.4])
    exact = (pi * (pi / ref).log()).sum().item()
    samples = torch.multinomial(pi, 200_000, replacement=True)
    estimate = kl_k3(pi.log()[samples], ref.log()[samples]).mean().item()
    assert estimate == pytest.approx(exact, rel=0.03)


# --- registry ----------------------------------------------------------------


def test_token_loss_dispatches_by_name():
    logp, old = tokens([2.0, 0.5])
    adv, mask = torch.tensor([[1.0, -1.0]]), torch.ones(1, 2)
    assert set(LOSSES) == {"pg", "ppo", "cispo", "gspo"}
    assert torch.equal(
        token_loss("ppo", logp, old, adv, mask, eps_high=0.3)[0], ppo_clip_loss(logp, old, adv, mask, eps_high=0.3)[0]
    )
    assert torch.equal(
        token_loss("cispo", logp, old, adv, mask, cap_high=1.5)[0], cispo_loss(logp, old, adv, mask, cap_high=1.5)[0]
    )
    assert torch.equal(
        token_loss("gspo", logp, old, adv, mask, eps_high=0.3)[0], gspo_loss(logp, old, adv, mask, eps_high=0.3)[0]
    )


# --- GSPO (Zheng et al. 2025) --------------------------------------------------


def _gspo_by_the_paper(logp, old, adv, lengths, eps_low, eps_high):
    """Eq. (5)-(7) of the GSPO paper, one answer at a time in plain Python floats."""
    total = 0.0
    for i, n in enumerate(lengths):
        s = math.exp(sum(logp[i][:n]) / n - sum(old[i][:n]) / n)  # (pi / pi_old) ** (1 / |y|)
        a = adv[i]
        total += min(s * a, min(max(s, 1 - eps_low), 1 + eps_high) * a)
    return -total / len(lengths)


def test_gspo_is_the_papers_objective_on_answers_of_different_lengths():
    g = torch.Generator().manual_seed(3)
    logp = -torch.rand(4, 5, generator=g, dtype=torch.float64)
    old = logp.detach() + 0.02 * torch.randn(4, 5, generator=g, dtype=torch.float64)
    adv = torch.tensor([1.0, -0.5, 0.7, -1.2], dtype=torch.float64)
    lengths = [5, 2, 3, 1]
    mask = torch.arange(5)[None, :] < torch.tensor(lengths)[:, None]
    for eps_low, eps_high in [(3e-4, 4e-4), (0.2, 0.28), (0.0, 1e9)]:
        loss, _ = gspo_loss(logp, old, adv, mask, eps_low=eps_low, eps_high=eps_high, how="seq_mean")
        want = _gspo_by_the_paper(logp.tolist(), old.tolist(), adv.tolist(), lengths, eps_low, eps_high)
        assert loss.item() == pytest.approx(want, abs=1e-12)


def test_gspo_clips_whole_answers_and_a_padded_token_changes_nothing():
    logp = torch.tensor([[-0.1, -0.2, -9.0], [-0.3, -0.1, -0.2]], requires_grad=True)
    old = torch.tensor([[-0.2, -0.3, 0.0], [-0.3, -0.1, -0.2]])
    mask = torch.tensor([[True, True, False], [True, True, True]])
    adv = torch.tensor([1.0, 1.0])
    ratio = sequence_ratio(logp, old, mask)
    assert ratio[:, 0].tolist() == pytest.approx([math.exp(0.1), 1.0])
    loss, stats = gspo_loss(logp, old, adv, mask, eps_low=0.2, eps_high=0.05)
    loss.backward()
    # the first answer's ratio exp(0.1) is past 1 + 0.05 with A > 0: every one of its tokens loses its gradient
    assert logp.grad[0].abs().sum() == 0 and logp.grad[1].abs().sum() > 0
    assert stats["clip_high_fraction"] == pytest.approx(2 / 5)


def test_pg_reports_ratios_but_never_clips():
    logp, old = tokens([2.0, 0.5])
    adv, mask = torch.tensor([[1.0, -1.0]]), torch.ones(1, 2)
    loss, stats = pg_loss(logp, old, adv, mask)
    assert torch.equal(loss, policy_gradient_loss(logp, adv, mask))
    assert stats == pytest.approx(
        {"clip_fraction": 0.0, "clip_low_fraction": 0.0, "clip_high_fraction": 0.0, "ratio_mean": 1.25}
    )


def test_unknown_loss_is_rejected():
    logp, old = tokens([1.0])
    with pytest.raises(ValueError, match="'grpo'"):
        token_loss("grpo", logp, old, torch.ones(1), torch.ones(1, 1))


def test_importance_ratio():
    assert importance_ratio(torch.tensor(math.log(0.4)), torch.tensor(math.log(0.2))).item() == pytest.approx(2.0)


def test_k3_ratio_equals_k3_on_policy_and_has_the_exact_kl_gradient():
    """r x k3 with r differentiable: per-token gradient r x (logp - ref), where plain k3's is 1 - exp(ref - logp)."""
    logp = torch.tensor([-1.0, -0.5], dtype=torch.float64, requires_grad=True)
    ref = torch.tensor([-2.0, -0.1], dtype=torch.float64)
    on = kl_k3_ratio(logp, logp.detach(), ref)
    assert torch.allclose(on, kl_k3(logp, ref))
    old = torch.tensor([-1.3, -0.2], dtype=torch.float64)
    kl_k3_ratio(logp, old, ref).sum().backward()
    ratio = torch.exp(logp.detach() - old)
    assert torch.allclose(logp.grad, ratio * (logp.detach() - ref))


def test_k3_ratio_averages_to_the_current_policys_kl_on_an_older_policys_samples():
    torch.manual_seed(3)
    old, pi, ref = torch.tensor([0.5, 0.3, 0.2]), torch.tensor([0.6, 0.3, 0.1]), torch.tensor([0.3, 0.3, 0.4])
    exact = (pi * (pi / ref).log()).sum().item()
    samples = torch.multinomial(old, 200_000, replacement=True)
    estimate = kl_k3_ratio(pi.log()[samples], old.log()[samples], ref.log()[samples]).mean().item()
    assert estimate == pytest.approx(exact, rel=0.03)


def test_kl_penalty_dispatches_and_refuses_unknown_estimators():
    logp, old, ref = torch.tensor([-1.0]), torch.tensor([-1.5]), torch.tensor([-2.0])
    assert torch.equal(kl_penalty("k3", logp, old, ref), kl_k3(logp, ref))
    assert torch.equal(kl_penalty("k3-ratio", logp, old, ref), kl_k3_ratio(logp, old, ref))
    assert set(KL_ESTIMATORS) == {"k3", "k3-ratio"}
    with pytest.raises(ValueError, match="unknown KL estimator"):
        kl_penalty("k2", logp, old, ref)
