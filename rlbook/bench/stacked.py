"""Would training several seeds as one model pay? ``rlbook bench`` measures it (issue 52's batched seeds).

:func:`stacked_forward` is the book's policy (learned positions, the chat
worlds' network) written with a leading seed dimension in every weight and
activation: each linear layer is one ``baddbmm`` over the seeds, each layer
norm normalises per seed and applies that seed's scale and shift, and
attention runs over seeds x rows at once. :func:`stacked_seeds` times a
forward and backward pass of three seeds' policies that way against the
same three run one after another through :class:`rlbook.core.policy.Policy`,
at three batch sizes, and through ``torch.func.vmap`` as well; and it checks
whether a seed's loss and gradients are bit for bit the same in a stack of
three as in a stack of one.
"""

from __future__ import annotations

import copy
import statistics
import time

import torch
import torch.nn.functional as F
from torch.func import functional_call, grad, stack_module_state, vmap

from rlbook.core.policy import Policy, attend_written, causal_bias

ROWS = (16, 128, 960)
"""Rows of a batch (sequences of :data:`STEPS` tokens): one group of 16 answers, a pretraining batch of 128 windows,
and an RL batch of 60 prompts x 16 answers."""
STEPS = 13
"""Tokens per row: a chat prompt and its answer within the budget."""

Stack = dict[str, torch.Tensor]


def stack(policies: list[Policy]) -> Stack:
    """Every parameter of ``policies`` (one architecture) stacked along a new first dimension, one slice per seed,
    as leaf tensors that collect gradients."""
    named = [dict(p.named_parameters()) for p in policies]
    return {name: torch.stack([n[name].detach() for n in named]).requires_grad_() for name in named[0]}


def _linear(params: Stack, name: str, x: torch.Tensor, bias: bool = True) -> torch.Tensor:
    weight = params[name + ".weight"].transpose(1, 2)
    return torch.baddbmm(params[name + ".bias"][:, None, :], x, weight) if bias else torch.bmm(x, weight)


def _norm(params: Stack, name: str, x: torch.Tensor) -> torch.Tensor:
    return F.layer_norm(x, x.shape[-1:]) * params[name + ".weight"][:, None, :] + params[name + ".bias"][:, None, :]


def stacked_forward(params: Stack, ids: torch.Tensor, n_head: int) -> torch.Tensor:
    """Logits (seeds, rows * steps, vocab) of each seed's policy on its own rows ``ids`` (seeds, rows, steps)."""
    seeds, rows, steps = ids.shape
    width = params["tok.weight"].shape[-1]
    x = params["tok.weight"][torch.arange(seeds)[:, None, None], ids] + params["pos.weight"][:, None, :steps, :]
    x = x.reshape(seeds, rows * steps, width)
    bias = causal_bias(steps)
    layers = 1 + max(int(name.split(".")[1]) for name in params if name.startswith("blocks."))
    for i in range(layers):
        block = f"blocks.{i}."
        qkv = _linear(params, block + "attn.qkv", _norm(params, block + "ln1", x))
        q, k, v = qkv.view(seeds * rows, steps, 3, n_head, width // n_head).permute(2, 0, 3, 1, 4)
        attended = attend_written(q, k, v, bias).transpose(1, 2).reshape(seeds, rows * steps, width)
        x = x + _linear(params, block + "attn.out", attended)
        x = x + _linear(
            params, block + "mlp.2", F.gelu(_linear(params, block + "mlp.0", _norm(params, block + "ln2", x)))
        )
    return _linear(params, "head", _norm(params, "ln_f", x), bias=False)


def stacked_losses(params: Stack, ids: torch.Tensor, targets: torch.Tensor, n_head: int) -> torch.Tensor:
    """Each seed's mean cross-entropy on its own rows: one loss per seed, whose sum's gradient is, slice by slice,
    each seed's own."""
    logits = stacked_forward(params, ids, n_head)
    flat = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), reduction="none")
    return flat.view(ids.shape[0], -1).mean(dim=1)


def _median_ms(fn, repeats: int) -> float:
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def same_alone_and_stacked(policies: list[Policy], ids: torch.Tensor, targets: torch.Tensor) -> bool:
    """Whether every seed's loss and gradients in a stack of all ``policies`` equal, bit for bit, those of the same
    stacked code run with that seed alone."""
    n_head = policies[0].cfg.n_head
    together = stack(policies)
    losses = stacked_losses(together, ids, targets, n_head)
    losses.sum().backward()
    for s, policy in enumerate(policies):
        alone = stack([policy])
        one = stacked_losses(alone, ids[s : s + 1], targets[s : s + 1], n_head)
        one.sum().backward()
        grads_equal = all(torch.equal(alone[n].grad[0], together[n].grad[s]) for n in together)  # type: ignore[index]
        if not (torch.equal(one[0], losses[s]) and grads_equal):
            return False
    return True


def _at_size(policies: list[Policy], rows: int, repeats: int) -> dict:
    """:func:`stacked_seeds` at one batch size."""
    vocab, n_head = policies[0].cfg.vocab_size, policies[0].cfg.n_head
    gen = torch.Generator().manual_seed(rows)
    ids = torch.randint(0, vocab, (len(policies), rows, STEPS), generator=gen)
    targets = torch.randint(0, vocab, (len(policies), rows, STEPS), generator=gen)
    params = stack(policies)
    frozen, buffers = stack_module_state(policies)
    skeleton = copy.deepcopy(policies[0]).to("meta")

    def one_loss(p, b, x, t):
        logits = functional_call(skeleton, (p, b), (x,))[0]
        return F.cross_entropy(logits.reshape(-1, vocab), t.reshape(-1))

    vmapped = vmap(grad(one_loss))

    def alone() -> None:
        for s, policy in enumerate(policies):
            policy.zero_grad(set_to_none=True)
            F.cross_entropy(policy(ids[s])[0].reshape(-1, vocab), targets[s].reshape(-1)).backward()

    def stacked() -> None:
        for tensor in params.values():
            tensor.grad = None
        stacked_losses(params, ids, targets, n_head).sum().backward()

    return {
        "rows": rows,
        "alone_ms": _median_ms(alone, repeats),
        "stacked_ms": _median_ms(stacked, repeats),
        "vmap_ms": _median_ms(lambda: vmapped(frozen, buffers, ids, targets), repeats),
        "identical": same_alone_and_stacked(policies, ids, targets),
    }


def stacked_seeds(policies: list[Policy], repeats: int) -> list[dict]:
    """For each batch size of :data:`ROWS`: the forward and backward of ``policies`` one after another, stacked,
    and vmapped (milliseconds, medians of ``repeats``), and whether stacking kept each seed bit-identical."""
    return [_at_size(policies, rows, repeats) for rows in ROWS]


def stacked_rows(results: list[dict], seeds: int) -> list[str]:
    """The benchmark table's rows for :func:`stacked_seeds`."""
    return [
        (
            f"| {seeds} seeds' forward and backward, {r['rows']} rows x {STEPS} tokens: one after another / stacked "
            f"(baddbmm) / vmapped | {r['alone_ms']:.2f} / {r['stacked_ms']:.2f} / {r['vmap_ms']:.2f} ms "
            f"({r['alone_ms'] / r['stacked_ms']:.2f}x stacked); a seed's result in a stack of {seeds} = in a stack "
            f"of 1, bit for bit: {'yes' if r['identical'] else 'no'} |"
        )
        for r in results
    ]
