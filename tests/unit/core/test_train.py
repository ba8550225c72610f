"""Pretraining and SFT (rlbook.core.train): schedule, chat batches, loss going down, determinism."""

from __future__ import annotations

import itertools
import math
import re
from concurrent.futures import ThreadPoolExecutor

import pytest
import torch
import torch.nn.functional as F

from rlbook.core.policy import Policy, PolicyConfig, weights_hash
from rlbook.core.train import (
    PretrainConfig,
    SFTConfig,
    adamw,
    chat_batch,
    descend,
    equation_stream,
    line_starts,
    next_char_loss,
    part_gradients,
    pretrain,
    pretrain_lr,
    random_windows,
    sft,
    sft_loss,
    sft_tasks,
)
from rlbook.core.world import EOT_ID, Task, WorkedTask, decode, encode, split

TINY = PretrainConfig(steps=30, batch=32, warmup=5)


@pytest.fixture
def one_thread():
    """Determinism needs a fixed thread count; restore the caller's afterwards."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.mark.parametrize(
    "step, expected",
    [
        (0, 0.1),  # warm-up: (0 + 1) / 10 of the peak
        (4, 0.5),
        (9, 1.0),  # end of warm-up reaches the peak
        (10, 1.0),  # cosine starts at the peak: 0.1 + 0.9 * 0.5 * (1 + cos 0)
        (55, 0.55),  # halfway through the decay: 0.1 + 0.9 * 0.5 * (1 + cos(pi/2))
        (100, 0.1),  # the end: a tenth of the peak
    ],
)
def test_lr_at_by_hand(step, expected):
    assert pretrain_lr(step, steps=100, peak=1.0, warmup=10) == pytest.approx(expected, abs=1e-12)


def test_lr_at_cosine_value_and_scaling():
    # step 25: progress 15/90 = 1/6, cos(pi/6) = sqrt(3)/2.
    assert pretrain_lr(25, 100, 1.0, 10) == pytest.approx(0.1 + 0.45 * (1 + math.sqrt(3) / 2))
    assert pretrain_lr(25, 100, 3e-3, 10) == pytest.approx(3e-3 * pretrain_lr(25, 100, 1.0, 10))
    values = [pretrain_lr(s, 100, 1.0, 10) for s in range(10, 101)]
    assert all(a >= b for a, b in itertools.pairwise(values))


def test_chat_batch_by_hand():
    ids, mask = chat_batch([Task((3, 4)), Task((9, 8))])
    assert ids.shape == (2, 12) and mask.shape == (2, 11)
    assert decode(ids[0]) == "U:3+4?|A:7##"  # padded with the end-of-turn mark
    assert decode(ids[1]) == "U:9+8?|A:17#"
    # Position t predicts ids[t + 1]: the answer starts at index 9, so positions 8.. are marked.
    assert mask[0].nonzero().flatten().tolist() == [8, 9]
    assert mask[1].nonzero().flatten().tolist() == [8, 9, 10]
    wide, wide_mask = chat_batch([Task((3, 4))], width=15)  # padded further, the answer marked as before
    assert decode(wide[0]) == "U:3+4?|A:7" + "#" * 5 and wide_mask[0].nonzero().flatten().tolist() == [8, 9]


def test_chat_batch_mask_covers_exactly_the_answer_positions():
    tasks = split("sft")[:10] + split("sft", "multi")[:5]
    ids, mask = chat_batch(tasks)
    for row, task in enumerate(tasks):
        targets = decode(ids[row, 1:][mask[row]])
        assert targets == task.completion
        assert int(mask[row].sum()) == len(task.completion)
        first = int(mask[row].nonzero()[0])
        assert decode(ids[row, : first + 1]) == task.prompt


def test_equation_stream_is_seeded_and_well_formed():
    cfg = PretrainConfig()
    a = equation_stream(cfg, chars=500, seed=3)
    assert torch.equal(a, equation_stream(cfg, chars=500, seed=3))
    assert not torch.equal(a[:100], equation_stream(cfg, chars=500, seed=4)[:100])
    assert len(a) >= 500 and EOT_ID not in a.tolist()
    for line in decode(a).splitlines():
        a_, b_, s = map(int, re.fullmatch(r"(\d) ?\+ ?(\d) ?= ?(\d+)", line).groups())
        assert a_ + b_ == s


def test_multi_world_stream_mixes_pairs_and_chains():
    lines = decode(equation_stream(PretrainConfig(world="multi"), chars=3000, seed=0)).splitlines()
    chains = [x for x in lines if "," in x]
    assert 0 < len(chains) < len(lines)
    for line in chains:
        a, b, c, s1, s2 = map(int, re.findall(r"\d+", line))
        assert (s1, s2) == (a + b, a + b + c)


def test_next_char_loss_of_a_fresh_policy_is_near_log_vocab():
    torch.manual_seed(0)
    windows = equation_stream(PretrainConfig(), chars=400, seed=1)[: 17 * 16].view(16, 17)
    loss = next_char_loss(Policy(PolicyConfig()), windows)
    # Initial weights are small (std 0.02): logits are near zero, the loss near ln 21 = 3.04.
    assert loss.item() == pytest.approx(math.log(21), abs=0.05)


def test_a_few_pretrain_steps_lower_the_loss(one_thread):
    windows = equation_stream(PretrainConfig(), chars=2000, seed=99)[: 17 * 64].view(64, 17)
    torch.manual_seed(0)
    before = next_char_loss(Policy(PolicyConfig()), windows).item()
    trained = pretrain(TINY, seed=0)
    with torch.no_grad():
        after = next_char_loss(trained, windows).item()
    assert after < before - 0.5


def test_pretrain_is_deterministic_for_a_seed_and_thread_count(one_thread):
    small = PretrainConfig(steps=8, batch=16, warmup=2)
    first = weights_hash(pretrain(small, seed=1))
    assert weights_hash(pretrain(small, seed=1)) == first
    assert weights_hash(pretrain(small, seed=2)) != first


def test_sft_lowers_the_answer_loss_and_leaves_context_alone(one_thread):
    policy = pretrain(TINY, seed=0)
    ids, mask = chat_batch(split("sft"))

    def answer_loss() -> float:
        with torch.no_grad():
            logits, _ = policy(ids[:, :-1])
            losses = F.cross_entropy(logits.transpose(1, 2), ids[:, 1:], reduction="none")
        return float((losses * mask).sum() / mask.sum())

    before = answer_loss()
    same = sft(policy, SFTConfig(steps=15, replay_batch=16), TINY, seed=0)
    assert same is policy
    assert answer_loss() < before - 0.3
    assert policy.cfg.block_size == 16


def test_part_gradients_add_the_parts_in_order_and_match_the_whole_batch(one_thread):
    torch.manual_seed(0)
    policy = Policy(PolicyConfig())
    windows = equation_stream(PretrainConfig(), chars=2000, seed=3)[: 17 * 32].view(32, 17)
    weights = list(policy.parameters())
    first, second = (torch.autograd.grad(next_char_loss(policy, half) / 2, weights) for half in windows.chunk(2))
    whole = torch.autograd.grad(next_char_loss(policy, windows), weights)
    with ThreadPoolExecutor(1) as pool:
        part_gradients(policy, list(windows.chunk(2)), pool)
    for weight, a, b, full in zip(weights, first, second, whole):
        assert torch.equal(weight.grad, a + b)  # bit for bit: the sum order is fixed, whatever the threads did
        assert torch.allclose(weight.grad, full, atol=1e-7)


@pytest.mark.parametrize("parts", [0, 3])
def test_pretrain_rejects_parts_that_do_not_divide_the_batch(parts):
    with pytest.raises(ValueError, match="divide the batch of 16"):
        pretrain(PretrainConfig(steps=1, batch=16, warmup=1, parts=parts), seed=0)


def test_pretrain_in_parts_is_deterministic_and_close_to_one_part(one_thread):
    small = PretrainConfig(steps=3, batch=16, warmup=1, parts=2)
    halves = pretrain(small, seed=4)
    assert weights_hash(pretrain(small, seed=4)) == weights_hash(halves)
    whole = pretrain(PretrainConfig(steps=3, batch=16, warmup=1, parts=1), seed=4)
    for a, b in zip(halves.parameters(), whole.parameters()):
        assert torch.allclose(a, b, atol=1e-5)


def test_pretrain_uses_the_configured_context():
    policy = pretrain(PretrainConfig(steps=1, batch=2, warmup=1, block_size=24), seed=0)
    assert policy.cfg.block_size == 24
    assert policy(torch.tensor([encode("U:1+2+3?|A:3,6#")]))[0].shape == (1, 15, 21)


def test_pretrain_can_continue_a_pretrained_policy_with_a_longer_context(one_thread):
    start = pretrain(TINY, seed=0)
    before = weights_hash(start)
    longer = PretrainConfig(world="multi", steps=2, batch=4, warmup=1, block_size=24)
    continued = pretrain(longer, seed=0, start=start)
    assert weights_hash(start) == before  # the starting policy is copied, not trained in place
    assert continued.cfg.block_size == 24 and continued is not start
    assert weights_hash(pretrain(longer, seed=0, start=start)) == weights_hash(continued)


def test_the_books_adamw_takes_the_textbook_step():
    torch.manual_seed(0)
    weights = torch.randn(50, requires_grad=True)
    start = weights.detach().clone()
    plain_weights = weights.detach().clone().requires_grad_()
    book, plain = (
        adamw([weights], 1e-2, weight_decay=0.01),
        torch.optim.AdamW([plain_weights], lr=1e-2, weight_decay=0.01, foreach=False),
    )
    for _ in range(3):
        for w, opt in ((weights, book), (plain_weights, plain)):
            opt.zero_grad()
            (w**2).sum().backward()
            opt.step()
    assert torch.allclose(weights, plain_weights, atol=1e-6)
    assert not torch.allclose(weights.detach(), start, atol=1e-3)  # the three steps moved the weights


def test_sft_loss_reads_chat_rows_and_windows_in_one_pass_as_two_reads_would():
    torch.manual_seed(0)
    policy = Policy(PolicyConfig())
    tasks = split("sft")[:5]
    ids, mask = chat_batch(tasks, width=17)
    windows = torch.randint(0, 21, (4, 17), generator=torch.Generator().manual_seed(1))
    narrow_ids, narrow_mask = chat_batch(tasks)
    logits, _ = policy(narrow_ids[:, :-1])
    chat = (F.cross_entropy(logits.transpose(1, 2), narrow_ids[:, 1:], reduction="none") * narrow_mask).sum()
    separately = chat / narrow_mask.sum() + 0.5 * next_char_loss(policy, windows)
    assert sft_loss(policy, ids, mask, windows, replay=0.5).item() == pytest.approx(separately.item(), rel=1e-5)
    assert sft_loss(policy, narrow_ids, narrow_mask).item() == pytest.approx(
        (chat / narrow_mask.sum()).item(), rel=1e-6
    )
    with pytest.raises(ValueError, match="17 tokens wide and the chat rows 11"):
        sft_loss(policy, narrow_ids, narrow_mask, windows)


def test_descend_clips_the_gradient_to_max_norm_when_asked():
    torch.manual_seed(0)
    policy = Policy(PolicyConfig())
    windows = torch.randint(0, 21, (4, 17), generator=torch.Generator().manual_seed(1))
    norm = lambda: torch.cat([p.grad.flatten() for p in policy.parameters()]).norm().item()
    opt = adamw(policy.parameters(), 1e-3)
    descend(opt, 100 * next_char_loss(policy, windows))  # a large gradient, left as it is
    assert norm() > 1.0
    descend(opt, 100 * next_char_loss(policy, windows), max_norm=0.5)
    assert norm() == pytest.approx(0.5, rel=1e-4)


def test_sft_clips_by_default():
    assert SFTConfig().max_grad_norm == 1.0


# ---------------------------------------------------------------- the worked world (chapter 7)

WORKED = PretrainConfig(
    world="worked", steps=20, batch=16, block_size=32, warmup=5, space_prob=0.0, d_model=48, rope=True
)


def test_the_worked_pretraining_shapes_a_wider_rope_policy_over_22_characters():
    assert WORKED.policy_config() == PolicyConfig(vocab_size=22, block_size=32, d_model=48, rope=True)
    assert PretrainConfig().policy_config() == PolicyConfig()  # the chat worlds' policy, as before
    with pytest.raises(ValueError, match="no spaces"):
        PretrainConfig(world="worked", space_prob=0.1)


def test_the_worked_stream_is_as_long_as_the_text_pretraining_reads_and_starts_with_an_end_mark():
    assert WORKED.stream_chars() == 20 * 16 * 32
    assert PretrainConfig().stream_chars() == 1100 * 64 + 10_000  # the chat worlds' short stream, as before
    stream = equation_stream(WORKED, chars=2000, seed=1)
    text = decode(stream)
    assert text[0] == "#" and text.endswith("#") and len(text) >= 2000
    held = {t.prompt for t in split("heldout", "worked")}
    assert not any(
        f"#{line}".startswith(prompt) for line in text[1:-1].split("#") for prompt in held if line[2:3] == "+"
    )


def test_worked_windows_start_at_an_end_mark_so_they_read_as_prompts():
    stream = equation_stream(WORKED, chars=3000, seed=2)
    starts = line_starts(WORKED, stream)
    assert line_starts(PretrainConfig(), stream) is None
    assert (stream[starts] == EOT_ID).all() and int(starts.max()) < len(stream) - WORKED.block_size - 1
    windows = random_windows(stream, 50, WORKED.block_size, torch.Generator().manual_seed(0), starts)
    assert windows.shape == (50, 33) and (windows[:, 0] == EOT_ID).all()


def test_sft_tasks_spread_the_worked_examples_evenly():
    half = sft_tasks("worked", 0.5)
    assert [t.style for t in half[:4]] == ["direct", "worked", "direct", "worked"]
    assert sum(t.style == "worked" for t in half) == 20 and len(half) == 40
    assert all(t.style == "direct" for t in sft_tasks("worked", 0.0))
    assert all(t.style == "worked" for t in sft_tasks("worked", 1.0))
    assert sum(t.style == "worked" for t in sft_tasks("worked", 0.25)) == 10
    assert sft_tasks("single", None) == split("sft")


@pytest.mark.parametrize("world, share", [("worked", None), ("worked", 1.5), ("single", 0.5)])
def test_sft_tasks_refuse_a_share_that_does_not_fit_the_world(world, share):
    with pytest.raises(ValueError, match="worked_share"):
        sft_tasks(world, share)


def test_worked_sft_demonstrates_the_styles_it_is_given(one_thread):
    policy = pretrain(WORKED, seed=0)
    assert policy.cfg.rope and policy.cfg.vocab_size == 22
    ids, mask = chat_batch([WorkedTask((47, 38), "worked")])
    before = float(sft_loss(policy, ids, mask).detach())
    sft(policy, SFTConfig(steps=15, replay_batch=8, worked_share=1.0), WORKED, seed=0)
    assert float(sft_loss(policy, ids, mask).detach()) < before
