"""What a different step rule does to the same rollouts (rlbook.analysis.disagreement.rules)."""

from __future__ import annotations

from hand_rollouts import HAND, P

from rlbook.analysis import disagreement as d


def test_true_sum_steps_judge_each_step_against_the_true_partial_sum():
    assert d.true_sum_steps(P, "7,12#") == (True, True)
    assert d.true_sum_steps(P, "6,12#") == (False, True)  # the own-s1 rule says (False, False)
    assert d.true_sum_steps(P, "6,11#") == (False, False)  # the own-s1 rule says (False, True)
    assert d.true_sum_steps(P, " 7,12#") == (False, True)  # an unreadable first step does not spoil the second
    assert d.true_sum_steps(P, "7#,12") == (True, False)  # only the text before the first end mark
    assert d.true_sum_steps(P, "07,012#") == (False, False)
    assert d.true_sum_steps("U:3+4?|A:", "7#") == (True,)
    assert d.true_sum_steps("not a task", "7#") == () and d.true_sum_steps(P, 7) == ()


def test_rule_change_counts_both_directions_by_cell():
    judged = d.judge([P] * (len(HAND) + 1), [*HAND, "6,12#"])
    change = d.rule_change(judged)
    # gain: '6,12#' twice and '12,12#' (right totals after a wrong first sum), ' 7,12#' (unreadable first step);
    # lose: '6,11#' (a wrong first sum carried forward)
    assert change == {
        "gained": 4,
        "lost": 1,
        "gained_from": {d.RIGHT_INVALID: 3, d.AGREE: 1},
        "lost_from": {d.PARTIAL_CREDIT: 1},
    }
    assert d.rule_change_of([P] * 2, ["6,11#", "7,12#"]) == {
        "gained": 0,
        "lost": 1,
        "gained_from": {},
        "lost_from": {d.PARTIAL_CREDIT: 1},
    }
