"""The seed-stacked policy that rlbook bench times (rlbook.bench.stacked): each seed's slice computes that seed's own
policy, and the bench's identity check tells a seed computed alike in a stack of three and of one from one that is
not. Whether the arithmetic is bit-identical depends on the machine's kernels and the shapes (on this project's
machine: yes at widths 24 to 48 on small batches, no for the head's gradient at width 16 or the embedding's at 128
rows), so the bench reports it rather than a test asserting it."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from rlbook.bench import stacked
from rlbook.core.policy import Policy, PolicyConfig

CFG = PolicyConfig(d_model=16, n_layer=2, n_head=2)


def policies(n: int = 3) -> list[Policy]:
    out = []
    for s in range(n):
        torch.manual_seed(s)
        out.append(Policy(CFG).train())
    return out


def batch(rows: int = 5, steps: int = 7, seeds: int = 3) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    ids = torch.randint(0, CFG.vocab_size, (seeds, rows, steps), generator=gen)
    return ids, torch.randint(0, CFG.vocab_size, (seeds, rows, steps), generator=gen)


def test_each_seed_s_slice_is_that_seed_s_policy():
    ps = policies()
    ids, targets = batch()
    logits = stacked.stacked_forward(stacked.stack(ps), ids, CFG.n_head)
    for s, p in enumerate(ps):
        alone = p(ids[s])[0].reshape(-1, CFG.vocab_size)
        assert torch.allclose(logits[s], alone, atol=1e-5)
    losses = stacked.stacked_losses(stacked.stack(ps), ids, targets, CFG.n_head)
    with torch.no_grad():
        expected = [
            F.cross_entropy(p(ids[s])[0].reshape(-1, CFG.vocab_size), targets[s].reshape(-1)) for s, p in enumerate(ps)
        ]
    assert losses.tolist() == pytest.approx([e.item() for e in expected], abs=1e-5)


def test_the_identity_check_passes_a_stack_of_one_and_refuses_a_stack_that_changes_a_seed(monkeypatch):
    ps = policies(1)
    ids, targets = batch(seeds=1)
    assert stacked.same_alone_and_stacked(ps, ids, targets)
    honest = stacked.stacked_losses

    def size_dependent(params, ids, targets, n_head):
        losses = honest(params, ids, targets, n_head)
        return losses * (1 + 1e-3 * (ids.shape[0] - 1))

    monkeypatch.setattr(stacked, "stacked_losses", size_dependent)
    assert not stacked.same_alone_and_stacked(policies(), *batch())


def test_the_report_times_every_size_and_says_whether_stacking_kept_each_seed(monkeypatch):
    monkeypatch.setattr(stacked, "ROWS", (2, 4))
    results = stacked.stacked_seeds(policies(2), repeats=1)
    assert [r["rows"] for r in results] == [2, 4]
    assert all(r["alone_ms"] > 0 and r["stacked_ms"] > 0 and r["vmap_ms"] > 0 for r in results)
    assert all(isinstance(r["identical"], bool) for r in results)
    rows = stacked.stacked_rows(results, 2)
    assert len(rows) == 2 and "2 rows x 13 tokens" in rows[0] and "bit for bit: " in rows[0]
