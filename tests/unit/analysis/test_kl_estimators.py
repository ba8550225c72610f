"""rlbook.analysis.kl_estimators: the exact means and mean gradients of k1, k2 and k3 against their closed forms."""

from __future__ import annotations

import pytest
import torch

from rlbook.analysis import kl_estimators as kle

TOY = kle.toy()
PI, REF, OLD = TOY.pi, TOY.ref, TOY.old
D = PI.log() - REF.log()  # log pi - log pi_ref, outcome by outcome
KL = float((PI * D).sum())
KL_GRAD = PI * (D - KL)  # d KL(pi || ref) / d logits, for pi = softmax(logits)
REVERSE_GRAD = PI - REF  # d KL(ref || pi) / d logits


def close(a: torch.Tensor, b: torch.Tensor) -> bool:
    return torch.allclose(a, b, rtol=0, atol=1e-12)


def test_the_toy_is_three_different_distributions():
    assert PI.shape == REF.shape == OLD.shape == (kle.OUTCOMES,)
    for p in (PI, REF, OLD):
        assert abs(float(p.sum()) - 1) < 1e-12 and float(p.min()) > 0
    assert float((PI - REF).abs().max()) > 0.05 and float((PI - OLD).abs().max()) > 0.05
    assert close(kle.toy().logits, TOY.logits)  # fixed by its seed


def test_the_true_gradients_are_the_closed_forms():
    truths = kle.true_gradients(TOY)
    assert abs(float(kle.kl(PI, REF)) - KL) < 1e-12
    assert close(truths["KL(π‖π_ref)"], KL_GRAD)
    assert close(truths["KL(π_ref‖π)"], REVERSE_GRAD)


def test_the_means_are_the_closed_forms():
    log_r = -D
    assert kle.mean(TOY, "k1", "fresh") == pytest.approx(KL, abs=1e-12)
    assert kle.mean(TOY, "k3", "fresh") == pytest.approx(KL, abs=1e-12)
    assert kle.mean(TOY, "k2", "fresh") == pytest.approx(float((PI * log_r**2 / 2).sum()), abs=1e-12)
    assert kle.mean(TOY, "k3", "reused") == pytest.approx(float((OLD * (REF / PI - 1 - log_r)).sum()), abs=1e-12)
    for name in ("k1", "k3"):  # the ratio makes samples of pi_old count as samples of pi
        assert kle.mean(TOY, name, "reused, ratio") == pytest.approx(KL, abs=1e-12)
    assert kle.mean(TOY, "k2", "fresh") > KL  # k2 is biased here


def test_the_mean_gradients_are_the_closed_forms():
    """Per outcome, d log pi_y / d logits = e_y - pi: each mean gradient as a sum over outcomes."""
    score = torch.eye(kle.OUTCOMES, dtype=torch.float64) - PI  # row y: the gradient of log pi_y

    def expected(weights: torch.Tensor) -> torch.Tensor:
        return (weights[:, None] * score).sum(0)

    assert close(kle.mean_gradient(TOY, "k1", "fresh"), torch.zeros(kle.OUTCOMES, dtype=torch.float64))
    assert close(kle.mean_gradient(TOY, "k1", "reused"), expected(OLD))
    assert close(kle.mean_gradient(TOY, "k2", "fresh"), KL_GRAD)
    assert close(kle.mean_gradient(TOY, "k2", "reused"), expected(OLD * D))
    assert close(kle.mean_gradient(TOY, "k3", "fresh"), REVERSE_GRAD)
    assert close(kle.mean_gradient(TOY, "k3", "reused"), expected(OLD * (1 - REF / PI)))
    for name in ("k1", "k3"):
        assert close(kle.mean_gradient(TOY, name, "reused, ratio"), KL_GRAD)


def test_k1_in_the_reward_has_the_true_gradient_where_its_samples_are_pis():
    score = torch.eye(kle.OUTCOMES, dtype=torch.float64) - PI
    assert close(kle.reward_gradient(TOY, "fresh"), KL_GRAD)
    assert close(kle.reward_gradient(TOY, "reused, ratio"), KL_GRAD)
    assert close(kle.reward_gradient(TOY, "reused"), (OLD[:, None] * D[:, None] * score).sum(0))


def test_the_table_names_the_gradient_each_estimator_follows():
    rows = {(r["estimator"], r["samples"]): r for r in kle.table(TOY)}
    assert len(rows) == len(kle.ESTIMATORS) * len(kle.SAMPLES)
    assert rows["k1", "fresh"]["gradient of"] == "zero"
    assert rows["k2", "fresh"]["gradient of"] == "KL(π‖π_ref)"
    assert rows["k3", "fresh"]["gradient of"] == "KL(π_ref‖π)"
    assert rows["k3", "reused, ratio"]["gradient of"] == "KL(π‖π_ref)"
    assert rows["k3", "reused"]["gradient of"] == kle.NEITHER
    assert abs(rows["k3", "fresh"]["bias"]) < 1e-12 and rows["k3", "reused"]["bias"] != pytest.approx(0, abs=1e-3)
    assert rows["k1", "fresh"]["gradient error"] == pytest.approx(1.0)


def test_an_unknown_kind_of_samples_is_refused():
    with pytest.raises(ValueError, match="unknown samples"):
        kle.mean(TOY, "k3", "stale")
    with pytest.raises(ValueError, match="unknown samples"):
        kle.reward_gradient(TOY, "stale")
