"""Pairs, the Bradley–Terry loss and DPO (rlbook.core.preferences) against their papers' formulas, in plain floats,
and the training functions on a tiny policy: deterministic, and moving the pairs the way their losses ask."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
import torch

from rlbook.core import preferences as pf
from rlbook.core import rewards as rw
from rlbook.core.policy import Policy, PolicyConfig
from rlbook.core.world import EOT_ID, decode, split


def _sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x))


def test_dpo_loss_is_the_paper_s_equation_7_in_plain_floats():
    chosen, rejected, ref_c, ref_r = [-1.0, -0.2, -3.0], [-2.5, -0.1, -0.5], [-1.4, -0.3, -2.0], [-2.0, -0.4, -1.0]
    for beta in (0.1, 1.0, 2.5):
        expected = [
            -math.log(_sigmoid(beta * ((c - rc) - (r - rr)))) for c, r, rc, rr in zip(chosen, rejected, ref_c, ref_r)
        ]
        got = pf.dpo_loss(*(torch.tensor(x, dtype=torch.float64) for x in (chosen, rejected, ref_c, ref_r)), beta)
        assert float(got) == pytest.approx(sum(expected) / len(expected), abs=1e-12)


def test_dpo_loss_is_log_2_at_the_reference_and_its_gradient_pushes_the_pair_apart():
    chosen = torch.tensor([-1.0, -2.0], dtype=torch.float64, requires_grad=True)
    rejected = torch.tensor([-1.5, -0.5], dtype=torch.float64, requires_grad=True)
    loss = pf.dpo_loss(chosen, rejected, chosen.detach(), rejected.detach(), 0.5)
    assert float(loss.detach()) == pytest.approx(math.log(2), abs=1e-12)
    loss.backward()
    # d/d logpi_w = -beta * sigmoid(-beta * margin) / n = -0.5 * 0.5 / 2 at margin 0
    assert chosen.grad.tolist() == pytest.approx([-0.125, -0.125])
    assert rejected.grad.tolist() == pytest.approx([0.125, 0.125])


def test_the_bradley_terry_loss_and_the_implicit_reward():
    chosen, rejected = torch.tensor([2.0, -1.0, 0.0]), torch.tensor([0.0, 1.0, 0.0])
    expected = sum(-math.log(_sigmoid(c - r)) for c, r in zip(chosen.tolist(), rejected.tolist())) / 3
    assert float(pf.bradley_terry_loss(chosen, rejected)) == pytest.approx(expected, abs=1e-6)
    # a constant added to both scores of every pair changes nothing
    assert float(pf.bradley_terry_loss(chosen + 7, rejected + 7)) == pytest.approx(expected, abs=1e-6)
    assert pf.implicit_reward(torch.tensor([-1.0]), torch.tensor([-3.0]), 0.5).tolist() == [1.0]


def test_the_answer_mask_stops_after_the_first_end_mark():
    eot = EOT_ID
    tokens = torch.tensor([[1, 2, eot, eot], [3, eot, eot, eot], [1, 2, 3, 4]])
    assert pf.answer_mask(tokens).tolist() == [
        [True, True, True, False],
        [True, True, False, False],
        [True, True, True, True],
    ]


def test_matching_pairs_each_right_answer_with_a_wrong_one_at_most_once():
    gen = torch.Generator().manual_seed(0)
    right = torch.tensor([True, False, True, True, False])
    good, bad = pf.matched(right, gen)
    assert len(good) == len(bad) == 2
    assert right[good].all() and not right[bad].any()
    assert len(set(good.tolist())) == 2 and len(set(bad.tolist())) == 2
    for silent in (torch.ones(4, dtype=torch.bool), torch.zeros(4, dtype=torch.bool)):
        assert [len(x) for x in pf.matched(silent, gen)] == [0, 0]


@pytest.fixture(scope="module")
def policy() -> Policy:
    torch.manual_seed(0)
    return Policy(PolicyConfig(d_model=16, n_layer=1, n_head=2)).eval()


@pytest.fixture(scope="module")
def prompts() -> list[str]:
    return [t.prompt for t in split("train")[:6]]


def _small(**changes) -> pf.PreferenceConfig:
    return replace(pf.PreferenceConfig(rounds=3, group_size=6, steps=4, batch=8, checkpoint_every=2), **changes)


def test_sequence_logprobs_sum_the_written_tokens_only(policy):
    prompt = torch.tensor([[5, 6, 7]])
    tokens = torch.tensor([[1, EOT_ID, EOT_ID]])
    with torch.no_grad():
        logits, _ = policy(torch.tensor([[5, 6, 7, 1]]))
        logp = torch.log_softmax(logits, dim=-1)
        expected = logp[0, 2, 1] + logp[0, 3, EOT_ID]
        assert float(pf.sequence_logprobs(policy, prompt, tokens)) == pytest.approx(float(expected), abs=1e-5)


def test_pairs_hold_a_right_chosen_and_a_wrong_rejected_answer(policy, prompts):
    cfg = _small(group_size=12)
    pairs = pf.preference_pairs(policy, prompts, cfg, seed=1)
    assert pairs.sampled == cfg.rounds * len(prompts) * cfg.group_size and pairs.groups == cfg.rounds * len(prompts)
    assert len(pairs) == len(pairs.chosen) == len(pairs.rejected) == len(pairs.swapped) > 0
    assert not pairs.swapped.any()
    exact = rw.get_verifier("exact")

    def rewards(tokens: torch.Tensor) -> list[float]:
        texts = [decode(row[mask]) for row, mask in zip(tokens, pf.answer_mask(tokens))]
        return [exact(decode(p), t).reward for p, t in zip(pairs.prompt_ids, texts)]

    assert set(rewards(pairs.chosen)) == {1.0} and 1.0 not in rewards(pairs.rejected)
    again = pf.preference_pairs(policy, prompts, cfg, seed=1)
    assert torch.equal(pairs.chosen, again.chosen) and pairs.silent == again.silent


def test_noise_swaps_the_answers_of_the_pairs_it_marks(policy, prompts):
    clean = pf.preference_pairs(policy, prompts, _small(), seed=2)
    noisy = pf.preference_pairs(policy, prompts, _small(noise=0.4), seed=2)
    s = noisy.swapped
    assert torch.equal(noisy.chosen[s], clean.rejected[s]) and torch.equal(noisy.chosen[~s], clean.chosen[~s])


def test_pairs_at_any_noise_are_the_drawn_pairs_swapped_where_their_draw_is_below_it(policy, prompts):
    drawn, draws = pf.drawn_pairs(policy, prompts, _small(noise=0.3), seed=2)
    assert not drawn.swapped.any() and len(draws) == len(drawn) and ((draws >= 0) & (draws < 1)).all()
    for noise in (0.0, 0.4):
        direct = pf.preference_pairs(policy, prompts, _small(noise=noise), seed=2)
        derived = pf.swapped(drawn, draws < noise)
        for field in ("prompt_ids", "chosen", "rejected", "swapped"):
            assert torch.equal(getattr(direct, field), getattr(derived, field)), (noise, field)
        assert (direct.sampled, direct.groups, direct.silent) == (derived.sampled, derived.groups, derived.silent)


def test_bad_settings_are_refused_with_their_names():
    with pytest.raises(ValueError, match="noise"):
        pf.PreferenceConfig(noise=0.5)
    with pytest.raises(ValueError, match="beta"):
        pf.PreferenceConfig(beta=0)
    with pytest.raises(ValueError, match="steps"):
        pf.PreferenceConfig(steps=0)


def _made_pairs() -> pf.Pairs:
    """Two prompts, each with a right and a wrong answer written out (the policy need not sample them)."""
    prompt = torch.tensor([[1, 2, 3], [4, 5, 6]])
    chosen = torch.tensor([[7, EOT_ID, EOT_ID], [8, 9, EOT_ID]])
    rejected = torch.tensor([[9, EOT_ID, EOT_ID], [7, 7, EOT_ID]])
    return pf.Pairs(prompt, chosen, rejected, torch.zeros(2, dtype=torch.bool), 4, 2, 0)


def test_dpo_widens_the_pairs_margin_and_calls_back_at_its_checkpoints(policy):
    pairs, cfg = _made_pairs(), _small(steps=6, lr=1e-2)
    seen: list[int] = []
    trained = pf.train_dpo(policy, pairs, cfg, seed=3, checkpoint=lambda step, p: seen.append(step))
    assert seen == [0, 2, 4, 6]

    def margin(p: Policy) -> torch.Tensor:
        with torch.no_grad():
            return pf.sequence_logprobs(p, pairs.prompt_ids, pairs.chosen) - pf.sequence_logprobs(
                p, pairs.prompt_ids, pairs.rejected
            )

    assert (margin(trained) > margin(policy)).all()
    again = pf.train_dpo(policy, pairs, cfg, seed=3)
    assert all(torch.equal(a, b) for a, b in zip(trained.state_dict().values(), again.state_dict().values()))


def test_dpo_given_its_references_log_probabilities_trains_as_it_does_reading_them_itself(policy):
    pairs, cfg = _made_pairs(), _small(steps=3, lr=1e-2)
    read = pf.pair_logprobs(policy, pairs)
    with torch.no_grad():
        assert torch.equal(read[0], pf.sequence_logprobs(policy, pairs.prompt_ids, pairs.chosen))
        assert torch.equal(read[1], pf.sequence_logprobs(policy, pairs.prompt_ids, pairs.rejected))
    itself = pf.train_dpo(policy, pairs, cfg, seed=5)
    given = pf.train_dpo(policy, pairs, cfg, seed=5, reference_logprobs=read)
    assert all(torch.equal(a, b) for a, b in zip(itself.state_dict().values(), given.state_dict().values()))


def test_the_bradley_terry_model_learns_to_score_the_chosen_answers_higher(policy):
    pairs = _made_pairs()
    model = pf.train_bradley_terry(policy, pairs, _small(steps=20, lr=1e-2), seed=4)
    with torch.no_grad():
        chosen = pf.reward_scores(model, pairs.prompt_ids, pairs.chosen)
        rejected = pf.reward_scores(model, pairs.prompt_ids, pairs.rejected)
    assert (chosen > rejected).all()
