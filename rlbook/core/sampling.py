"""Sampling rollouts from the policy, and the record each rollout keeps.

Chapter 1 samples the policy to estimate expected reward; chapter 3 relies on
what is recorded here: the generated token ids and their log-probabilities
under the policy that sampled them, never text re-tokenised afterwards.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from .policy import Policy
from .world import BUDGET, EOT_ID, TOKENS, encode

# Token id i as the byte of its character, to decode a batch of rollouts in one translation.
_ASCII = bytes(ord(ch) for ch in TOKENS).ljust(256, b"\x00")


@dataclass
class Rollouts:
    """A batch of sampled episodes, as generated.

    Row ``i`` answers ``prompts[i]``; rows of one prompt are contiguous groups
    of ``group_size``. ``tokens`` holds the generated ids, ``logprobs`` their
    log-probabilities under the sampling distribution (the policy's softmax
    at ``temperature``), and ``mask`` is True for tokens the policy actually
    wrote (up to and including the end-of-turn mark). Positions after the end
    hold the end-of-turn id and are masked out.
    """

    prompts: list[str]
    prompt_ids: torch.Tensor
    tokens: torch.Tensor
    logprobs: torch.Tensor
    mask: torch.Tensor
    policy_version: str
    settings: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.prompts)

    @property
    def group_size(self) -> int:
        return int(self.settings.get("group_size", 1))

    @property
    def lengths(self) -> torch.Tensor:
        """Number of generated tokens in each episode."""
        return self.mask.sum(dim=1)

    @property
    def ended(self) -> torch.Tensor:
        """True where the episode ended with the end-of-turn mark."""
        return ((self.tokens == EOT_ID) & self.mask).any(dim=1)

    def termination(self) -> list[str]:
        """Why each episode ended: ``"end-of-turn"`` or ``"budget"``."""
        return ["end-of-turn" if e else "budget" for e in self.ended.tolist()]

    def completions(self) -> list[str]:
        """The generated text of each episode (decoded for the verifier only).

        The whole batch is decoded at once (every character is one byte) and
        then cut into rows, which is many times quicker than decoding each
        row on its own, as evaluations of thousands of samples do.
        """
        width = self.tokens.shape[1]
        text = self.tokens.to(torch.uint8).numpy().tobytes().translate(_ASCII).decode("ascii")
        return [text[i * width : i * width + n] for i, n in enumerate(self.lengths.tolist())]

    def select(self, rows) -> Rollouts:
        """The rollouts at the given row indices (a list or a bool/long tensor)."""
        rows = torch.as_tensor(rows)
        if rows.dtype == torch.bool:
            rows = rows.nonzero().flatten()
        keep = rows.tolist()
        return Rollouts(
            [self.prompts[i] for i in keep],
            self.prompt_ids[rows],
            self.tokens[rows],
            self.logprobs[rows],
            self.mask[rows],
            self.policy_version,
            dict(self.settings),
        )

    def full_ids(self) -> torch.Tensor:
        """Prompt and generated ids side by side, shape (batch, prompt + budget)."""
        return torch.cat([self.prompt_ids, self.tokens], dim=1)

    def as_rows(self, limit: int | None = None) -> list[dict]:
        """One readable dict per episode: prompt, token ids, log-probs, termination."""
        rows = []
        reasons = self.termination()
        for i, text in enumerate(self.completions()[:limit]):
            n = len(text)
            rows.append(
                {
                    "prompt": self.prompts[i],
                    "completion": text,
                    "token_ids": self.tokens[i, :n].tolist(),
                    "logprobs": [round(x, 4) for x in self.logprobs[i, :n].tolist()],
                    "termination": reasons[i],
                    "policy_version": self.policy_version,
                }
            )
        return rows


def prompt_batch(prompts: list[str], n: int) -> tuple[list[str], torch.Tensor]:
    """Each prompt repeated ``n`` times (groups contiguous) and its token ids."""
    if n <= 0:
        raise ValueError(f"the number of samples per prompt must be positive, got {n}")
    if not prompts:
        raise ValueError("no prompts to sample")
    lengths = {len(p) for p in prompts}
    if len(lengths) != 1:
        raise ValueError(f"prompts in one batch must have equal length, got lengths {sorted(lengths)}")
    repeated = [p for p in prompts for _ in range(n)]
    ids = torch.tensor([encode(p) for p in prompts], dtype=torch.long).repeat_interleave(n, dim=0)
    return repeated, ids


def _next_token(logits: torch.Tensor, temperature: float, generator: torch.Generator | None, greedy: bool = False):
    """Draw one token per row from softmax(logits / T) by the Gumbel-max trick; return it and its log-prob."""
    logp = torch.log_softmax(logits if greedy else logits / temperature, dim=-1)
    if greedy:
        token = logp.argmax(dim=-1)
    else:
        noise = torch.rand(logp.shape, generator=generator).clamp_(min=1e-20)
        token = (logp - torch.log(-torch.log(noise))).argmax(dim=-1)
    return token, logp.gather(-1, token[:, None]).squeeze(-1)


def sample(
    policy: Policy,
    prompts: list[str],
    n: int = 1,
    temperature: float = 1.0,
    budget: int = BUDGET,
    generator: torch.Generator | None = None,
    use_cache: bool = True,
    greedy: bool = False,
) -> Rollouts:
    """Sample ``n`` episodes for each prompt, batched, with a key/value cache.

    Each episode ends at the end-of-turn mark or after ``budget`` generated
    tokens. Each prompt is read once, and after it each distinct prefix that
    its ``n`` answers write, however many rows share it; every row draws a
    token at every step, and a row that has ended keeps its end. With
    ``use_cache=False`` every step re-reads each unfinished sequence in full
    instead (the slow way, kept so that ``rlbook bench`` can measure what the
    cache buys); it draws the same random numbers, so it writes the same
    tokens. With ``greedy=True`` each step takes the most probable token
    instead of a sample (greedy accuracy, chapter 5); log-probs are then
    those at T = 1.

    The policy is read in ``torch.inference_mode``, which skips autograd's
    bookkeeping altogether and gives the same numbers as ``torch.no_grad``,
    and the record is then copied out of it: tensors made in inference mode
    may not take part in a gradient later, and the update's loss uses these.
    """
    if not temperature > 0:
        raise ValueError(f"temperature must be a positive number, got {temperature!r}")
    if budget <= 0:
        raise ValueError(f"the token budget must be positive, got {budget}")
    repeated, ids = prompt_batch(prompts, n)
    was_training = policy.training
    policy.eval()
    try:
        with torch.inference_mode():
            written = _write_answers(policy, ids, n, temperature, budget, generator, use_cache, greedy)
    finally:
        policy.train(was_training)
    tokens, logprobs, mask = (t.clone() for t in written)
    settings = {
        "temperature": float(temperature),
        "token_budget": int(budget),
        "group_size": int(n),
        "decoding": "greedy" if greedy else "sample",
        "kv_cache": bool(use_cache),
    }
    return Rollouts(repeated, ids, tokens, logprobs, mask, getattr(policy, "version", "unversioned"), settings)


def _write_answers(
    policy: Policy,
    ids: torch.Tensor,
    n: int,
    temperature: float,
    budget: int,
    generator: torch.Generator | None,
    use_cache: bool,
    greedy: bool,
):
    """The decoding loop of :func:`sample`: tokens, log-probs and mask of ``n`` answers per prompt of ``ids``.

    With the cache, the loop reads each distinct prefix once: the prompts
    first, then at every step each distinct (prefix, token) pair that an
    unfinished row has written (:func:`_children`). Rows that share a prefix
    share its next-token distribution, and each row still draws its own token
    from it.
    """
    rows, prompt_len = ids.shape
    if prompt_len + budget > policy.cfg.block_size + 1:
        raise ValueError(
            f"prompt of {prompt_len} tokens plus a budget of {budget} exceeds the context of {policy.cfg.block_size}"
        )
    tokens = torch.full((rows, budget), EOT_ID, dtype=torch.long)
    logprobs = torch.zeros(rows, budget)
    mask = torch.zeros(rows, budget, dtype=torch.bool)
    logits, cache = policy(ids[::n])
    logits = logits[:, -1]
    prefix = torch.arange(rows) // n  # the row of ``logits`` (and of ``cache``) that holds each row's prefix
    writing = torch.ones(rows, dtype=torch.bool)  # the rows that have not ended yet
    for t in range(budget):
        token, logp = _next_token(logits[prefix], temperature, generator, greedy)
        tokens[:, t] = torch.where(writing, token, EOT_ID)
        logprobs[:, t] = torch.where(writing, logp, 0.0)
        mask[:, t] = writing
        writing &= token != EOT_ID
        if t == budget - 1 or not writing.any():
            break
        if use_cache:
            parent, child_token, child = _children(prefix[writing], token[writing])
            logits, cache = policy(
                child_token[:, None], [(k[parent], v[parent]) for k, v in cache], start=prompt_len + t
            )
            logits = logits[:, -1]
            prefix = torch.zeros(rows, dtype=torch.long).masked_scatter_(writing, child)
        else:  # re-read the unfinished rows in full; the others keep drawing, and their draws are thrown away
            live = writing.nonzero()[:, 0]
            logits = torch.zeros(rows, logits.shape[-1])
            logits[live] = policy(torch.cat([ids[live], tokens[live, : t + 1]], dim=1))[0][:, -1]
            prefix = torch.arange(rows)
    return tokens, logprobs, mask


def _children(prefix: torch.Tensor, token: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The distinct (prefix, token) pairs among the rows: each pair's prefix and token, and each row's pair.

    Sampling's prefixes form a tree: the G answers to a prompt start from one
    node, and a group whose answers agree on their first tokens stays on one
    branch (a memorised sum is written the same way in most samples), so
    there are far fewer distinct prefixes than rows to read.
    """
    children, child = torch.unique(prefix * len(TOKENS) + token, sorted=True, return_inverse=True)
    return children // len(TOKENS), children % len(TOKENS), child
