"""The appendix's Exercise A.2 on the real batches of the TRL run the appendix shows (skipped without the ``trl``
extra): the reference passes, and each mistake issue 48 found, made on these batches, is named for what it is."""

from __future__ import annotations

import pytest

from rlbook.exercises import appendix as exa


@pytest.fixture(scope="module")
def batches():
    pytest.importorskip("trl")
    from rlbook import book

    facts = book.load("bridge")
    return facts.a2.rewards, facts.a2.logged, facts.group


def split(r, g):
    return exa.silent_groups(r, g)


def test_the_reference_passes_on_every_step_and_quotes_trls_log(batches):
    result = exa.check_silent_groups(exa.silent_groups, *batches)
    assert result.passed, result.message
    said = " ".join(result.message.split())
    assert f"right on all {len(batches[0])} steps" in said and "TRL logged" in said


@pytest.mark.parametrize(
    "wrong, hint",
    [
        (lambda r, g: 1 - sum(split(r, g)), "share of groups with a signal"),  # the complement, 0.9333 in issue 48
        (lambda r, g: split(r, g)[1], "the all-wrong share alone"),
        (lambda r, g: split(r, g)[0], "the all-right share alone"),
        (lambda r, g: (float((r == 1).all()), float((r == 0).all())), "no group without a signal"),  # the whole batch
        (lambda r, g: 100 * sum(split(r, g)), "a percentage of the groups without a signal"),  # 6.6667 in issue 48
        (lambda r, g: len(r) // g * sum(split(r, g)), "a count of the groups without a signal"),
        # by position: named so where that grouping finds silent groups, else as finding none (it depends on the draw)
        (
            lambda r, g: split(r.view(g, -1).reshape(-1), len(r) // g),
            ("you grouped the rewards by position", "no group without a signal"),
        ),
        *((m.wrong, m.says) for m in exa.MISTAKES["silent-groups"]),
    ],
)
def test_each_mistake_on_the_real_batches_is_named(batches, wrong, hint):
    result = exa.check_silent_groups(wrong, *batches)
    hints = hint if isinstance(hint, tuple) else (hint,)
    assert not result.passed and any(h in result.message for h in hints), result.message
