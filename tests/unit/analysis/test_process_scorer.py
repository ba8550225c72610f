"""Chapter 11's measurements (rlbook.analysis.process_scorer): best-of-n picks the first answer of highest score
among the first n, and a run's curve reads its checkpoints' held-out accuracy, reward and training accuracy."""

from __future__ import annotations

import numpy as np

from rlbook.analysis import process_scorer as ps


def test_picks_takes_the_first_best_of_the_first_n_answers_of_each_prompt():
    # two prompts, four answers each
    right = np.array([0, 1, 0, 1, 1, 0, 0, 0], dtype=bool)
    scores = {
        "outcome": right.astype(float),
        "flat": np.full(8, 0.5),  # every answer alike: the first is picked, whatever n
        "fooled": np.array([0.1, 0.2, 0.9, 0.3, 0.2, 0.8, 0.1, 0.1]),
    }
    got = ps.picks(scores, right, prompts=2, ns=(1, 2, 4))
    assert got["outcome"] == [0.5, 1.0, 1.0]
    assert got["flat"] == [0.5, 0.5, 0.5]
    assert got["fooled"] == [0.5, 0.5, 0.0]


def test_a_run_s_curve_reads_its_checkpoints():
    log = {
        "evals": [
            {"step": 0, "heldout_expected_reward": 0.5, "train_reward": 0.52, "train_exact_reward": 0.55},
            {"step": 60, "heldout_expected_reward": 0.1, "train_reward": 0.9, "train_exact_reward": 0.05},
        ]
    }
    assert ps.curve(log) == {
        "steps": [0, 60],
        "accuracy": [0.5, 0.1],
        "reward": [0.52, 0.9],
        "train_accuracy": [0.55, 0.05],
    }


def test_the_answers_shown_are_the_first_per_prompt_that_the_scorer_scored_highest_in_prompt_order():
    written = ps.WRITTEN
    score = np.zeros(6 * written)
    for prompt, value in enumerate([0.2, 0.9, 0.1, 0.9, 0.5, 0.7]):
        score[prompt * written] = value
        score[prompt * written + 1] = 1.0  # a later answer to the same prompt is never shown
    rows = ps.shown_rows(score, 6)
    assert rows == [written * g for g in (1, 3, 4, 5)][: ps.SHOWN_ANSWERS]
