"""rlbook.exercises.checking: the net under every checker, a time limit on the reader's answer included."""

from __future__ import annotations

import rlbook.exercises.checking as ex


def test_an_answer_that_never_ends_is_stopped_with_a_message(monkeypatch):
    monkeypatch.setattr(ex, "ANSWER_SECONDS", 1)

    @ex.never_raises
    def check(fn):
        return ex.verdict(bool(fn()), "done")

    def forever():
        while True:
            pass

    result = check(forever)
    assert not result.passed and "stopped your answer after 1 s" in result.message
    assert check(lambda: True).passed  # the limit is lifted once the check returns


def test_a_check_that_raises_reports_instead():
    @ex.never_raises
    def check(answer):
        return ex.verdict(answer["x"] > 0, "fine")

    result = check([])
    assert not result.passed and "the check could not read your answer (TypeError" in result.message


def test_apart_prints_the_digits_that_tell_two_values_apart():
    assert ex.apart(0.99999957, 1.0, 6) == "0.9999996"
    assert ex.apart(0.0157, 0.0163) == "0.0157" and ex.apart(0.0163, 0.0157) == "0.0163"
    assert ex.apart(0.25, 0.5) == "0.250" and ex.apart(0.25, "junk", 6) == "0.250000"
