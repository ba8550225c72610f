"""Supervised training: pretraining on plain equations, then SFT on chat examples.

Chapter 1 contrasts the two ways of teaching: SFT *demonstrates* answers (this
module); RL *judges* the policy's own attempts (``rlbook.core.rl``). The base
policy of every RL run in the book is made here.
"""

from __future__ import annotations

import math
import random
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import cast

import torch
import torch.nn.functional as F

from .adamw import AdamW
from .choices import check_choice
from .policy import Policy, PolicyConfig, widened
from .progress import progress
from .world import EOT, EOT_ID, STYLES, WORLDS, Task, WorkedTask, encode, equation_line, split, vocab_size, worked_line


@dataclass(frozen=True)
class PretrainConfig:
    """Pretraining on a random stream of equation lines such as ``3+4=7``.

    ``world="single"`` streams every pair a+b with digits 0-9;
    ``world="multi"`` streams a mix of ``x+y=z`` lines (x 0-18, y 0-9, so
    that adding a digit to a partial sum is learnable) and ``a+b+c=s1,s2``
    chains; ``world="worked"`` streams single columns and two-digit sums in
    both answer styles, never a held-out pair and never a space
    (:func:`rlbook.core.world.worked_line`), so its ``space_prob`` is 0.

    ``d_model`` (the width) and ``rope`` (rotary positions) shape the policy
    it trains (:class:`rlbook.core.policy.PolicyConfig`); the vocabulary is
    the world's (:func:`rlbook.core.world.vocab_size`).

    The defaults are the book's ``base`` recipe. Few random spaces
    (``space_prob=0.1``) let 1,100 steps learn most of the addition table in
    plain text; ``base`` then keeps its chat answers well below that knowledge
    through a short SFT, which is what leaves RL something to do.

    ``parts`` splits each batch into that many equal parts, each read on its
    own Python thread (:func:`part_gradients`). ``base`` uses 2: its
    pretraining is the one stretch of the book's training that nothing else
    can run beside, since every run descends from it, so a second core
    would otherwise sit idle. ``process-base`` uses 1: it trains while
    another run holds the second core, where a second thread would only
    contend for it.
    """

    world: str = "single"
    steps: int = 1100
    batch: int = 128
    block_size: int = 16
    lr: float = 3e-3
    warmup: int = 100
    space_prob: float = 0.1
    chain_share: float = 0.3
    parts: int = 2
    d_model: int = 32
    rope: bool = False

    def __post_init__(self) -> None:
        check_choice(self, "world", WORLDS)
        if self.world == "worked" and self.space_prob:
            raise ValueError(f"the worked world's lines have no spaces; its space_prob is 0, got {self.space_prob}")

    def stream_chars(self) -> int:
        """How many characters of equation lines pretraining draws its windows from.

        The chat worlds re-read a short stream many times, since it holds
        every one of their 100 pairs or 1,000 triples many times over. The
        worked world's stream is as long as the text pretraining reads, so
        that the policy sees its 7,800 pairs fresh and learns to add them
        rather than remember a few thousand answers.
        """
        if self.world == "worked":
            return self.steps * self.batch * self.block_size
        return self.steps * 64 + 10_000

    def policy_config(self) -> PolicyConfig:
        """The shape of the policy this pretraining trains."""
        return PolicyConfig(
            vocab_size=vocab_size(self.world), block_size=self.block_size, d_model=self.d_model, rope=self.rope
        )


@dataclass(frozen=True)
class SFTConfig:
    """Full-batch supervised fine-tuning on the chat examples of the ``sft`` split.

    ``replay`` weighs a second loss on ``replay_batch`` windows of the
    pretraining stream, so that learning the chat format does not erase the
    arithmetic learnt in pretraining (0 turns replay off). The default 175
    steps teach the chat format only in part: ``base`` answers about half of
    the held-out sums right though it knows more of them in plain text.

    ``worked_share`` (worked world only, where it must be given) is the
    share of the examples written in the worked style, spread evenly over
    them (:func:`sft_tasks`); the others answer directly.

    Each step's gradient is clipped to a norm of ``max_grad_norm`` (None:
    no clipping). Without it, a late loss spike could wreck a run: one seed
    of ``process-base`` went from about 0.5 to 0.04 held-out accuracy in its last
    step, when the gradient norm jumped from about 5 to 170. With the clip,
    seeds 0-2 of ``base`` and ``process-base`` in nine numerical variants
    (54 runs) ended between 0.36 and 0.53 held-out expected reward.
    """

    steps: int = 175
    lr: float = 1e-3
    replay: float = 1.0
    replay_batch: int = 64
    max_grad_norm: float | None = 1.0
    worked_share: float | None = None


def _stream_tasks(cfg: PretrainConfig, rng: random.Random) -> Task:
    if cfg.world == "single":
        return Task((rng.randrange(10), rng.randrange(10)))
    if rng.random() < cfg.chain_share:
        return Task((rng.randrange(10), rng.randrange(10), rng.randrange(10)))
    return Task((rng.randrange(19), rng.randrange(10)))


def equation_stream(cfg: PretrainConfig, chars: int, seed: int) -> torch.Tensor:
    """Token ids of a random stream of about ``chars`` characters of equation lines.

    The worked world's stream starts with an end mark, so that every line
    follows one, as a worked prompt does.
    """
    rng = random.Random(seed)
    # every worked task adds two numbers
    excluded = (
        frozenset(cast("tuple[int, int]", t.operands) for t in split("heldout", "worked"))
        if cfg.world == "worked"
        else frozenset()
    )
    lines, total = [EOT] if cfg.world == "worked" else [], 0
    while total < chars:
        if cfg.world == "worked":
            line = worked_line(rng, excluded)
        else:
            line = equation_line(_stream_tasks(cfg, rng), rng, cfg.space_prob)
        lines.append(line)
        total += len(line)
    return torch.tensor(encode("".join(lines)), dtype=torch.long)


def pretrain_lr(step: int, steps: int, peak: float, warmup: int) -> float:
    """Pretraining's learning rate at ``step`` (from 0): linear warm-up to ``peak``, then cosine decay to a tenth of it.

    RL's schedule is :func:`rlbook.core.rl.warmup_lr` (warm-up, then constant).
    """
    if step < warmup:
        return peak * (step + 1) / warmup
    progress_frac = (step - warmup) / max(1, steps - warmup)
    return peak * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress_frac)))


def adamw(parameters, lr: float, weight_decay: float = 0.0) -> AdamW:
    """The book's optimiser: AdamW written out over one flat vector of weights (:mod:`rlbook.core.adamw`).

    Pretraining, SFT and every RL update (chapters 1 and 3) use it.
    """
    return AdamW(parameters, lr=lr, weight_decay=weight_decay)


def random_windows(
    stream: torch.Tensor, batch: int, block_size: int, gen: torch.Generator, starts: torch.Tensor | None = None
) -> torch.Tensor:
    """``batch`` windows of ``block_size + 1`` consecutive token ids, starting at random places in ``stream``.

    ``starts`` (default: anywhere) lists the places a window may start at
    (:func:`line_starts`).
    """
    if starts is None:
        starts = torch.randint(0, len(stream) - block_size - 1, (batch,), generator=gen)
    else:
        starts = starts[torch.randint(0, len(starts), (batch,), generator=gen)]
    return stream[starts[:, None] + torch.arange(block_size + 1)]


def line_starts(cfg: PretrainConfig, stream: torch.Tensor) -> torch.Tensor | None:
    """Where pretraining's windows start: anywhere in the chat worlds (None); in the worked world at an end mark.

    A worked window then reads as a prompt does, the end mark of the line
    before and a whole line after it, and the text that a worked line
    copies from its sum is never cut off; every position of it teaches
    something (chapter 7).
    """
    if cfg.world != "worked":
        return None
    marks = (stream == EOT_ID).nonzero().flatten()
    return marks[marks < len(stream) - cfg.block_size - 1]


def descend(opt: AdamW, loss: torch.Tensor, max_norm: float | None = None) -> None:
    """One gradient step on ``loss``: clear the old gradients, backpropagate, clip to ``max_norm`` if given, update."""
    opt.zero_grad(set_to_none=True)
    loss.backward()
    if max_norm is not None:
        torch.nn.utils.clip_grad_norm_([p for group in opt.param_groups for p in group["params"]], max_norm)
    opt.step()


def part_gradients(policy: Policy, parts: list[torch.Tensor], pool: ThreadPoolExecutor) -> None:
    """Set each weight's gradient to that of the mean loss over all ``parts`` (equal batches of windows).

    Each part's loss is differentiated on a thread of its own (the first on
    the calling thread, the others on ``pool``'s), since PyTorch lets go of
    Python's lock while it computes; the parts' gradients are then added in
    part order. So the numbers are the same however the threads happen to
    be scheduled, or with the parts read one after another.
    """
    weights = list(policy.parameters())

    def gradients(windows: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return torch.autograd.grad(next_char_loss(policy, windows) / len(parts), weights)

    later = [pool.submit(gradients, windows) for windows in parts[1:]]
    summed = list(gradients(parts[0]))
    for future in later:
        summed = [total + g for total, g in zip(summed, future.result())]
    for weight, g in zip(weights, summed):
        weight.grad = g


def pretrain_step(policy: Policy, opt: AdamW, windows: torch.Tensor, parts: int, pool: ThreadPoolExecutor) -> None:
    """One gradient step on the next-character loss of ``windows``, read whole or in ``parts`` on ``pool``'s threads.

    The step of :func:`pretrain`, which ``rlbook bench`` also times on its own.
    """
    if parts == 1:
        descend(opt, next_char_loss(policy, windows))
    else:
        part_gradients(policy, list(windows.chunk(parts)), pool)
        opt.step()


def pretrain(cfg: PretrainConfig, seed: int, desc: str = "pretrain", start: Policy | None = None) -> Policy:
    """Train a policy to predict the next character of equation lines.

    The policy is fresh, or a copy of ``start`` (already pretrained, perhaps
    on another world) widened to ``cfg.block_size`` and trained further.
    With ``cfg.parts`` > 1, each step's batch is read in parts on as many
    threads (:func:`part_gradients`).
    """
    if cfg.parts < 1 or cfg.batch % cfg.parts:
        raise ValueError(f"parts must be at least 1 and divide the batch of {cfg.batch}, got {cfg.parts}")
    torch.manual_seed(seed)
    policy = Policy(cfg.policy_config()) if start is None else widened(start, cfg.block_size)
    stream = equation_stream(cfg, chars=cfg.stream_chars(), seed=seed)
    starts = line_starts(cfg, stream)
    gen = torch.Generator().manual_seed(seed)
    opt = adamw(policy.parameters(), cfg.lr, weight_decay=0.01)
    with ThreadPoolExecutor(max(1, cfg.parts - 1)) as pool:
        for step in progress(range(cfg.steps), desc=desc):
            for group in opt.param_groups:
                group["lr"] = pretrain_lr(step, cfg.steps, cfg.lr, cfg.warmup)
            pretrain_step(policy, opt, random_windows(stream, cfg.batch, cfg.block_size, gen, starts), cfg.parts, pool)
    return policy


def chat_batch(tasks: list[Task], width: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Ids of ``prompt + completion`` for each task, padded with EOT (to ``width`` if longer), and a mask of answer positions.

    The mask marks the positions whose *next* token is part of the answer,
    so the loss is taken on answer tokens only, never on the prompt.
    """
    texts = [t.prompt + t.completion for t in tasks]
    width = max(width, *map(len, texts))
    ids = torch.tensor([encode(x + EOT * (width - len(x))) for x in texts], dtype=torch.long)
    mask = torch.zeros(len(tasks), width - 1, dtype=torch.bool)
    for i, t in enumerate(tasks):
        mask[i, len(t.prompt) - 1 : len(t.prompt) - 1 + len(t.completion)] = True
    return ids, mask


def next_char_loss(policy: Policy, windows: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy of predicting each next character of the windows."""
    logits, _ = policy(windows[:, :-1])
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), windows[:, 1:].reshape(-1))


def sft_loss(
    policy: Policy, ids: torch.Tensor, mask: torch.Tensor, windows: torch.Tensor | None = None, replay: float = 1.0
) -> torch.Tensor:
    """One SFT step's loss: cross-entropy on the answer tokens of the chat rows, plus ``replay`` times the windows' loss.

    ``ids`` and ``mask`` come from :func:`chat_batch`; ``windows`` (as wide
    as ``ids``) are replayed pretraining text, whose every next character
    counts (:func:`next_char_loss`). The chat rows and the windows are read
    in one pass of the policy: each row's logits depend on that row alone,
    and one pass costs less than two on a model this small.
    """
    if windows is not None and windows.shape[1] != ids.shape[1]:
        raise ValueError(
            f"the windows are {windows.shape[1]} tokens wide and the chat rows {ids.shape[1]}; "
            "pad the chat rows to the windows' width (chat_batch's width)"
        )
    rows = ids if windows is None else torch.cat([ids, windows])
    logits, _ = policy(rows[:, :-1])
    losses = F.cross_entropy(logits.transpose(1, 2), rows[:, 1:], reduction="none")
    loss = (losses[: len(ids)] * mask).sum() / mask.sum()
    return loss if windows is None else loss + replay * losses[len(ids) :].mean()


def sft_tasks(world: str, worked_share: float | None) -> list[Task]:
    """The examples SFT demonstrates: the ``sft`` split, in the worked world with ``worked_share`` of them worked.

    Example i (from 0) is worked when ``floor((i + 1) * share)`` exceeds
    ``floor(i * share)``, which spreads the worked ones evenly: every other
    one at 0.5, none at 0, all at 1. Chapter 7's ``worked-base`` shows half
    its examples worked, ``worked-direct-base`` none.
    """
    tasks = split("sft", world)
    if world != "worked":
        if worked_share is not None:
            raise ValueError(f"worked_share is for the worked world's SFT; the {world} world has one answer style")
        return tasks
    if worked_share is None or not 0.0 <= worked_share <= 1.0:
        raise ValueError(f"the worked world's SFT needs worked_share between 0 and 1, got {worked_share!r}")
    return [
        replace(
            cast(WorkedTask, t), style=STYLES[int(math.floor((i + 1) * worked_share) > math.floor(i * worked_share))]
        )
        for i, t in enumerate(tasks)
    ]


def sft(policy: Policy, cfg: SFTConfig, stream_cfg: PretrainConfig, seed: int, desc: str = "sft") -> Policy:
    """Fine-tune on :func:`sft_tasks`' examples, loss on answer tokens only, with replay (:func:`sft_loss`)."""
    ids, mask = chat_batch(
        sft_tasks(stream_cfg.world, cfg.worked_share), width=stream_cfg.block_size + 1 if cfg.replay > 0 else 0
    )
    stream = equation_stream(stream_cfg, chars=50_000, seed=seed + 100_000)
    starts = line_starts(stream_cfg, stream)
    gen = torch.Generator().manual_seed(seed + 100_000)
    opt = adamw(policy.parameters(), cfg.lr)
    for _ in progress(range(cfg.steps), desc=desc):
        windows = (
            random_windows(stream, cfg.replay_batch, stream_cfg.block_size, gen, starts) if cfg.replay > 0 else None
        )
        descend(opt, sft_loss(policy, ids, mask, windows, cfg.replay), cfg.max_grad_norm)
    return policy
