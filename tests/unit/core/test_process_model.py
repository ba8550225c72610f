"""The learned judge of steps (rlbook.core.process_model): steps cut and labelled by the exact rule on written-out
answers, the scorer on a tiny untrained policy (no run needed), its aggregates and its two rewards."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rlbook.core import process_model as pm
from rlbook.core import rewards as rw
from rlbook.core.policy import Policy, PolicyConfig, weights_hash
from rlbook.core.world import WorkedTask, split, vocab_size

PROMPT = "#47+38="
TINY = pm.ProcessConfig(answers=32, steps=4, batch=8)


def policy() -> Policy:
    torch.manual_seed(0)
    return Policy(
        PolicyConfig(vocab_size=vocab_size("worked"), d_model=16, n_layer=1, n_head=2, block_size=32, rope=True)
    ).eval()


def test_a_worked_answer_has_two_columns_and_a_number_each_ending_where_its_closing_mark_is():
    answer = "7+8=15,4+3+1=8;85#"
    steps = pm.answer_steps(answer)
    assert [(s.text, s.kind) for s in steps] == [("7+8=15", "units"), ("4+3+1=8", "tens"), ("85", "number")]
    assert [answer[s.end] for s in steps] == [",", ";", "#"]


def test_a_direct_answer_has_one_step_and_a_cut_off_answer_ends_at_its_last_character():
    assert [(s.text, s.end, s.kind) for s in pm.answer_steps("85#")] == [("85", 2, "number")]
    cut = "7+8=15,4+3"
    assert [(s.text, s.end) for s in pm.answer_steps(cut)] == [(cut, len(cut) - 1)]
    assert [s.kind for s in pm.answer_steps("1+1=2,2+2=4,3+3=6;9#")] == ["units", "tens", "extra", "number"]


@pytest.mark.parametrize(
    ("answer", "labels", "right"),
    [
        ("7+8=15,4+3+1=8;85#", [True, True, True], True),
        ("85#", [True], True),
        ("84#", [False], False),
        ("7+8=15,4+3=7;85#", [True, False, True], False),  # the carry left out, the number right all the same
        ("7+8=15,4+3+1=8;84#", [True, True, False], False),
        ("7+8=15;85#", [True, True], False),  # the tens column missing
        ("7+8=15,4+3+1=8,0+0=0;85#", [True, True, False, True], False),
        ("7+8=15,4+3+1=8;85", [True, True, False], False),  # no end mark: the verifier refuses the number
    ],
)
def test_each_step_is_labelled_by_the_exact_rule_and_the_answer_by_the_process_rule(answer, labels, right):
    assert pm.step_labels(PROMPT, answer) == labels
    assert pm.process_right(PROMPT, answer) is right


def test_a_right_answer_of_every_held_out_sum_passes_the_rule_in_both_styles():
    for task in split("heldout", "worked")[:50]:
        for style in ("worked", "direct"):
            answer = WorkedTask(task.operands, style).completion
            assert pm.process_right(task.prompt, answer), answer


def test_a_prompt_of_another_world_is_refused_by_name():
    with pytest.raises(ValueError, match="not a prompt of the worked world"):
        pm.step_labels("U:3+4?|A:", "7#")


def test_locate_puts_each_step_at_its_closing_character_in_prompt_plus_answer():
    data = pm.locate([(PROMPT, "7+8=15,4+3+1=8;85#"), (PROMPT, "84#")])
    text = PROMPT + "7+8=15,4+3+1=8;85#"
    assert data.rows.tolist() == [0, 0, 0, 1]
    assert [text[p] for p in data.positions[:3].tolist()] == [",", ";", "#"]
    assert data.positions[3].item() == len(PROMPT) + 2
    assert data.labels.tolist() == [1.0, 1.0, 1.0, 0.0]
    assert data.kinds == ["units", "tens", "number", "number"]
    assert pm.locate([(PROMPT, "84#")], label=False).labels.tolist() == [0.0]


def test_a_fresh_scorer_says_one_half_everywhere_and_padding_after_a_row_changes_nothing():
    model = pm.ProcessModel(policy())
    short, long = (PROMPT, "85#"), (PROMPT, "7+8=15,4+3+1=8;85#")
    assert pm.step_probabilities(model, pm.locate([short, long])).tolist() == [0.5] * 4
    with torch.no_grad():
        model.score.bias.fill_(0.3)
        torch.nn.init.normal_(model.score.weight, generator=torch.Generator().manual_seed(1))
    alone = pm.step_probabilities(model, pm.locate([short]))
    padded = pm.step_probabilities(model, pm.locate([short, long]))
    assert alone[0] == pytest.approx(padded[0], abs=1e-6)


def test_training_is_deterministic_leaves_the_policy_alone_and_moves_the_scorer():
    base = policy()
    before = weights_hash(base)
    data = pm.locate(pm.sampled_answers(base, [t.prompt for t in split("train", "worked")[:8]], 32, TINY, 3))
    one, two = (pm.train_process_model(base, data, TINY, 5) for _ in range(2))
    assert weights_hash(base) == before
    assert torch.equal(one.score.weight, two.score.weight)
    assert not torch.equal(one.score.weight, pm.ProcessModel(base).score.weight)
    other = pm.train_process_model(base, data, TINY, 6)
    assert not torch.equal(one.score.weight, other.score.weight)


def test_answer_score_takes_each_answer_s_smallest_step_or_their_product():
    p = np.array([0.9, 0.5, 0.8, 0.3])
    rows = torch.tensor([0, 0, 0, 1])
    assert pm.answer_score(p, rows, 2, "min").tolist() == [0.5, 0.3]
    assert pm.answer_score(p, rows, 2, "product").tolist() == pytest.approx([0.36, 0.3])
    with pytest.raises(ValueError, match="unknown aggregate"):
        pm.answer_score(p, rows, 2, "mean")


def test_the_learned_reward_pays_the_smallest_step_and_the_exact_one_pays_the_rule():
    model = pm.ProcessModel(policy())
    rewards, statuses = rw.score(pm.ProcessVerifier(model), [PROMPT, PROMPT], ["85#", "7+8=15,4+3=7;85#"])
    assert rewards.tolist() == [0.5, 0.5] and statuses == ["accepted", "accepted"]
    exact = pm.ExactProcessVerifier()
    rewards, statuses = rw.score(exact, [PROMPT, PROMPT], ["7+8=15,4+3+1=8;85#", "7+8=15,4+3=7;85#"])
    assert rewards.tolist() == [1.0, 0.0] and statuses == ["accepted", "incorrect"]
    assert exact(PROMPT, "85#").verifier == "process-exact" and "min" in pm.ProcessVerifier(model)(PROMPT, "85#").reason
