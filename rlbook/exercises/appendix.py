"""Checkers of the appendix's exercises: translating a book run into TRL's settings, and reading a TRL run's
rollouts as the book's audit does.

Each checker returns a :class:`~rlbook.exercises.CheckResult` and never raises on a wrong answer.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from rlbook import runs
from rlbook.core import advantages as adv_lib
from rlbook.core.rl import RLConfig
from rlbook.trl.translation import grpo_kwargs

from . import verdict

if TYPE_CHECKING:
    from rlbook.trl.trainer import TRLRun


def check_translation(answer: dict | None, run_name: str = "cispo"):
    """Appendix exercise: the ``GRPOConfig`` settings that make TRL run the book's run ``run_name``.

    ``answer`` must give every setting in which ``run_name``'s translation
    differs from ``main``'s (for ``cispo``: ``loss_type``, ``epsilon_high``,
    ``num_iterations``, ``max_steps``); any further key given must be right
    too. Returns a :class:`~rlbook.exercises.CheckResult`; never raises.
    """
    if answer is None:
        return verdict(False, "not answered yet: fill in a dict of GRPOConfig keyword arguments.")
    expected, main = grpo_kwargs(runs.spec(run_name).rl), grpo_kwargs(RLConfig())
    changed = [key for key in expected if expected[key] != main[key]]
    missing = [key for key in changed if key not in answer]
    if missing:
        return verdict(False, f"{run_name} differs from main in {', '.join(changed)}; your answer lacks "
                              f"{', '.join(missing)}.")
    wrong = [key for key in answer if key in expected and answer[key] != expected[key]]
    unknown = [key for key in answer if key not in expected]
    if unknown:
        return verdict(False, f"{', '.join(unknown)} is not among the settings this translation makes.")
    if wrong:
        key = wrong[0]
        return verdict(False, f"{key} = {answer[key]!r} is not what {run_name} needs; look up the field it "
                              "translates in the options table.")
    return verdict(True, f"right: {', '.join(f'{k} = {expected[k]!r}' for k in changed)}.")


def check_zero_variance(answer: float | None, run: TRLRun, step: int):
    """Appendix exercise: the zero-variance group fraction of ``run``'s batch at ``step``, from its rollouts.

    Compared with :func:`rlbook.core.advantages.zero_variance_fraction` of the
    stored rewards, and the message quotes TRL's logged
    ``frac_reward_zero_std`` for the same step. Never raises.
    """
    if answer is None:
        return verdict(False, "not answered yet: compute the fraction from run.rollouts.")
    stored = next(s for s in run.rollouts if s["step"] == step)
    expected = adv_lib.zero_variance_fraction(stored["rewards"].view(len(stored["prompts"]), -1))
    logged = next(m["zero_variance_frac"] for m in run.metrics if m["step"] == step)
    if not isinstance(answer, (int, float)) or abs(answer - expected) > 1e-9:
        return verdict(False, f"{answer!r} is not the share of step {step}'s groups whose rewards are all equal; "
                              f"group the {len(stored['rewards'])} rewards by prompt first.")
    return verdict(True, f"{expected:.4f}, and TRL logged frac_reward_zero_std = {logged:.4f} for the same batch.")
