"""The policy network and its checkpoints (rlbook.core.policy)."""

from __future__ import annotations

import pytest
import torch

from rlbook.core.policy import (
    Checkpoint,
    Policy,
    PolicyConfig,
    attend_written,
    causal_bias,
    rotary,
    rotary_table,
    token_logprobs,
    weights_hash,
    widened,
)
from rlbook.core.world import VOCAB, encode


def fresh(seed: int = 0, **cfg) -> Policy:
    torch.manual_seed(seed)
    return Policy(PolicyConfig(**cfg)).eval()


def ids_of(*texts: str) -> torch.Tensor:
    return torch.tensor([encode(t) for t in texts], dtype=torch.long)


def test_default_config_and_parameter_count():
    cfg = PolicyConfig()
    assert (cfg.vocab_size, cfg.block_size, cfg.n_layer, cfg.n_head, cfg.d_model) == (21, 16, 2, 4, 32)
    # Embeddings 21*32 + 16*32; per block: 2 LayerNorms (2*64), qkv 32*96+96, out 32*32+32,
    # MLP 32*128+128 + 128*32+32; final LayerNorm 64; head 32*21 (no bias).
    block = 2 * 64 + (32 * 96 + 96) + (32 * 32 + 32) + (32 * 128 + 128) + (128 * 32 + 32)
    expected = 21 * 32 + 16 * 32 + 2 * block + 64 + 32 * 21
    assert fresh().num_parameters() == expected == 27_328


def test_forward_shapes_and_cache_layout():
    policy = fresh()
    logits, cache = policy(ids_of("U:3+4?|A:", "U:1+2?|A:"))
    assert logits.shape == (2, 9, 21)
    assert len(cache) == 2
    k, v = cache[0]
    assert k.shape == v.shape == (2, 4, 9, 8)  # (batch, heads, steps, head width)


def test_token_logprobs_shape_and_values():
    policy = fresh()
    ids = ids_of("U:3+4?|A:7#")
    lp = token_logprobs(policy, ids)
    assert lp.shape == (1, 10)
    assert (lp <= 0).all()
    logits, _ = policy(ids)
    by_hand = torch.log_softmax(logits[0, 3], dim=-1)[ids[0, 4]]
    assert torch.allclose(lp[0, 3], by_hand, atol=1e-6)


def test_causality_later_tokens_do_not_change_earlier_logits():
    policy = fresh(1)
    a = ids_of("U:3+4?|A:7#")
    b = ids_of("U:3+4?|A:9,")
    la, _ = policy(a)
    lb, _ = policy(b)
    # Positions 0..8 see only the shared prompt: identical logits.
    assert torch.allclose(la[:, :9], lb[:, :9], atol=1e-6)
    # Position 9 sees the differing character: different logits.
    assert not torch.allclose(la[:, 9], lb[:, 9], atol=1e-4)


def test_kv_cache_forward_equals_full_forward():
    policy = fresh(2)
    ids = ids_of("U:3+4?|A:17#", "U:9+9?|A:18#")
    full, _ = policy(ids)
    logits, cache = policy(ids[:, :9])
    pieces = [logits]
    for t in range(9, ids.shape[1]):
        logits, cache = policy(ids[:, t : t + 1], cache, start=t)
        pieces.append(logits)
    stepped = torch.cat(pieces, dim=1)
    assert stepped.shape == full.shape
    assert torch.allclose(stepped, full, atol=1e-5)


def test_several_new_tokens_after_a_cache_equal_the_full_forward():
    policy = fresh(2)
    ids = ids_of("U:3+4?|A:17#", "U:9+9?|A:18#")
    full, _ = policy(ids)
    head, cache = policy(ids[:, :9])
    tail, _ = policy(ids[:, 9:], cache, start=9)
    assert torch.allclose(torch.cat([head, tail], dim=1), full, atol=1e-5)


def test_context_overflow_raises():
    policy = fresh()
    with pytest.raises(ValueError, match="exceeds the context of 16"):
        policy(torch.zeros(1, 17, dtype=torch.long))
    _, cache = policy(torch.zeros(1, 16, dtype=torch.long))
    with pytest.raises(ValueError, match="17 tokens"):
        policy(torch.zeros(1, 1, dtype=torch.long), cache, start=16)


def test_read_groups_equals_reading_each_row_on_its_own():
    policy = fresh(4)
    prompts = ids_of("U:3+4?|A:", "U:9+8?|A:")
    continuations = torch.stack([ids_of("7#", "8#", "1#"), ids_of("17", "1#", "#7")])  # (2 prompts, 3, 2 tokens)
    logits = policy.read_groups(prompts, continuations)
    assert logits.shape == (2, 3, 3, 21)
    for p in range(2):
        for g in range(3):
            alone, _ = policy(torch.cat([prompts[p], continuations[p, g]])[None])
            assert torch.allclose(logits[p, g], alone[0, -3:], atol=1e-5)


def test_read_groups_keeps_continuations_of_one_prompt_apart():
    policy = fresh(5)
    prompts = ids_of("U:3+4?|A:")
    before = policy.read_groups(prompts, ids_of("7#", "8#")[None])
    after = policy.read_groups(prompts, ids_of("7#", "99")[None])  # only the second continuation changes
    assert torch.equal(before[0, 0], after[0, 0])
    assert not torch.allclose(before[0, 1, 1:], after[0, 1, 1:])


def test_read_groups_refuses_sequences_longer_than_the_context():
    with pytest.raises(ValueError, match="exceeds the context of 16"):
        fresh().read_groups(ids_of("U:3+4?|A:"), torch.zeros(1, 2, 8, dtype=torch.long))


def test_weights_hash_stable_and_sensitive():
    a, b = fresh(0), fresh(0)
    h = weights_hash(a)
    assert len(h) == 16 and int(h, 16) >= 0
    assert weights_hash(a) == h == weights_hash(b)
    assert weights_hash(fresh(1)) != h
    with torch.no_grad():
        a.head.weight[0, 0] += 1e-3
    assert weights_hash(a) != h


def test_checkpoint_round_trips_through_plain_data_that_loads_without_pickle(tmp_path):
    policy = fresh(3, block_size=24)
    ckpt = Checkpoint.of(policy, "demo@7")
    torch.save(ckpt.to_data(), tmp_path / "c.pt")
    again = Checkpoint.from_data(torch.load(tmp_path / "c.pt", weights_only=True))
    assert again.version == "demo@7"
    assert again.config == policy.cfg and again.config.block_size == 24
    loaded = again.load()
    assert loaded.version == "demo@7"
    assert weights_hash(loaded) == weights_hash(policy)
    ids = ids_of("U:1+2+3?|A:3,6#")
    assert torch.equal(loaded.eval()(ids)[0], policy(ids)[0])


@pytest.mark.parametrize(
    "data",
    [
        None,
        [],
        {"config": {}, "state": {}},
        {"config": {}, "state": {"w": 1}, "version": "v"},
        {"config": {"width": 3}, "state": {}, "version": "v"},
    ],
)
def test_checkpoint_from_data_names_what_is_wrong(data):
    with pytest.raises(ValueError, match="checkpoint"):
        Checkpoint.from_data(data)


def test_checkpoint_is_a_snapshot_not_a_view():
    policy = fresh(4)
    ckpt = Checkpoint.of(policy, "snap@0")
    before = weights_hash(policy)
    with torch.no_grad():
        policy.tok.weight.add_(1.0)
    assert weights_hash(ckpt.load()) == before != weights_hash(policy)


def test_widened_copies_every_weight_and_adds_positions():
    torch.manual_seed(0)
    policy = Policy(PolicyConfig())
    torch.manual_seed(1)
    wider = widened(policy, 24)
    assert wider.cfg == PolicyConfig(block_size=24)
    for name, tensor in policy.state_dict().items():
        assert torch.equal(wider.state_dict()[name][: len(tensor)], tensor), name
    ids = torch.tensor([encode("U:3+4?|A:7#")])
    assert torch.equal(wider(ids)[0], policy(ids)[0])  # the same function on contexts both can read
    assert wider(torch.zeros(1, 24, dtype=torch.long))[0].shape == (1, 24, len(VOCAB))


def test_widened_refuses_to_shorten_the_context():
    with pytest.raises(ValueError, match="cannot shorten"):
        widened(Policy(PolicyConfig(block_size=24)), 16)


def test_long_sequences_take_the_written_out_path_with_the_same_result(monkeypatch):
    import rlbook.core.policy as policy_module

    policy = fresh(3, block_size=24)
    ids = torch.randint(0, len(VOCAB), (4, 22), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        written = policy(ids)[0]
        monkeypatch.setattr(policy_module, "FUSED_CAUSAL_STEPS", 24)
        fused = policy(ids)[0]
        changed = ids.clone()
        changed[:, 15:] = (changed[:, 15:] + 1) % len(VOCAB)
        monkeypatch.setattr(policy_module, "FUSED_CAUSAL_STEPS", 16)
        later = policy(changed)[0]
    assert torch.allclose(written, fused, atol=1e-5)
    assert torch.equal(later[:, :15], written[:, :15])  # still causal: later tokens leave earlier logits alone


def test_causal_bias_by_hand():
    inf = float("-inf")
    assert torch.equal(causal_bias(3), torch.tensor([[0.0, inf, inf], [0.0, 0.0, inf], [0.0, 0.0, 0.0]]))


def test_a_forward_that_records_gradients_takes_the_written_out_path(monkeypatch):
    policy = fresh(4)
    ids = torch.randint(0, len(VOCAB), (4, 12), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        fused = policy(ids)[0]

    def refuse(*args, **kwargs):
        raise AssertionError("the fused kernel was called")

    monkeypatch.setattr(torch.nn.functional, "scaled_dot_product_attention", refuse)
    written = policy(ids)[0]
    assert written.requires_grad
    assert torch.allclose(written.detach(), fused, atol=1e-5)


def test_attend_written_equals_the_fused_kernel_under_any_mask():
    gen = torch.Generator().manual_seed(2)
    q, k, v = (torch.randn(3, 4, 7, 8, generator=gen) for _ in range(3))
    allowed = torch.rand(7, 7, generator=gen) < 0.6
    allowed |= torch.eye(7, dtype=torch.bool)  # every position may see itself
    bias = torch.zeros(7, 7).masked_fill_(~allowed, float("-inf"))
    fused = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=bias)
    assert torch.allclose(attend_written(q, k, v, bias), fused, atol=1e-6)


# ---------------------------------------------------------------- rotary positions (the worked world, chapter 7)


def rope(seed: int = 0, **cfg) -> Policy:
    return fresh(seed, vocab_size=22, block_size=32, d_model=48, rope=True, **cfg)


def test_rope_is_off_by_default_and_a_rope_policy_has_no_position_weights():
    assert PolicyConfig().rope is False and fresh().pos is not None
    policy = rope()
    assert policy.pos is None and not any(name.startswith("pos.") for name in policy.state_dict())
    assert policy.num_parameters() == fresh(vocab_size=22, block_size=32, d_model=48).num_parameters() - 32 * 48


def test_turning_queries_and_keys_makes_their_products_depend_on_the_distance_only():
    cos, sin = rotary_table(32, 12)
    q, k = torch.randn(1, 1, 1, 12), torch.randn(1, 1, 1, 12)

    def product(i: int, j: int) -> torch.Tensor:
        return (rotary(q, cos[i : i + 1], sin[i : i + 1]) * rotary(k, cos[j : j + 1], sin[j : j + 1])).sum()

    assert torch.allclose(product(9, 4), product(25, 20), atol=1e-5)
    assert torch.allclose(product(3, 3), (q * k).sum(), atol=1e-5)  # same place: no turn between them
    assert not torch.allclose(product(9, 4), product(9, 5), atol=1e-3)
    assert torch.allclose(rotary(q, cos[5:6], sin[5:6]).norm(), q.norm(), atol=1e-5)  # a turn keeps the length


def test_rotary_table_refuses_an_odd_head_width():
    with pytest.raises(ValueError, match="odd"):
        rotary_table(8, 5)


def test_a_rope_policy_reads_a_text_the_same_wherever_it_stands():
    policy = rope(1)
    ids = torch.tensor([encode("#47+38=7+8=15,4+3+1=8;85#")])
    assert torch.allclose(policy(ids)[0], policy(ids, start=6)[0], atol=1e-5)


def test_a_rope_policy_continues_from_its_cache_and_reads_groups_as_it_reads_rows():
    policy = rope(2)
    ids = torch.tensor([encode("#47+38=7+8=15;85#"), encode("#12+34=46#9+9=18#")])
    full, _ = policy(ids)
    head, cache = policy(ids[:, :7])
    pieces = [head]
    for t in range(7, ids.shape[1]):
        logits, cache = policy(ids[:, t : t + 1], cache, start=t)
        pieces.append(logits)
    assert torch.allclose(torch.cat(pieces, dim=1), full, atol=1e-5)
    continuations = torch.stack([ids[:, 7:], ids[:, 7:].flip(0)])  # (2 prompts, 2 continuations, 10 tokens)
    groups = policy.read_groups(ids[:, :7], continuations)
    for p in range(2):
        for g in range(2):
            alone, _ = policy(torch.cat([ids[p, :7], continuations[p, g]])[None])
            assert torch.allclose(groups[p, g], alone[0, -11:], atol=1e-5)


def test_a_rope_checkpoint_round_trips_and_an_old_one_loads_without_rope():
    policy = rope(3)
    again = Checkpoint.from_data(Checkpoint.of(policy, "w@0").to_data())
    assert again.config.rope and weights_hash(again.load()) == weights_hash(policy)
    old = Checkpoint.of(fresh(3), "base@0").to_data()
    del old["config"]["rope"]  # written before the option existed
    assert Checkpoint.from_data(old).config == PolicyConfig()


def test_widened_copies_a_rope_policy_whole():
    policy = rope(4)
    wider = widened(policy, 40)
    ids = torch.tensor([encode("#47+38=85#")])
    assert wider.cfg.block_size == 40 and torch.equal(wider(ids)[0], policy(ids)[0])
