"""The policy: a tiny causal character-level transformer, and its checkpoints.

Chapter 1 treats it as a policy: given the state (the prompt plus the
characters written so far) it returns a distribution over the next character,
the action. The layout follows the usual decoder-only recipe (token and
position embeddings, pre-norm attention and MLP blocks, a linear read-out),
kept to one small class per idea so that it can be read in one sitting.
The worked world's policy (chapter 7) replaces the learned position
embeddings with rotary ones (:func:`rotary`), which let attention find "the
character three places back", as copying an operand's digit needs.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import asdict, dataclass, replace

import torch
import torch.nn.functional as F
from torch import nn

from .world import VOCAB

KVCache = list[tuple[torch.Tensor, torch.Tensor]]
FUSED_CAUSAL_STEPS = 16
"""The longest plain causal attention left to PyTorch's fused kernel when no gradient is recorded (:func:`attend`)."""


@functools.lru_cache(maxsize=64)
def causal_bias(steps: int) -> torch.Tensor:
    """A (steps x steps) attention bias: 0 on and below the diagonal, minus infinity above it."""
    return torch.full((steps, steps), float("-inf")).triu_(1)


ROTARY_BASE = 10_000.0
"""The base of the rotary embeddings' wavelengths, as in Su et al. (2021)."""


@dataclass(frozen=True)
class PolicyConfig:
    """Shape of the policy network (about 27k parameters by default).

    ``rope`` replaces the learned position embeddings by rotary position
    embeddings (:func:`rotary`); off by default, which builds, initialises and
    computes exactly the network of the chat worlds' runs.
    """

    vocab_size: int = len(VOCAB)
    block_size: int = 16
    n_layer: int = 2
    n_head: int = 4
    d_model: int = 32
    rope: bool = False


@functools.lru_cache(maxsize=16)
def rotary_table(block_size: int, size: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Cosines and sines of the rotary angles, each (block_size, size / 2): position p turns pair i by p * base^(-2i/size)."""
    if size % 2:
        raise ValueError(f"rotary embeddings turn pairs of numbers; a head of width {size} has an odd one out")
    rates = ROTARY_BASE ** (-torch.arange(0, size, 2, dtype=torch.float32) / size)
    angles = torch.arange(block_size, dtype=torch.float32)[:, None] * rates[None, :]
    return angles.cos(), angles.sin()


def rotary(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """``x`` (..., steps, size) with each pair (x[i], x[i + size/2]) of every step turned by that step's angle.

    ``cos`` and ``sin`` (steps, size / 2) hold the angles of the steps'
    positions (rows of :func:`rotary_table`). Turning queries and keys by
    their positions makes a query-key product depend on the two characters
    and their distance only, not on where they stand (Su et al., 2021).
    """
    first, second = x.chunk(2, dim=-1)
    return torch.cat([first * cos - second * sin, first * sin + second * cos], dim=-1)


def attend_written(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """softmax(q k^T / sqrt(d) + bias) v, for q, k, v of shape (batch, heads, steps, d): attention written out.

    The scaled scores and the bias are added in one ``baddbmm``, which is
    quicker on CPU than a matmul, a scaling and an addition.
    """
    batch, heads, steps, size = q.shape
    scores = torch.baddbmm(
        bias,
        (q * size**-0.5).reshape(batch * heads, steps, size),
        k.reshape(batch * heads, steps, size).transpose(-1, -2),
    )
    return (torch.softmax(scores, dim=-1) @ v.reshape(batch * heads, steps, size)).view(batch, heads, steps, size)


def attend(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    cache: tuple[torch.Tensor, torch.Tensor] | None = None,
    bias: torch.Tensor | None = None,
) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
    """Attention of queries ``q`` over keys ``k`` and values ``v`` (batch, heads, steps, d); returns ``(y, (k, v))``.

    Three ways, one result: under ``bias`` (steps x steps: 0 where a position
    may attend, minus infinity where it may not; the RL update's grouped
    reading, :meth:`Policy.read_groups`), attention written out
    (:func:`attend_written`); continuing from ``cache`` (the cached keys and
    values, while sampling), PyTorch's fused kernel; plain causal attention,
    written out when autograd records it or it is longer than
    :data:`FUSED_CAUSAL_STEPS`, fused otherwise. The keys and values returned
    include the cached ones.
    """
    steps = q.shape[2]
    # Written out, not fused: the fused kernel's backward pass is slower on CPU at these sizes, and a read without
    # gradient written out too gives the reference policy exactly the numbers the update computes for the same
    # weights (rlbook bench times both ways: BENCHMARKS.md).
    if cache is None and (bias is not None or torch.is_grad_enabled() or steps > FUSED_CAUSAL_STEPS):
        return attend_written(q, k, v, causal_bias(steps) if bias is None else bias), (k, v)
    mask = None
    if cache is not None:
        past = cache[0].shape[2]
        k = torch.cat([cache[0], k], dim=2)
        v = torch.cat([cache[1], v], dim=2)
        # New position i sees every cached position and the new ones up to i.
        mask = torch.ones(steps, past + steps, dtype=torch.bool).tril(past) if steps > 1 else None
    y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=cache is None and steps > 1)
    return y, (k, v)


class SelfAttention(nn.Module):
    """Multi-head causal self-attention with an optional key/value cache."""

    def __init__(self, cfg: PolicyConfig):
        super().__init__()
        self.n_head = cfg.n_head
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model)
        self.out = nn.Linear(cfg.d_model, cfg.d_model)

    def heads(self, x: torch.Tensor) -> torch.Tensor:
        """Queries, keys and values of ``x`` (batch, steps, width), each (batch, heads, steps, width / heads)."""
        batch, steps, width = x.shape
        return self.qkv(x).view(batch, steps, 3, self.n_head, width // self.n_head).permute(2, 0, 3, 1, 4)

    def turned_heads(self, x: torch.Tensor, turns: tuple[torch.Tensor, torch.Tensor]):
        """:meth:`heads` with the queries and keys turned by their positions' angles (:func:`rotary`), both at once."""
        qkv = self.heads(x)
        q, k = rotary(qkv[:2], *turns)
        return q, k, qkv[2]

    def merged(self, y: torch.Tensor) -> torch.Tensor:
        """The heads' outputs (batch, heads, steps, width / heads) side by side, through the output projection."""
        batch, heads, steps, size = y.shape
        return self.out(y.transpose(1, 2).reshape(batch, steps, heads * size))

    def forward(
        self,
        x: torch.Tensor,
        cache: tuple[torch.Tensor, torch.Tensor] | None = None,
        bias: torch.Tensor | None = None,
        turns: tuple[torch.Tensor, torch.Tensor] | None = None,
    ):
        """Attend causally (continuing from ``cache`` if given), or under ``bias`` (:func:`attend`).

        ``turns`` (the cosines and sines of the steps' positions) turns the
        queries and keys first (:meth:`turned_heads`); the cache keeps turned keys.
        """
        q, k, v = self.heads(x) if turns is None else self.turned_heads(x, turns)
        y, keys_values = attend(q, k, v, cache, bias)
        return self.merged(y), keys_values


class Block(nn.Module):
    """One transformer block: pre-norm attention then a pre-norm MLP, each residual."""

    def __init__(self, cfg: PolicyConfig):
        super().__init__()
        self.ln1 = nn.LayerNorm(cfg.d_model)
        self.attn = SelfAttention(cfg)
        self.ln2 = nn.LayerNorm(cfg.d_model)
        self.mlp = nn.Sequential(
            nn.Linear(cfg.d_model, 4 * cfg.d_model), nn.GELU(), nn.Linear(4 * cfg.d_model, cfg.d_model)
        )

    def forward(
        self,
        x: torch.Tensor,
        cache=None,
        bias: torch.Tensor | None = None,
        turns: tuple[torch.Tensor, torch.Tensor] | None = None,
    ):
        attended, new_cache = self.attn(self.ln1(x), cache, bias, turns)
        x = x + attended
        return x + self.mlp(self.ln2(x)), new_cache


class Policy(nn.Module):
    """The next-character distribution pi(a | s) as a causal transformer.

    ``forward(ids)`` returns logits of shape (batch, steps, vocab); with
    ``cache`` it continues from cached keys and values (used by sampling).
    """

    version: str  # the id ``<run>@<step>`` attached by Checkpoint.load and the training loops

    def __init__(self, cfg: PolicyConfig = PolicyConfig()):
        super().__init__()
        self.cfg = cfg
        self.tok = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.pos = None if cfg.rope else nn.Embedding(cfg.block_size, cfg.d_model)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.ln_f = nn.LayerNorm(cfg.d_model)
        self.head: nn.Module = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)  # RewardModel swaps in nn.Identity
        self.apply(_init_weights)

    def forward(self, ids: torch.Tensor, cache: KVCache | None = None, start: int = 0):
        steps = ids.shape[1]
        if start + steps > self.cfg.block_size:
            raise ValueError(f"sequence of {start + steps} tokens exceeds the context of {self.cfg.block_size}")
        positions = torch.arange(start, start + steps, device=ids.device)
        x, turns = self.embed(ids, positions)
        new_cache: KVCache = []
        for i, block in enumerate(self.blocks):
            x, layer_cache = block(x, None if cache is None else cache[i], turns=turns)
            new_cache.append(layer_cache)
        return self.head(self.ln_f(x)), new_cache

    def embed(self, ids: torch.Tensor, positions: torch.Tensor):
        """The embeddings of ``ids`` at ``positions``, and the rotary angles of those positions (None without rope).

        Without rope a position's learned embedding is added to the
        character's; with it, positions enter attention only (:func:`rotary`).
        """
        if self.pos is not None:
            return self.tok(ids) + self.pos(positions), None
        cos, sin = rotary_table(self.cfg.block_size, self.cfg.d_model // self.cfg.n_head)
        return self.tok(ids), (cos[positions], sin[positions])

    def read_groups(self, prompts: torch.Tensor, continuations: torch.Tensor) -> torch.Tensor:
        """Logits after a prompt and after each token of several continuations of it, in one pass.

        ``prompts`` has shape (P, Lp) and ``continuations`` (P, G, C): G
        continuations of C tokens for each prompt. Returns logits of shape
        (P, G, C + 1, vocab): index 0 is the next-character distribution after
        the prompt, index j + 1 the one after continuation token j. The same
        numbers (up to float rounding) as reading each prompt + continuation
        row on its own, but each prompt is one sequence: the prompt, then its
        G continuations one after another, each given the positions that
        follow the prompt and a mask that lets it see the prompt and its own
        earlier tokens only. Chapter 3's update reads a group's rollouts this
        way, with far fewer, larger attention problems than one per rollout.
        """
        (n_prompts, prompt_len), (groups, steps) = prompts.shape, continuations.shape[1:]
        if prompt_len + steps > self.cfg.block_size:
            raise ValueError(f"sequence of {prompt_len + steps} tokens exceeds the context of {self.cfg.block_size}")
        follows = torch.arange(prompt_len, prompt_len + steps).repeat(groups)
        positions = torch.cat([torch.arange(prompt_len), follows])
        owner = torch.cat([torch.full((prompt_len,), -1), torch.arange(groups).repeat_interleave(steps)])
        visible = (owner[None, :] == -1) | (owner[None, :] == owner[:, None])
        allowed = visible & (positions[None, :] <= positions[:, None])
        bias = torch.zeros(allowed.shape).masked_fill_(~allowed, float("-inf"))
        x, turns = self.embed(torch.cat([prompts, continuations.reshape(n_prompts, groups * steps)], dim=1), positions)
        for block in self.blocks:
            x, _ = block(x, bias=bias, turns=turns)
        logits = self.head(self.ln_f(x))
        after_prompt = logits[:, None, prompt_len - 1 : prompt_len].expand(-1, groups, -1, -1)
        after_tokens = logits[:, prompt_len:].reshape(n_prompts, groups, steps, -1)
        return torch.cat([after_prompt, after_tokens], dim=2)

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())


def _init_weights(module: nn.Module) -> None:
    if isinstance(module, (nn.Linear, nn.Embedding)):
        nn.init.normal_(module.weight, std=0.02)
    if isinstance(module, nn.Linear) and module.bias is not None:
        nn.init.zeros_(module.bias)


def widened(policy: Policy, block_size: int) -> Policy:
    """A copy of ``policy`` that reads ``block_size`` characters of context.

    Every weight is copied; the position embeddings beyond the old context
    start from a fresh initialisation (drawn from torch's global generator,
    so seed it first). ``process-base`` (chapter 2) continues ``base``'s
    pretrained policy this way with a longer context for its longer prompts.
    A policy with rotary positions has no position weights: its copy is
    whole.
    """
    if block_size < policy.cfg.block_size:
        raise ValueError(f"cannot shorten a context of {policy.cfg.block_size} to {block_size}")
    wider = Policy(replace(policy.cfg, block_size=block_size))
    state = policy.state_dict()
    if wider.pos is not None:
        state["pos.weight"] = torch.cat([state["pos.weight"], wider.pos.weight.detach()[policy.cfg.block_size :]])
    wider.load_state_dict(state)
    return wider


def token_logprobs(policy: Policy, ids: torch.Tensor) -> torch.Tensor:
    """log pi(ids[:, t] | ids[:, :t]) for t >= 1; shape (batch, steps - 1).

    Chapter 3 uses it to recompute the log-probabilities of recorded tokens
    under the policy being trained.
    """
    logits, _ = policy(ids[:, :-1])
    return torch.log_softmax(logits, dim=-1).gather(-1, ids[:, 1:, None]).squeeze(-1)


def weights_hash(policy: Policy) -> str:
    """A short SHA-256 of the weights: equal hashes mean identical weights."""
    digest = hashlib.sha256()
    for name, tensor in sorted(policy.state_dict().items()):
        digest.update(name.encode())
        digest.update(tensor.detach().cpu().contiguous().numpy().tobytes())
    return digest.hexdigest()[:16]


@dataclass
class Checkpoint:
    """A saved policy: its config, weights and a version id ``<run>@<step>``."""

    config: PolicyConfig
    state: dict
    version: str

    @classmethod
    def of(cls, policy: Policy, version: str) -> Checkpoint:
        state = {k: v.detach().clone() for k, v in policy.state_dict().items()}
        return cls(policy.cfg, state, version)

    def load(self) -> Policy:
        """A fresh Policy module holding these weights, with ``version`` attached."""
        policy = Policy(self.config)
        policy.load_state_dict(self.state)
        policy.version = self.version
        return policy

    def to_data(self) -> dict:
        """The checkpoint as plain data (tensors, numbers, strings), which ``torch.load(weights_only=True)`` reads.

        The run cache stores this rather than a pickled object, so a cache
        entry never runs code when it is loaded and never depends on where
        the class is defined.
        """
        return {"config": asdict(self.config), "state": self.state, "version": self.version}

    @classmethod
    def from_data(cls, data: dict) -> Checkpoint:
        """The checkpoint that :meth:`to_data` wrote; a ValueError names what is missing or of the wrong kind."""
        if not isinstance(data, dict) or set(data) != {"config", "state", "version"}:
            raise ValueError(f"a checkpoint has the fields config, state and version; got {_keys(data)}")
        if (
            not isinstance(data["version"], str)
            or not isinstance(data["config"], dict)
            or not isinstance(data["state"], dict)
            or not all(isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in data["state"].items())
        ):
            raise ValueError("a checkpoint's version is a string, its config a dict and its state a dict of tensors")
        try:
            config = PolicyConfig(**data["config"])
        except TypeError as err:
            raise ValueError(f"a checkpoint's config does not fit PolicyConfig: {err}") from None
        return cls(config, data["state"], data["version"])


def _keys(value: object) -> str:
    return f"the fields {sorted(map(str, value))}" if isinstance(value, dict) else f"a {type(value).__name__}"
