"""The appendix's exercise A.2 on the TRL run the appendix itself uses (skipped without the ``trl`` extra)."""
from __future__ import annotations

import pytest

from rlbook import trl_bridge as tb
from rlbook.core import advantages
from rlbook.exercises import appendix as exa


@pytest.fixture(scope="module")
def trl_run():
    pytest.importorskip("trl")
    return tb.load_run(tb.DEMO, 0)


def test_zero_variance_solution_passes_on_every_step_of_the_trl_run(trl_run):
    result = exa.check_zero_variance(lambda s: advantages.zero_variance_fraction(s["rewards"].view(-1, 16)),
                                     trl_run, step=5)
    assert result.passed, result.message
    assert f"right on all {len(trl_run.rollouts)} steps" in result.message and "TRL logged" in result.message


def test_a_function_that_answers_a_neighbouring_step_fails(trl_run):
    by_step = {s["step"]: s for s in trl_run.rollouts}

    def neighbour(stored):
        other = by_step.get(stored["step"] + 1, stored)
        return advantages.zero_variance_fraction(other["rewards"].view(-1, 16))

    result = exa.check_zero_variance(neighbour, trl_run, step=5)
    assert not result.passed and "group the" in result.message


def test_grouping_by_position_instead_of_prompt_fails(trl_run):
    result = exa.check_zero_variance(lambda s: advantages.zero_variance_fraction(s["rewards"].view(16, -1)),
                                     trl_run, step=5)
    assert not result.passed and "not view(group size, -1)" in result.message
