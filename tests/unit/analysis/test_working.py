"""Written working under an outcome-only reward (rlbook.analysis.working), on run logs written by hand."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from rlbook.analysis import working
from rlbook.core.world import encode
from rlbook.runs import Run


def evaluation(
    step: int,
    worked: tuple[int, int],
    direct: tuple[int, int],
    length: float,
    first: float,
    style: float,
    p_worked: float,
) -> dict:
    """A checkpoint evaluation as a worked-world run logs it: (answers, accepted) per style."""
    total = worked[0] + direct[0]
    return {
        "step": step,
        "heldout_expected_reward": (worked[1] + direct[1]) / total,
        "heldout_styles": {
            "worked": worked[0],
            "worked_accepted": worked[1],
            "direct": direct[0],
            "direct_accepted": direct[1],
            "mean_length": length,
        },
        "heldout_choice": {"first_char": first, "style": style, "p_worked": p_worked},
    }


def stored(step: int, texts: list[str], rewards: list[float]) -> dict:
    """One step's stored rollouts, as the run log keeps them (tokens padded with the end mark)."""
    width = 24
    tokens = torch.tensor([encode(t + "#" * (width - len(t))) for t in texts], dtype=torch.uint8)
    return {
        "step": step,
        "tokens": tokens,
        "lengths": torch.tensor([len(t) for t in texts], dtype=torch.uint8),
        "rewards": torch.tensor(rewards, dtype=torch.float32),
    }


def run(
    name: str = "worked", seed: int = 0, evals: list[dict] | None = None, rollouts: list[dict] | None = None
) -> Run:
    evals = evals or [
        evaluation(0, (50, 30), (50, 10), 10.0, 1.2, 0.69, 0.5),
        evaluation(60, (90, 81), (10, 5), 17.0, 0.3, 0.2, 0.9),
    ]
    log = {"evals": evals, "rollouts": rollouts or [], "metrics": [], "checkpoints": []}
    return Run(name, seed, 1, {}, log, Path("."))


def test_a_checkpoint_point_reads_accuracy_share_length_and_entropies():
    first, last = working.before_after(run())
    assert (first.step, first.accuracy, first.share, first.length) == (0, 0.4, 0.5, 10.0)
    assert (first.accuracy_worked, first.accuracy_direct) == (0.6, 0.2)
    assert (last.accuracy, last.share, last.accuracy_worked, last.accuracy_direct) == (0.86, 0.9, 0.9, 0.5)
    assert (first.first_char_entropy, last.first_char_entropy, last.style_entropy, last.p_worked) == (
        1.2,
        0.3,
        0.2,
        0.9,
    )
    assert first.samples == 100


def test_a_style_never_written_has_no_accuracy():
    only_worked = run(evals=[evaluation(0, (100, 70), (0, 0), 17.0, 0.1, 0.0, 1.0)])
    assert working.checkpoint_curve(only_worked)[0].accuracy_direct is None


def test_a_run_without_answer_styles_is_refused():
    plain = run(evals=[{"step": 0, "heldout_expected_reward": 0.5}])
    with pytest.raises(ValueError, match="not a worked-world run"):
        working.checkpoint_curve(plain)


def test_the_gain_splits_into_the_style_switch_and_better_execution_by_hand():
    first, last = working.before_after(run())
    split = working.gain_split(first, last)
    # switch: (0.9 - 0.5) * 0.6 + (0.1 - 0.5) * 0.2 = 0.16; execution: 0.9 * (0.9 - 0.6) + 0.1 * (0.5 - 0.2) = 0.30
    assert split.switch == pytest.approx(0.16) and split.execution == pytest.approx(0.30)
    assert split.total == pytest.approx(0.46) == pytest.approx(split.switch + split.execution)


def test_the_gain_of_a_style_given_up_entirely_is_all_switch():
    before = working.point(evaluation(0, (50, 40), (50, 10), 10.0, 1.0, 0.69, 0.5))
    after = working.point(evaluation(9, (100, 85), (0, 0), 17.0, 0.1, 0.0, 1.0))
    split = working.gain_split(before, after)
    assert split.switch == pytest.approx(0.5 * 0.8 - 0.5 * 0.2)
    assert split.execution == pytest.approx(1.0 * (0.85 - 0.8))
    assert split.total == pytest.approx(split.switch + split.execution)


def test_a_style_first_written_after_rl_leaves_the_split_undefined():
    before = working.point(evaluation(0, (0, 0), (100, 40), 3.0, 0.5, 0.0, 0.0))
    after = working.point(evaluation(9, (30, 20), (70, 30), 7.0, 0.6, 0.5, 0.3))
    with pytest.raises(ValueError, match="no worked answer before"):
        working.gain_split(before, after)
    row = working.seed_rows(
        [
            run(
                "worked-rediscover",
                2,
                [
                    evaluation(0, (0, 0), (100, 40), 3.0, 0.5, 0.0, 0.0),
                    evaluation(9, (30, 20), (70, 30), 7.0, 0.6, 0.5, 0.3),
                ],
            )
        ]
    )[0]
    assert row["gain_from_switch"] is None and row["share_before"] == 0.0 and row["share_after"] == 0.3
    assert row["working_pays_before"] is None


def test_seed_rows_hold_every_figure_before_and_after():
    row = working.seed_rows([run(seed=1)])[0]
    assert (row["run"], row["seed"], row["steps"]) == ("worked", 1, 60)
    assert (row["share_before"], row["share_after"], row["length_before"], row["length_after"]) == (
        0.5,
        0.9,
        10.0,
        17.0,
    )
    assert (row["accuracy_before"], row["accuracy_after"]) == (0.4, 0.86)
    assert (row["first_char_entropy_before"], row["first_char_entropy_after"]) == (1.2, 0.3)
    assert row["gain_from_switch"] == pytest.approx(0.16) and row["gain_from_execution"] == pytest.approx(0.30)
    assert row["working_pays_before"] == pytest.approx(0.6 - 0.2)


def test_the_step_curve_reads_each_training_batch():
    r = run(
        rollouts=[
            stored(1, ["85#", "7+8=15,4+3+1=8;85#", "84#", "7+8"], [1, 1, 0, 0]),
            stored(2, ["7+8=15,4+3+1=8;85#", "7+8=15,4+3+1=8;84#"], [1, 0]),
        ]
    )
    curve = working.step_curve(r)
    assert curve.steps.tolist() == [1, 2]
    assert curve.share.tolist() == [0.5, 1.0]
    assert curve.length.tolist() == pytest.approx([(3 + 18 + 3 + 3) / 4, 18.0])
    assert curve.reward.tolist() == [0.5, 0.5]
    with pytest.raises(ValueError, match="stores no rollouts"):
        working.step_curve(run())
