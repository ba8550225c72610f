"""Sampling rollouts from the policy, and the record each rollout keeps.

Chapter 1 samples the policy to estimate expected reward; chapter 3 relies on
what is recorded here: the generated token ids and their log-probabilities
under the policy that sampled them, never text re-tokenised afterwards.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch

from .policy import Policy
from .world import EOT_ID, decode, encode


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
        """The generated text of each episode (decoded for the verifier only)."""
        return [decode(row[:n]) for row, n in zip(self.tokens.tolist(), self.lengths.tolist())]

    def select(self, rows) -> "Rollouts":
        """The rollouts at the given row indices (a list or a bool/long tensor)."""
        rows = torch.as_tensor(rows)
        if rows.dtype == torch.bool:
            rows = rows.nonzero().flatten()
        keep = rows.tolist()
        return Rollouts([self.prompts[i] for i in keep], self.prompt_ids[rows], self.tokens[rows],
                        self.logprobs[rows], self.mask[rows], self.policy_version, dict(self.settings))

    def full_ids(self) -> torch.Tensor:
        """Prompt and generated ids side by side, shape (batch, prompt + budget)."""
        return torch.cat([self.prompt_ids, self.tokens], dim=1)

    def as_rows(self, limit: int | None = None) -> list[dict]:
        """One readable dict per episode: prompt, token ids, log-probs, termination."""
        rows = []
        reasons = self.termination()
        for i, text in enumerate(self.completions()[:limit]):
            n = len(text)
            rows.append({"prompt": self.prompts[i], "completion": text, "token_ids": self.tokens[i, :n].tolist(),
                         "logprobs": [round(x, 4) for x in self.logprobs[i, :n].tolist()],
                         "termination": reasons[i], "policy_version": self.policy_version})
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


@torch.no_grad()
def sample(policy: Policy, prompts: list[str], n: int = 1, temperature: float = 1.0, budget: int = 4,
           generator: torch.Generator | None = None, use_cache: bool = True, greedy: bool = False) -> Rollouts:
    """Sample ``n`` episodes for each prompt, batched, with a key/value cache.

    Each episode ends at the end-of-turn mark or after ``budget`` generated
    tokens. Each prompt is read once, and its group of ``n`` answers is
    written from that reading (:meth:`Policy.step_groups`); every row draws a
    token at every step, and a row that has ended keeps its end. With
    ``use_cache=False`` every step re-reads each unfinished sequence in full
    instead (the slow way, kept so that ``rlbook bench`` can measure what the
    cache buys); it draws the same random numbers, so it writes the same
    tokens. With ``greedy=True`` each step takes the most probable token
    instead of a sample (greedy accuracy, chapter 5); log-probs are then
    those at T = 1.
    """
    if not temperature > 0:
        raise ValueError(f"temperature must be a positive number, got {temperature!r}")
    if budget <= 0:
        raise ValueError(f"the token budget must be positive, got {budget}")
    repeated, ids = prompt_batch(prompts, n)
    was_training = policy.training
    policy.eval()
    try:
        tokens, logprobs, mask = _write_answers(policy, ids, n, temperature, budget, generator, use_cache, greedy)
    finally:
        policy.train(was_training)
    settings = {"temperature": float(temperature), "token_budget": int(budget), "group_size": int(n),
                "decoding": "greedy" if greedy else "sample", "kv_cache": bool(use_cache)}
    return Rollouts(repeated, ids, tokens, logprobs, mask, getattr(policy, "version", "unversioned"), settings)


def _write_answers(policy: Policy, ids: torch.Tensor, n: int, temperature: float, budget: int,
                   generator: torch.Generator | None, use_cache: bool, greedy: bool):
    """The decoding loop of :func:`sample`: tokens, log-probs and mask of ``n`` answers per prompt of ``ids``."""
    rows = ids.shape[0]
    tokens = torch.full((rows, budget), EOT_ID, dtype=torch.long)
    logprobs = torch.zeros(rows, budget)
    mask = torch.zeros(rows, budget, dtype=torch.bool)
    logits, cache = policy.start_groups(ids[::n], n, budget)  # refuses a prompt and budget longer than the context
    logits = logits.repeat_interleave(n, dim=0)
    writing = torch.ones(rows, dtype=torch.bool)  # the rows that have not ended yet
    for t in range(budget):
        token, logp = _next_token(logits, temperature, generator, greedy)
        tokens[:, t] = torch.where(writing, token, EOT_ID)
        logprobs[:, t] = torch.where(writing, logp, 0.0)
        mask[:, t] = writing
        writing &= token != EOT_ID
        if t == budget - 1 or not writing.any():
            break
        if use_cache:
            logits = policy.step_groups(tokens[:, t].view(-1, n), cache).reshape(rows, -1)
        else:  # re-read the unfinished rows in full; the others keep drawing, and their draws are thrown away
            live = writing.nonzero()[:, 0]
            logits = torch.zeros_like(logits)
            logits[live] = policy(torch.cat([ids[live], tokens[live, :t + 1]], dim=1))[0][:, -1]
    return tokens, logprobs, mask
