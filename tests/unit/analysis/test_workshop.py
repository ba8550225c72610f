"""rlbook.analysis.workshop (chapter 1): exact answer probabilities, the workshop's picks, figures and one update."""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib
import numpy as np
import pytest
import torch

matplotlib.use("Agg")

from rlbook import workshop
from rlbook.core.evaluate import EvalResult
from rlbook.core.policy import Policy, PolicyConfig, token_logprobs, weights_hash
from rlbook.core.world import EOT, VOCAB, Task, encode
from rlbook.runs import Run

PROMPT = "U:1+4?|A:"


@pytest.fixture(scope="module")
def tiny() -> Policy:
    torch.manual_seed(0)
    return Policy(PolicyConfig()).eval()


def test_answer_probability_is_the_product_of_token_probabilities(tiny):
    ids = torch.tensor([encode(PROMPT + "5#")])
    with torch.no_grad():
        expected = float(token_logprobs(tiny, ids)[0, -2:].sum().exp())
    assert workshop.answer_probability(tiny, PROMPT, "5#") == pytest.approx(expected, rel=1e-5)


def test_one_character_answers_sum_to_one_at_any_temperature(tiny):
    for temperature in (0.5, 1.0, 2.0):
        total = sum(workshop.answer_probability(tiny, PROMPT, ch, temperature) for ch in VOCAB)
        assert total == pytest.approx(1.0, abs=1e-5)


def test_a_longer_answer_is_never_more_probable_than_its_prefix(tiny):
    assert workshop.answer_probability(tiny, PROMPT, "57#") <= workshop.answer_probability(tiny, PROMPT, "57")


def test_empty_completion_is_rejected(tiny):
    with pytest.raises(ValueError, match="at least one character"):
        workshop.answer_probability(tiny, PROMPT, "")


def test_exact_expected_reward_is_the_right_answers_probability(tiny):
    task = Task((1, 4))
    assert workshop.exact_expected_reward(tiny, task) == workshop.answer_probability(tiny, PROMPT, "5" + EOT)


def test_exact_reward_curve_matches_pointwise_values(tiny):
    task = Task((2, 3))
    temps = [0.3, 1.0, 1.7]
    curve = workshop.exact_reward_curve(tiny, task, temps)
    pointwise = [workshop.exact_expected_reward(tiny, task, t) for t in temps]
    assert curve == pytest.approx(pointwise, rel=1e-4)


def _result(rates: dict[tuple[int, int], list[str]]) -> EvalResult:
    """An EvalResult built by hand: each task with its list of completions (scored by the exact rule)."""
    tasks = [Task(ops) for ops in rates]
    completions = [rates[t.operands] for t in tasks]
    statuses = [["accepted" if c == t.completion else "incorrect" for c in row] for t, row in zip(tasks, completions)]
    rewards = np.array([[1.0 if s == "accepted" else 0.0 for s in row] for row in statuses])
    return EvalResult(tasks, rewards, statuses, completions)


def test_picks_follow_the_rules():
    result = _result(
        {
            (1, 1): ["2#"] * 9 + ["3#"],  # 0.9: confidently right, but below 2+2
            (2, 2): ["4#"] * 10,  # 1.0: confidently right
            (3, 3): ["5#"] * 6 + ["7#"] * 4,  # 0.0, favourite 6 of 10
            (4, 4): ["9#"] * 9 + ["7#"],  # 0.0, favourite 9 of 10: the most confident
            (5, 5): ["10#"] * 3 + ["11#"] * 7,  # 0.3
            (6, 6): ["12#"] * 6 + ["13#"] * 4,  # 0.6: closest to one half
        }
    )
    picks = workshop.pick_workshop_sums(result)
    assert {k: t.name for k, t in picks.items()} == {
        "confidently right": "2+2",
        "never right": "4+4",
        "uncertain": "6+6",
    }


def test_with_a_policy_the_never_right_pick_is_the_least_likely_to_be_right(monkeypatch):
    result = _result(
        {
            (2, 2): ["4#"] * 10,
            (3, 3): ["5#"] * 6 + ["7#"] * 4,
            (4, 4): ["9#"] * 9 + ["7#"],
            (6, 6): ["12#"] * 6 + ["13#"] * 4,
        }
    )
    exact = {(2, 2): 0.9, (3, 3): 0.001, (4, 4): 0.04}
    monkeypatch.setattr(workshop, "exact_expected_reward", lambda policy, task: exact[task.operands])
    assert workshop.pick_workshop_sums(result, policy=object())["never right"].name == "3+3"


def test_picks_say_which_kind_is_missing():
    result = _result({(2, 2): ["4#"] * 10, (6, 6): ["12#"] * 5 + ["13#"] * 5})
    with pytest.raises(ValueError, match="never right"):
        workshop.pick_workshop_sums(result)


def test_eval_seed_mirrors_checkpoint_eval():
    base = Run("base", 1, 2, {}, {}, Path("."))
    main = Run("main", 2, 2, {}, {}, Path("."))
    assert workshop.eval_seed(base, 1) == 20_000
    assert workshop.eval_seed(main, 30) == 30_030


def test_binomial_spread_worked_by_hand():
    spread = workshop.Spread(Task((1, 1)), 0.25, [1, 4], np.array([0.4, 0.2]), 10)
    assert spread.binomial_sd == pytest.approx([math.sqrt(0.1875), math.sqrt(0.1875) / 2])


def test_estimate_spread_shapes(tiny):
    spread = workshop.estimate_spread(tiny, Task((1, 4)), ns=(1, 4), repeats=8)
    assert spread.sd.shape == (2,) and np.all(spread.sd >= 0)
    assert spread.p == pytest.approx(workshop.exact_expected_reward(tiny, Task((1, 4))))


def test_reward_vs_temperature_shape(tiny):
    out = workshop.reward_vs_temperature(tiny, [Task((1, 4)), Task((2, 2))], [0.5, 1.0, 1.5], n=4)
    assert out.shape == (2, 3) and np.all((out >= 0) & (out <= 1))


def test_update_on_a_group_without_signal_changes_nothing(tiny):
    demo = workshop.one_update(tiny, Task((1, 4)), group_size=4, seed=0)
    assert demo.rewards.sum() == 0  # an untrained policy never writes "5#" here
    assert np.all(demo.advantages == 0) and demo.baseline == 0
    assert demo.after == pytest.approx(demo.before)
    assert Task((1, 4)).completion in demo.answers
    assert demo.advantage_of(Task((1, 4)).completion) is None


def test_update_leaves_the_given_policy_alone(tiny):
    before = weights_hash(tiny)
    workshop.one_update(tiny, Task((1, 4)), group_size=4, seed=1)
    assert weights_hash(tiny) == before


def test_try_it_worked_by_hand():
    rows = workshop.try_it([[0, 0, 0, 1], [1, 1, 0, 0], [1, 1, 1, 1]])
    assert [r["mean"] for r in rows] == [0.25, 0.5, 1.0]
    assert rows[0]["advantages"] == [-0.25, -0.25, -0.25, 0.75]
    assert rows[1]["advantages"] == [0.5, 0.5, -0.5, -0.5]
    assert rows[2]["advantages"] == [0.0, 0.0, 0.0, 0.0]


def test_rollout_record_has_two_actions_and_a_verdict(tiny):
    record = workshop.rollout_record(tiny, Task((1, 4)), seed=0)
    assert record["completion"].endswith(EOT) and len(record["completion"]) >= 2
    assert record["completion"][0] != record["completion"][1]
    assert record["status"] in ("accepted", "incorrect", "malformed")
    assert len(record["token_ids"]) == len(record["completion"])


class _Sampled:
    """Stands in for the sampler's rollouts: the rows it would return."""

    def __init__(self, completions: list[tuple[str, str]]):
        self.rows = [{"prompt": "U:5+6?|A:", "completion": c, "termination": t} for c, t in completions]

    def as_rows(self) -> list[dict]:
        return self.rows


def test_rollout_record_skips_answers_whose_first_two_actions_are_the_same(monkeypatch):
    sampled = _Sampled([("11#", "end-of-turn"), ("12", "budget"), ("1#", "end-of-turn"), ("12#", "end-of-turn")])
    monkeypatch.setattr("rlbook.analysis.workshop.sample", lambda *args, **kwargs: sampled)
    record = workshop.rollout_record(None, Task((5, 6)), seed=0)
    assert record["completion"] == "1#" and record["status"] == "incorrect"
    monkeypatch.setattr("rlbook.analysis.workshop.sample", lambda *args, **kwargs: _Sampled([("11#", "end-of-turn")]))
    with pytest.raises(ValueError, match="first two different"):
        workshop.rollout_record(None, Task((5, 6)), seed=0)


def test_interactive_workshop_redraws_on_change(tiny, monkeypatch):
    import IPython.display

    drawn = []
    monkeypatch.setattr(IPython.display, "display", lambda fig: drawn.append(fig.axes[0].get_title()))
    box = workshop.interactive_workshop(tiny, [Task((1, 4)), Task((2, 2))], n=4)
    picker, temperature, again = box.children[0].children
    temperature.value = 0.5
    picker.value = Task((2, 2))
    again.click()
    assert len(drawn) == 4
    assert drawn[1].startswith("1+4 at T = 0.5") and drawn[2].startswith("2+2 at T = 0.5")
    assert temperature.continuous_update is False and temperature.style.description_width == "initial"


def test_interactive_workshop_opens_on_the_sum_asked_for(tiny, monkeypatch):
    import IPython.display

    drawn = []
    monkeypatch.setattr(IPython.display, "display", lambda fig: drawn.append(fig.axes[0].get_title()))
    box = workshop.interactive_workshop(tiny, [Task((1, 4)), Task((2, 2))], n=4, start=Task((2, 2)))
    assert box.children[0].children[0].value == Task((2, 2)) and drawn[0].startswith("2+2 at T = 1.0")


def test_answers_show_the_characters_a_reader_reads_and_small_probabilities_are_not_zero():
    assert workshop._show("1 2\n#") == "1\u24232\u23ce#"
    assert [workshop.probability_text(p) for p in (0.5, 0.01, 0.0031, 2.4e-5, 0.0)] == [
        "0.50",
        "0.01",
        "0.0031",
        "2.4e-05",
        "0.00",
    ]


def rates_result(rates: list[float], n: int = 20) -> EvalResult:
    """One task per rate, with round(rate * n) accepted samples out of n."""
    tasks = [Task((i // 10, i % 10)) for i in range(len(rates))]
    rewards = np.array([[1.0] * round(p * n) + [0.0] * (n - round(p * n)) for p in rates])
    statuses = [["accepted" if x else "incorrect" for x in row] for row in rewards]
    return EvalResult(tasks, rewards, statuses, [["?"] * n for _ in rates])


def test_classify_prompts_is_a_partition_at_its_bars():
    rates = [1.0, 0.8, 0.75, 0.7, 0.5, 0.2, 0.15, 0.05, 0.0]
    kinds = workshop.classify_prompts(rates_result(rates))
    by_rate = {k: [rates[t.operands[1]] for t in v] for k, v in kinds.items()}
    assert by_rate == {
        "confidently right": [1.0, 0.8],
        "uncertain": [0.75, 0.7, 0.5, 0.2],
        "rarely right": [0.15, 0.05],
        "never right": [0.0],
    }
    assert tuple(kinds) == workshop.ALL_KINDS and sum(len(v) for v in kinds.values()) == len(rates)


def test_classify_prompts_custom_thresholds():
    kinds = workshop.classify_prompts(rates_result([0.9, 0.1, 0.05]), right=0.9, rare=0.1)
    assert [t.name for t in kinds["confidently right"]] == ["0+0"]
    assert [t.name for t in kinds["uncertain"]] == ["0+1"]
    assert [t.name for t in kinds["rarely right"]] == ["0+2"]
    assert kinds["never right"] == []
