"""Checkers of the appendix's exercises: translating a book run into TRL's settings, and reading a TRL run's
rollouts as the book's audit does.

- :func:`check_translation` (exercise A.1): the ``GRPOConfig`` settings in
  which a run's translation differs from ``main``'s;
- :func:`check_zero_variance` (exercise A.2): a function computing the
  zero-variance group fraction of one stored step, tried on every step.

Each checker returns a :class:`~rlbook.exercises.CheckResult` and never raises on a wrong answer.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from rlbook import runs
from rlbook.core import advantages as adv_lib
from rlbook.core.rl import RLConfig
from rlbook.runs.catalogue import RUNS
from rlbook.trl.translation import OPTION_FIELDS, grpo_kwargs

from . import CheckResult, as_number, never_raises, not_a_function, not_answered, verdict

if TYPE_CHECKING:
    from rlbook.trl.trainer import TRLRun

OPTIMISER_STEPS = ("max_steps", "warmup_steps")
"""Settings TRL counts in optimiser steps, of which an RL step with ``updates_per_batch`` updates takes several."""


def _what_sets(key: str) -> str:
    """The book setting(s) a GRPOConfig key translates, in words (for a hint that does not name the key)."""
    fields = [desc for desc, keys in OPTION_FIELDS.values() if key in keys]
    return " / ".join(fields) if fields else key


def _same(given, expected) -> bool:
    """Whether a reader's setting equals the translation's: numbers by value (4 == 4.0), text ignoring case."""
    if isinstance(expected, str):
        return isinstance(given, str) and given.strip().lower() == expected.lower()
    if isinstance(expected, (int, float)) and not isinstance(expected, bool):
        number = as_number(given)
        return number is not None and abs(number - expected) <= 1e-12 * max(1.0, abs(expected))
    return given == expected


@never_raises
def check_translation(answer: dict | None, run_name: str = "cispo") -> CheckResult:
    """Appendix exercise A.1: the ``GRPOConfig`` settings that make TRL run the book's run ``run_name``.

    ``answer`` must give every setting in which ``run_name``'s translation
    (:func:`rlbook.trl.translation.grpo_kwargs`) differs from ``main``'s;
    for ``cispo``: ``loss_type``, ``epsilon_high``, ``num_iterations``,
    ``max_steps`` and ``warmup_steps``, the last two because TRL counts them in
    optimiser steps. Any further key given must be a setting of the
    translation and right too. A missing setting is described by the book
    option it translates, not named. Never raises.
    """
    if answer is None:
        return not_answered("a dict of GRPOConfig keyword arguments")
    if not isinstance(answer, dict) or not all(isinstance(k, str) for k in answer):
        return verdict(False, f"give a dict from GRPOConfig keyword names to values, got {type(answer).__name__}")
    if not isinstance(run_name, str) or run_name not in RUNS:
        return verdict(False, f"{run_name!r} is not one of the book's runs")
    try:
        expected = grpo_kwargs(runs.spec(run_name).rl)
    except ValueError as err:
        return verdict(False, f"{run_name} has no TRL translation: {err}")
    main = grpo_kwargs(RLConfig())
    changed = [key for key in expected if expected[key] != main[key]]
    unknown = [key for key in answer if key not in expected]
    if unknown:
        return verdict(False, f"{', '.join(unknown)} is not among the settings this translation makes "
                              "(look the names up in the options table)")
    missing = [key for key in changed if key not in answer]
    if missing:
        hints = "; ".join(f"the one that translates the {_what_sets(key)}" for key in missing)
        steps = " Remember that TRL counts some settings in optimiser steps." if set(missing) & set(OPTIMISER_STEPS) \
            else ""
        return verdict(False, f"{run_name} differs from main in {len(changed)} settings; your answer lacks "
                              f"{len(missing)}: {hints}.{steps}")
    wrong = [key for key in answer if not _same(answer[key], expected[key])]
    if wrong:
        key = wrong[0]
        given = answer[key]
        if isinstance(given, str) and not isinstance(expected[key], str):
            return verdict(False, f"{key} = {given!r} is text; give it as a number")
        cfg = runs.spec(run_name).rl
        if key in OPTIMISER_STEPS and as_number(given) is not None and cfg.updates_per_batch > 1 and \
                _same(given * cfg.updates_per_batch, expected[key]):
            return verdict(False, f"{key} = {given!r} counts RL steps; TRL counts optimiser steps, and each RL step "
                                  f"of {run_name} takes {cfg.updates_per_batch} of them")
        return verdict(False, f"{key} = {given!r} is not what {run_name} needs; look up the field it "
                              "translates in the options table")
    return verdict(True, f"right: {', '.join(f'{k} = {expected[k]!r}' for k in changed)}.")


def _rollout_steps(run) -> list[dict] | None:
    """The stored steps of a TRL run (``run.rollouts``), or None when ``run`` is not one."""
    steps = getattr(run, "rollouts", None)
    if not isinstance(steps, list) or not steps or not all(isinstance(s, dict) and "rewards" in s for s in steps):
        return None
    return steps


@never_raises
def check_zero_variance(answer: Callable | None, run: TRLRun, step: int = 5) -> CheckResult:
    """Appendix exercise A.2: ``answer(stored) -> fraction`` of one stored step's groups whose rewards are all equal.

    ``stored`` is one entry of ``run.rollouts``. The function is tried on
    every stored step, so that a step whose fraction happens to equal its
    neighbour's cannot hide a wrong grouping, and compared with
    :func:`rlbook.core.advantages.zero_variance_fraction` of the rewards
    grouped by prompt. The message quotes TRL's logged
    ``frac_reward_zero_std`` for ``step``. Never raises.
    """
    if answer is None:
        return not_answered("`my_zero_variance`, a function of one stored step")
    if not callable(answer):
        kind = "a number" if as_number(answer) is not None else type(answer).__name__
        return verdict(False, f"`my_zero_variance` must be a function of one stored step (an entry of "
                              f"run.rollouts), so that it can be tried on every step; got {kind}")
    steps = _rollout_steps(run)
    if steps is None:
        return verdict(False, "give the appendix's TRL run (trl_run) as the second argument")
    for stored in steps:
        group = len(stored["rewards"]) // len(stored["prompts"])
        expected = float(adv_lib.zero_variance_fraction(stored["rewards"].view(len(stored["prompts"]), -1)))
        try:
            returned = answer(stored)
        except Exception as err:  # noqa: BLE001 - the reader's code may raise anything
            return verdict(False, f"your function raised {type(err).__name__} at step {stored['step']}: {err}")
        got = as_number(returned)
        if got is None:
            return verdict(False, f"at step {stored['step']} it returned {returned!r:.40}; return the fraction, "
                                  "one number")
        if abs(got - expected) > 1e-6:
            hint = (f"group the {len(stored['rewards'])} rewards by prompt first: {group} per group, in prompt "
                    "order (view(-1, group size), not view(group size, -1))")
            if 1 < got <= len(stored["prompts"]):
                hint = "that looks like a count of groups; give the fraction of groups"
            return verdict(False, f"at step {stored['step']} {got:.4f} is not the share of groups whose rewards are "
                                  f"all equal: {hint}")
    logged = next((m["zero_variance_frac"] for m in run.metrics if m["step"] == step), None)
    stored = next((s for s in steps if s["step"] == step), steps[0])
    value = float(adv_lib.zero_variance_fraction(stored["rewards"].view(len(stored["prompts"]), -1)))
    tail = f", and TRL logged frac_reward_zero_std = {logged:.4f} for the same batch" if logged is not None else ""
    return verdict(True, f"right on all {len(steps)} steps; at step {stored['step']} {value:.4f}{tail}.")
