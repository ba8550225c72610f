"""Sampling rollouts and what they record (rlbook.core.sampling)."""

from __future__ import annotations

import math

import pytest
import torch
from policies import constant_policy, random_policy

from rlbook.core.policy import Policy, token_logprobs
from rlbook.core.rl import generated_logprobs
from rlbook.core.sampling import Rollouts, _children, prompt_batch, sample
from rlbook.core.world import EOT_ID, STOI, encode

PROMPTS = ["U:3+4?|A:", "U:9+8?|A:", "U:0+5?|A:"]


def gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def test_prompt_batch_repeats_each_prompt_in_contiguous_groups():
    repeated, ids = prompt_batch(["U:1+2?|A:", "U:3+4?|A:"], 3)
    assert repeated == ["U:1+2?|A:"] * 3 + ["U:3+4?|A:"] * 3
    assert ids.shape == (6, 9)
    assert ids[0].tolist() == encode("U:1+2?|A:") and ids[5].tolist() == encode("U:3+4?|A:")


def test_shapes_settings_and_version():
    policy = random_policy()
    policy.version = "demo@3"
    r = sample(policy, PROMPTS, n=4, budget=4, generator=gen(0))
    assert len(r) == 12 and r.group_size == 4
    assert r.tokens.shape == r.logprobs.shape == r.mask.shape == (12, 4)
    assert r.prompt_ids.shape == (12, 9) and r.full_ids().shape == (12, 13)
    assert r.prompts == [p for p in PROMPTS for _ in range(4)]
    assert r.policy_version == "demo@3"
    assert r.settings == {
        "temperature": 1.0,
        "token_budget": 4,
        "group_size": 4,
        "decoding": "sample",
        "kv_cache": True,
    }


def test_unversioned_policy_is_labelled_so():
    assert sample(random_policy(), PROMPTS[:1], generator=gen(0)).policy_version == "unversioned"


def test_same_generator_seed_same_rollouts():
    policy = random_policy(1)
    a = sample(policy, PROMPTS, n=8, generator=gen(5))
    b = sample(policy, PROMPTS, n=8, generator=gen(5))
    c = sample(policy, PROMPTS, n=8, generator=gen(6))
    assert torch.equal(a.tokens, b.tokens) and torch.equal(a.logprobs, b.logprobs) and torch.equal(a.mask, b.mask)
    assert not torch.equal(a.tokens, c.tokens)


def test_sampling_restores_training_mode():
    policy = random_policy()
    policy.train()
    sample(policy, PROMPTS[:1], generator=gen(0))
    assert policy.training
    with pytest.raises(ValueError, match="exceeds the context"):
        sample(policy, PROMPTS[:1], budget=9)
    assert policy.training  # even when sampling refuses
    policy.eval()
    sample(policy, PROMPTS[:1], generator=gen(0))
    assert not policy.training


def test_the_record_is_made_of_ordinary_tensors_that_a_loss_may_use():
    policy = random_policy(2)
    r = sample(policy, PROMPTS, n=2, budget=4, generator=gen(3))
    assert not any(t.is_inference() for t in (r.prompt_ids, r.tokens, r.logprobs, r.mask))
    logp, _ = generated_logprobs(policy, r)
    ((logp - r.logprobs).exp() * r.mask).sum().backward()  # raises if an inference tensor is saved for backward
    assert policy.head.weight.grad is not None


def test_recorded_logprobs_equal_the_policys_at_the_sampled_tokens():
    policy = random_policy(2).eval()
    r = sample(policy, PROMPTS, n=6, budget=4, generator=gen(3))
    recomputed, entropy = generated_logprobs(policy, r)
    assert recomputed.shape == entropy.shape == (18, 4)
    assert torch.allclose(recomputed[r.mask], r.logprobs[r.mask], atol=1e-5)
    # The same numbers by token_logprobs on the full ids: its last 4 columns are the generated tokens.
    by_ids = token_logprobs(policy, r.full_ids())[:, -4:]
    assert torch.allclose(by_ids[r.mask], r.logprobs[r.mask], atol=1e-5)
    # Entropy of a distribution over 21 characters lies in [0, log 21].
    assert (entropy >= 0).all() and (entropy <= math.log(21) + 1e-5).all()


def test_recorded_logprobs_are_of_the_tempered_distribution():
    policy = random_policy(2).eval()
    r = sample(policy, PROMPTS, n=6, temperature=0.5, generator=gen(3))
    logits, _ = policy(r.full_ids()[:, :-1])
    tempered = torch.log_softmax(logits[:, 8:] / 0.5, dim=-1).gather(-1, r.tokens[:, :, None]).squeeze(-1)
    assert torch.allclose(tempered[r.mask], r.logprobs[r.mask], atol=1e-5)


def test_constant_policy_logprobs_by_hand():
    policy = constant_policy({"7": 0.75, "#": 0.25})
    r = sample(policy, PROMPTS, n=50, budget=4, generator=gen(0))
    written = r.tokens[r.mask]
    assert set(written.tolist()) <= {STOI["7"], EOT_ID}
    expected = torch.where(written == EOT_ID, torch.tensor(math.log(0.25)), torch.tensor(math.log(0.75)))
    assert torch.allclose(r.logprobs[r.mask], expected, atol=1e-5)
    # P(still writing after 4 tokens) = 0.75^4 = 0.316; 150 rows give a share close to it.
    share_budget = r.termination().count("budget") / len(r)
    assert 0.2 < share_budget < 0.45


def test_cache_and_no_cache_give_identical_tokens():
    policy = random_policy(4)
    fast = sample(policy, PROMPTS, n=8, generator=gen(9), use_cache=True)
    slow = sample(policy, PROMPTS, n=8, generator=gen(9), use_cache=False)
    assert torch.equal(fast.tokens, slow.tokens) and torch.equal(fast.mask, slow.mask)
    assert torch.allclose(fast.logprobs, slow.logprobs, atol=1e-5)
    assert slow.settings["kv_cache"] is False


def test_children_are_the_distinct_prefix_token_pairs_in_order():
    prefix = torch.tensor([0, 0, 1, 0, 1, 2])
    token = torch.tensor([5, 5, 5, 3, 5, 3])
    parent, child_token, child = _children(prefix, token)
    assert parent.tolist() == [0, 0, 1, 2] and child_token.tolist() == [3, 5, 5, 3]
    assert child.tolist() == [1, 1, 2, 0, 2, 3]  # each row's pair


def test_rows_that_share_a_prefix_are_read_once(monkeypatch):
    policy = constant_policy({"1": 0.98, "#": 0.02})  # nearly every answer starts "11"
    reads = []
    real = Policy.forward
    monkeypatch.setattr(
        Policy,
        "forward",
        lambda self, ids, cache=None, start=0: reads.append(ids.shape[0]) or real(self, ids, cache, start),
    )
    r = sample(policy, PROMPTS, n=16, budget=3, generator=gen(1))
    assert reads[0] == len(PROMPTS)  # each prompt once, not once per row
    distinct_prefixes = [
        len(
            {
                (p, tuple(row[: t + 1]))
                for p, row, m in zip(r.prompts, r.tokens.tolist(), r.mask[:, t + 1].tolist())
                if m
            }
        )
        for t in range(2)
    ]
    assert reads[1:] == distinct_prefixes and max(reads[1:]) < len(r) // 4


def test_rows_end_at_eot_or_budget_and_after_end_is_masked():
    policy = constant_policy({"1": 0.5, "#": 0.5})
    r = sample(policy, PROMPTS, n=40, budget=4, generator=gen(1))
    reasons = r.termination()
    assert "end-of-turn" in reasons and "budget" in reasons
    for row in range(len(r)):
        tokens, mask, lp = r.tokens[row].tolist(), r.mask[row].tolist(), r.logprobs[row].tolist()
        n = int(r.lengths[row])
        assert mask == [True] * n + [False] * (4 - n)  # a prefix of written tokens
        assert all(t == EOT_ID for t in tokens[n:])  # padding holds the end-of-turn id
        assert all(x == 0.0 for x in lp[n:])  # and no log-probability
        assert EOT_ID not in tokens[: n - 1]  # nothing written after an end-of-turn
        if reasons[row] == "end-of-turn":
            assert tokens[n - 1] == EOT_ID
        else:
            assert n == 4 and tokens[3] != EOT_ID
    assert r.completions()[0] in {"#", "1#", "11#", "111#", "1111"}


def test_greedy_decoding_is_deterministic_and_takes_the_argmax():
    policy = constant_policy({"5": 0.4, "2": 0.35, "#": 0.25})
    a = sample(policy, PROMPTS, n=2, greedy=True, generator=gen(0))
    b = sample(policy, PROMPTS, n=2, greedy=True, generator=gen(123))
    c = sample(policy, PROMPTS, n=2, greedy=True)
    assert torch.equal(a.tokens, b.tokens) and torch.equal(a.tokens, c.tokens)
    assert a.completions() == ["5555"] * 6
    assert torch.allclose(a.logprobs, torch.full((6, 4), math.log(0.4)), atol=1e-5)
    assert a.settings["decoding"] == "greedy"
    random = random_policy(5)
    assert torch.equal(
        sample(random, PROMPTS, greedy=True, generator=gen(1)).tokens,
        sample(random, PROMPTS, greedy=True, generator=gen(2)).tokens,
    )


def test_greedy_logprobs_are_those_at_temperature_one():
    policy = constant_policy({"5": 0.4, "2": 0.35, "#": 0.25})
    r = sample(policy, PROMPTS[:1], greedy=True, temperature=0.5)
    assert r.completions() == ["5555"]
    assert torch.allclose(r.logprobs, torch.full((1, 4), math.log(0.4)), atol=1e-5)


@pytest.mark.parametrize("temperature", [0.0, -1.0, float("nan")])
def test_bad_temperature_raises(temperature):
    with pytest.raises(ValueError, match="temperature"):
        sample(random_policy(), PROMPTS, temperature=temperature)


@pytest.mark.parametrize("budget", [0, -2])
def test_bad_budget_raises(budget):
    with pytest.raises(ValueError, match="budget"):
        sample(random_policy(), PROMPTS, budget=budget)


@pytest.mark.parametrize("n", [0, -1])
def test_bad_group_size_raises(n):
    with pytest.raises(ValueError, match="positive"):
        sample(random_policy(), PROMPTS, n=n)


def test_prompts_of_unequal_length_or_none_raise():
    with pytest.raises(ValueError, match="equal length"):
        sample(random_policy(), ["U:3+4?|A:", "U:3+4+5?|A:"])
    with pytest.raises(ValueError, match="no prompts"):
        sample(random_policy(), [])


def test_budget_beyond_the_context_raises():
    policy = random_policy()
    assert sample(policy, PROMPTS[:1], budget=8, generator=gen(0)).tokens.shape == (1, 8)  # 9 + 8 - 1 = 16 fits
    with pytest.raises(ValueError, match="exceeds the context"):
        sample(policy, PROMPTS[:1], budget=9)


def hand_made() -> Rollouts:
    tokens = torch.tensor([encode("7#") + [EOT_ID] * 2, encode("123") + [EOT_ID], encode("4567")])
    mask = torch.tensor([[1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1]], dtype=torch.bool)
    logprobs = torch.tensor([[-0.1, -0.2, 0, 0], [-1.0, -1.0, -1.0, 0], [-0.5, -0.5, -0.5, -0.5]])
    prompts = ["U:3+4?|A:", "U:3+4?|A:", "U:1+1?|A:"]
    ids = torch.tensor([encode(p) for p in prompts])
    return Rollouts(prompts, ids, tokens, logprobs, mask, "hand@0", {"group_size": 1})


def test_rollouts_accessors_on_a_hand_made_batch():
    r = hand_made()
    assert r.lengths.tolist() == [2, 3, 4]
    assert r.ended.tolist() == [True, False, False]
    assert r.termination() == ["end-of-turn", "budget", "budget"]
    assert r.completions() == ["7#", "123", "4567"]
    assert r.full_ids()[0].tolist() == encode("U:3+4?|A:7###")
    rows = r.as_rows(limit=2)
    assert len(rows) == 2
    assert rows[0] == {
        "prompt": "U:3+4?|A:",
        "completion": "7#",
        "token_ids": [7, EOT_ID],
        "logprobs": [-0.1, -0.2],
        "termination": "end-of-turn",
        "policy_version": "hand@0",
    }


def test_rollouts_select_by_index_or_bool_mask():
    r = hand_made()
    by_index = r.select([2, 0])
    assert by_index.completions() == ["4567", "7#"] and by_index.prompts == ["U:1+1?|A:", "U:3+4?|A:"]
    by_mask = r.select(torch.tensor([False, True, True]))
    assert by_mask.completions() == ["123", "4567"]
    assert by_mask.policy_version == "hand@0" and by_mask.settings == r.settings
    by_mask.settings["x"] = 1
    assert "x" not in r.settings
