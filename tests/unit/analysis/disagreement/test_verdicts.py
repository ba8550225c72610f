"""Both verdicts of a rollout (rlbook.analysis.disagreement.verdicts), on hand-made rollouts."""

from __future__ import annotations

import pytest
import torch
from hand_rollouts import HAND, P

from rlbook.analysis import disagreement as d
from rlbook.core.world import Task, encode


@pytest.mark.parametrize("completion", HAND)
def test_each_hand_rollout_lands_in_the_worked_cell(completion):
    status, process, kind = HAND[completion]
    (j,) = d.judge([P], [completion])
    assert (j.status, j.process, j.kind) == (status, process, kind)
    assert j.disagrees == (kind in d.DISAGREEMENTS)


def test_judge_rejects_unpaired_lists():
    with pytest.raises(ValueError, match="2 prompts but 1 completions"):
        d.judge([P, P], ["7,12#"])


def test_logged_rollouts_repeats_each_group_prompt():
    texts = ["7,12#", "6,12", "9#", "10#"]
    tokens = torch.full((4, 8), 20, dtype=torch.uint8)
    for i, t in enumerate(texts):
        tokens[i, : len(t)] = torch.tensor(encode(t), dtype=torch.uint8)
    log = {
        "prompts": [P, Task((4, 5)).prompt],
        "tokens": tokens,
        "lengths": torch.tensor([len(t) for t in texts], dtype=torch.uint8),
    }
    prompts, completions = d.logged_rollouts(log)
    assert prompts == [P, P, Task((4, 5)).prompt, Task((4, 5)).prompt]
    assert completions == texts
