"""Which judged rollouts chapter 2 shows (rlbook.analysis.disagreement.shown)."""

from __future__ import annotations

from hand_rollouts import P

from rlbook.analysis import disagreement as d
from rlbook.core.world import Task


def test_step_notes_and_figure_rollouts():
    judged = d.judge([P] * 3, ["7,13#", "6,12#", "7,12#"])
    assert d.step_notes(judged[1]) == [
        ("6", False, "step 1 6 \u2260 3+4 invalid"),
        ("12", False, "step 2 12 \u2260 6+5 invalid"),
    ]
    (missing,) = d.judge([P], ["7#"])
    assert d.step_notes(missing)[1] == ("", False, "step 2 missing")
    assert [j.completion for j in d.figure_rollouts(judged)] == ["7,12#", "6,12#"]
    assert [j.completion for j in d.figure_rollouts(judged[:1] + judged[2:])] == ["7,12#", "7,13#"]
    # A disagreement whose prompt has an agreeing rollout is preferred to an earlier one whose prompt has none.
    other = d.judge(["U:1+1+1?|A:"], ["3,3#"])
    assert [j.completion for j in d.figure_rollouts(other + judged)] == ["7,12#", "6,12#"]


def test_exercise_rows_hold_the_first_disagreement():
    judged = d.judge([P] * 30, ["7,12#"] * 25 + ["6,12#"] + ["7,12#"] * 4)
    rows = d.exercise_rows(judged, k=12)
    assert rows == judged[24:30] and any(j.disagrees for j in rows)
    assert d.exercise_rows(judged[:10], k=4) == judged[:4]


def test_exercise_rows_avoid_a_prompt_when_they_can():
    q = Task((1, 2, 3)).prompt
    judged = d.judge([P] * 4 + [q] * 4, ["6,12#", "7,12#", "7,12#", "7,12#", "7,12#", "3,6#", "2,6#", "3,6#"])
    assert d.exercise_rows(judged, k=4) == judged[:4]
    assert d.exercise_rows(judged, k=4, avoid=frozenset({P})) == judged[4:]
    assert d.exercise_rows(judged[:4], k=4, avoid=frozenset({P})) == judged[:4]  # nothing else qualifies


def test_exercise_rows_hold_a_rollout_both_judges_agree_on_beside_the_disagreement():
    # the first block's only agreement is a partial-credit failure ("7,13#": the first step valid, the sum wrong);
    # the second block also holds a rollout both judges pass outright
    judged = d.judge([P] * 8, ["6,12#", "7,13#", "6,12#", "7,13#", "6,12#", "7,12#", "7,13#", "7,13#"])
    assert d.exercise_rows(judged, k=4) == judged[4:]
    assert d.exercise_rows(judged[:4], k=4) == judged[:4]  # no block holds both: the first with a disagreement
