"""Reading a batch's answers with the policy: each prompt once, each distinct answer once (chapter 3's update).

The answers of a group repeat (a memorised prompt gets the same answer again
and again), so the update reads every distinct (prompt, answer) pair once,
packing up to :data:`ANSWERS_PER_READ` answers of a prompt behind one copy of
it, and spreads the log-probabilities back to the rows. The reference policy
never changes, so its log-probabilities are memorised across steps
(:class:`ReferenceMemo`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from .policy import Policy
from .sampling import Rollouts
from .world import EOT_ID, TOKENS

# How many distinct answers to one prompt generated_logprobs reads after one copy of the prompt. Fewer
# means more copies of the prompt to read; more means longer reads whose attention is mostly masked
# and which the prompts with few distinct answers pad. On one thread, a batch of main (60 prompts x
# 16) took 7.1 ms to update at 3 against 10.4 at 2, 7.2 at 4 and 11.8 with all of a prompt's answers
# in one read; the multi-step world's (64 x 8) took 10.6 ms at 3, 10.2 at 2 and 27.5 in one read.
ANSWERS_PER_READ = 3


def _as_integers(rows: torch.Tensor) -> torch.Tensor:
    """Each row of token ids read as one integer in base ``len(TOKENS)``, the first token most significant."""
    return rows @ (len(TOKENS) ** torch.arange(rows.shape[1] - 1, -1, -1))


def _first_rows(inverse: torch.Tensor) -> torch.Tensor:
    """For each distinct value that ``inverse`` indexes, the index of one row holding it."""
    return torch.zeros(int(inverse.max()) + 1, dtype=torch.long).scatter_(0, inverse, torch.arange(len(inverse)))


def distinct_prompts(prompt_ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The distinct rows of ``prompt_ids`` in sorted order, and the index of each row among them.

    The same result as ``torch.unique(prompt_ids, dim=0, return_inverse=True)``,
    found by reading each row as one integer in base ``len(TOKENS)`` (the
    first token most significant, so the order is the same), which takes a
    fraction of the time on an RL batch.
    """
    width = prompt_ids.shape[1]
    if len(TOKENS) ** width >= 2**63:
        raise ValueError(f"prompts of {width} tokens are too long to read as one 64-bit integer")
    _, row_prompt = torch.unique(_as_integers(prompt_ids), sorted=True, return_inverse=True)
    return prompt_ids[_first_rows(row_prompt)], row_prompt


def distinct_answers(row_prompt: torch.Tensor, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The distinct (prompt, answer) pairs of a batch: each pair's prompt index and tokens, and each row's pair.

    ``row_prompt`` (B,) gives each row's prompt index (from
    :func:`distinct_prompts`) and ``tokens`` (B, T) its answer. Returns the
    prompt index (D,) and tokens (D, T) of the D distinct pairs, sorted by
    prompt, and the index (B,) of each row's pair among them. A row is
    read as one integer, its prompt index then its tokens in base
    ``len(TOKENS)``, when that fits in 64 bits; otherwise by
    ``torch.unique`` over rows, which gives the same result more slowly.
    """
    width = tokens.shape[1]
    if (int(row_prompt.max()) + 1) * len(TOKENS) ** width < 2**63:
        keys = row_prompt * len(TOKENS) ** width + _as_integers(tokens)
        _, row_answer = torch.unique(keys, sorted=True, return_inverse=True)
    else:
        _, row_answer = torch.unique(torch.cat([row_prompt[:, None], tokens], dim=1), dim=0, return_inverse=True)
    firsts = _first_rows(row_answer)
    return row_prompt[firsts], tokens[firsts], row_answer


def packed_reads(
    answer_prompt: torch.Tensor, n_prompts: int, per_read: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Which read of :func:`generated_logprobs` each distinct answer goes to, and where in it.

    ``answer_prompt`` (D,) is each answer's prompt index, sorted. A prompt
    with n answers gets ceil(n / ``per_read``) reads, each a copy of the
    prompt followed by up to ``per_read`` of its answers. Returns each read's
    prompt index (R,), and each answer's read (D,) and place in it (D,).
    """
    counts = torch.bincount(answer_prompt, minlength=n_prompts)
    slot = torch.arange(len(answer_prompt)) - (counts.cumsum(0) - counts)[answer_prompt]
    reads = (counts + per_read - 1) // per_read
    read = (reads.cumsum(0) - reads)[answer_prompt] + slot // per_read
    return torch.repeat_interleave(torch.arange(n_prompts), reads), read, slot % per_read


@dataclass
class PackedAnswers:
    """A batch's distinct answers laid out for :meth:`Policy.read_groups` (see :func:`pack_answers`).

    ``prompts`` (R, Lp) and ``grid`` (R, ANSWERS_PER_READ, T - 1) are the R
    reads: a prompt, then up to :data:`ANSWERS_PER_READ` of its distinct
    answers, each without its last token (nothing reads what follows it),
    padded with the end-of-turn id. ``answers`` (D, T) are the distinct answers,
    each at ``grid[read, place]``, and ``row`` (B,) gives each row's answer.
    """

    prompts: torch.Tensor
    grid: torch.Tensor
    answers: torch.Tensor
    read: torch.Tensor
    place: torch.Tensor
    row: torch.Tensor


def pack_answers(prompt_ids: torch.Tensor, tokens: torch.Tensor) -> PackedAnswers:
    """The reads that :func:`generated_logprobs` makes of a batch (``rlbook bench`` counts their tokens)."""
    prompts, row_prompt = distinct_prompts(prompt_ids)
    answer_prompt, answers, row_answer = distinct_answers(row_prompt, tokens)
    read_prompt, read, place = packed_reads(answer_prompt, len(prompts), ANSWERS_PER_READ)
    grid = torch.full((len(read_prompt), ANSWERS_PER_READ, answers.shape[1] - 1), EOT_ID, dtype=torch.long)
    grid[read, place] = answers[:, :-1]
    return PackedAnswers(prompts[read_prompt], grid, answers, read, place, row_answer)


def generated_logprobs(policy: Policy, rollouts: Rollouts) -> tuple[torch.Tensor, torch.Tensor]:
    """Log-probs and entropies of the recorded tokens under ``policy``, shape (B, budget).

    The ids come from the record, never from re-tokenising text (chapter 3).
    Two shortcuts give the same numbers, up to float rounding, as reading
    every row in full, at a fraction of the work:

    - a group's rollouts often repeat one another (a memorised prompt gets
      the same answer in most of its G samples), and equal rows have equal
      log-probs, so each distinct (prompt, answer) pair is read once and its
      numbers are handed to every row that holds it; autograd then sums the
      rows' gradients into the pair's;
    - the pairs of a group share their prompt, so a prompt is read once
      for up to :data:`ANSWERS_PER_READ` of its distinct answers, which
      follow it in the same sequence (:meth:`Policy.read_groups`). A prompt
      whose answers do not fill the last such read is padded with answers
      that are read and thrown away.
    """
    packed = pack_answers(rollouts.prompt_ids, rollouts.tokens)
    logits = policy.read_groups(packed.prompts, packed.grid)[packed.read, packed.place]
    logp_all = torch.log_softmax(logits, dim=-1)
    logp = logp_all.gather(-1, packed.answers[:, :, None]).squeeze(-1)
    entropy = -(logp_all.exp() * logp_all).sum(-1)
    return logp[packed.row], entropy[packed.row]


def reference_logprobs(reference: Policy, rollouts: Rollouts) -> torch.Tensor:
    """Log-probs of the recorded tokens under the frozen reference policy, without a gradient.

    The reference never changes and a batch is fixed, so :func:`train_rl`
    needs them once per batch, however many updates it makes on the batch,
    and reads them once per run for each (prompt, answer) pair
    (:class:`ReferenceMemo`). Like sampling, it reads in
    ``torch.inference_mode`` and hands back an ordinary copy (see
    :func:`rlbook.core.sampling.sample`).
    """
    with torch.inference_mode():
        logp = generated_logprobs(reference, rollouts)[0]
    return logp.clone()


def row_keys(prompt_ids: torch.Tensor, tokens: torch.Tensor) -> list[bytes]:
    """Each row's prompt and answer ids as one ``bytes`` key (every token id fits in a byte)."""
    rows = torch.cat([prompt_ids, tokens], dim=1).to(torch.uint8)
    width, data = rows.shape[1], rows.numpy().tobytes()
    return [data[start : start + width] for start in range(0, len(data), width)]


def unmet(keys: list[bytes], met) -> dict[bytes, int]:
    """Each key of ``keys`` not in ``met`` (a set or dict), with the first row that holds it, in row order."""
    fresh: dict[bytes, int] = {}
    for row, key in enumerate(keys):
        if key not in met:
            fresh.setdefault(key, row)
    return fresh


@dataclass
class ReferenceMemo:
    """The reference policy's log-probs of every (prompt, answer) pair a run has sampled, each read once.

    The reference never changes, and most of a batch's pairs were sampled
    at an earlier step too: a memorised prompt gets the same answer step
    after step (in ``main``, seven of every eight distinct pairs of a step
    had come before). So :func:`train_rl` reads with the reference only the
    pairs it has not met, and looks the others up. A pair keeps the numbers
    of its first read, which can differ from a fresh read in the last bits
    of float rounding, since the pairs read together differ. ``index`` maps
    a pair's key (:func:`row_keys`) to its row of ``values``.
    """

    index: dict[bytes, int] = field(default_factory=dict)
    values: torch.Tensor | None = None

    def logprobs(self, reference: Policy, rollouts: Rollouts) -> torch.Tensor:
        """The reference's log-probs of ``rollouts``' recorded tokens, as :func:`reference_logprobs` gives them."""
        keys = row_keys(rollouts.prompt_ids, rollouts.tokens)
        fresh = unmet(keys, self.index)
        if fresh:
            read = reference_logprobs(reference, rollouts.select(list(fresh.values())))
            known = 0 if self.values is None else len(self.values)
            self.values = read if self.values is None else torch.cat([self.values, read])
            self.index.update(zip(fresh, range(known, known + len(fresh))))
        assert self.values is not None  # every key of a batch (which has rows) has been read by now
        return self.values[[self.index[key] for key in keys]]
