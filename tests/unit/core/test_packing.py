"""Reading a batch's answers once per distinct pair, and the reference memo (rlbook.core.packing)."""

from __future__ import annotations

import copy

import pytest
import torch
from doubles import hand_batch

from rlbook.core.packing import (
    ReferenceMemo,
    distinct_answers,
    distinct_prompts,
    packed_reads,
    reference_logprobs,
    row_keys,
    unmet,
)
from rlbook.core.policy import Policy, PolicyConfig
from rlbook.core.rl import generated_logprobs
from rlbook.core.sampling import Rollouts
from rlbook.core.world import VOCAB, encode


@pytest.mark.parametrize("width", [1, 9, 11, 14])
def test_distinct_prompts_equal_torch_unique_over_rows(width):
    torch.manual_seed(width)
    rows = torch.randint(0, len(VOCAB), (40, width))[torch.randint(0, 40, (640,))]
    expected = torch.unique(rows, dim=0, return_inverse=True)
    found = distinct_prompts(rows)
    assert torch.equal(found[0], expected[0]) and torch.equal(found[1], expected[1])


def test_distinct_prompts_refuse_rows_too_long_for_one_integer():
    with pytest.raises(ValueError, match="15 tokens"):
        distinct_prompts(torch.zeros(2, 15, dtype=torch.long))


@pytest.mark.parametrize("width", [4, 12])  # 12 tokens are too many for one integer: torch.unique over rows
def test_distinct_answers_equal_torch_unique_over_prompt_and_answer(width):
    gen = torch.Generator().manual_seed(width)
    row_prompt = torch.randint(0, 5, (200,), generator=gen)
    tokens = torch.randint(0, 3, (200, width), generator=gen)
    expected, inverse = torch.unique(torch.cat([row_prompt[:, None], tokens], dim=1), dim=0, return_inverse=True)
    answer_prompt, answers, row_answer = distinct_answers(row_prompt, tokens)
    assert torch.equal(answer_prompt, expected[:, 0]) and torch.equal(answers, expected[:, 1:])
    assert torch.equal(row_answer, inverse)


def test_packed_reads_give_each_prompt_one_read_per_three_answers():
    read_prompt, read, place = packed_reads(torch.tensor([0, 0, 0, 0, 1, 2, 2]), 3, per_read=3)
    assert read_prompt.tolist() == [0, 0, 1, 2]  # prompt 0's four answers need two reads
    assert read.tolist() == [0, 0, 0, 1, 2, 3, 3] and place.tolist() == [0, 1, 2, 0, 0, 0, 1]


def test_generated_logprobs_share_prompts_yet_equal_full_rows_in_value_and_gradient():
    policy = fresh_policy(3)
    # Prompt 1 has four distinct answers (two reads of it), one of them twice; prompt 2 repeats one answer.
    prompts = ["U:3+4?|A:"] * 5 + ["U:9+8?|A:"] * 3
    tokens = torch.tensor([encode(t) for t in ["7###", "8###", "7###", "9###", "1###", "17##", "17##", "1#7#"]])
    ids = torch.tensor([encode(p) for p in prompts])
    rollouts = Rollouts(prompts, ids, tokens, torch.zeros(8, 4), torch.ones(8, 4, dtype=torch.bool), "hand@0", {})
    shared, _ = generated_logprobs(policy, rollouts)
    shared.sum().backward()
    shared_grads = [p.grad.clone() for p in policy.parameters()]
    policy.zero_grad()
    logits, _ = policy(rollouts.full_ids()[:, :-1])  # every row read in full
    full = torch.log_softmax(logits[:, 8:], dim=-1).gather(-1, tokens[:, :, None]).squeeze(-1)
    full.sum().backward()
    assert torch.allclose(shared, full, atol=1e-5)
    assert all(torch.allclose(a, p.grad, atol=1e-5) for a, p in zip(shared_grads, policy.parameters()))


def fresh_policy(seed: int = 0) -> Policy:
    torch.manual_seed(seed)
    return Policy(PolicyConfig())


def test_reference_logprobs_are_the_recorded_tokens_logprobs_without_a_gradient():
    policy = fresh_policy(2)
    batch = hand_batch(policy, [1.0, -1.0])
    ref_logp = reference_logprobs(policy, batch.rollouts)
    assert not ref_logp.requires_grad
    assert torch.equal(ref_logp, generated_logprobs(policy, batch.rollouts)[0].detach())


def test_row_keys_are_equal_exactly_for_equal_prompt_and_answer():
    rollouts = hand_batch(fresh_policy(2), [1.0, -1.0]).rollouts.select([0, 1, 0, 0])
    rollouts.prompt_ids[3, 2] = encode("5")[0]  # the last row asks 5+4 and answers as the first does
    keys = row_keys(rollouts.prompt_ids, rollouts.tokens)
    assert keys[0] == keys[2] and len({keys[0], keys[1], keys[3]}) == 3
    assert len(keys[0]) == rollouts.prompt_ids.shape[1] + rollouts.tokens.shape[1]
    assert unmet(keys, {keys[1]}) == {keys[0]: 0, keys[3]: 3}  # first rows of the keys not met, in order


def test_the_reference_memo_reads_each_pair_once_and_hands_back_its_first_numbers():
    reference = fresh_policy(2)
    batch = hand_batch(reference, [1.0, -1.0])
    memo = ReferenceMemo()
    first = memo.logprobs(reference, batch.rollouts)
    assert torch.allclose(first, reference_logprobs(reference, batch.rollouts), atol=1e-6)
    # Known pairs are looked up, not read again: another "reference" would give other numbers.
    again = memo.logprobs(fresh_policy(5), batch.rollouts.select([1, 0, 1]))
    assert torch.equal(again, first[[1, 0, 1]])
    # A new pair is read (with the policy given) and joins the memo.
    new = copy.deepcopy(batch.rollouts)
    new.tokens[0] = torch.tensor(encode("6#"))
    mixed = memo.logprobs(reference, new)
    assert len(memo.index) == 3 and torch.equal(mixed[1], first[1])
    assert torch.allclose(mixed[0], reference_logprobs(reference, new)[0], atol=1e-6)
