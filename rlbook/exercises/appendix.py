"""Checkers of the appendix's exercises: translating a book run into TRL's settings, and reading what a TRL
run's log leaves out from the rewards of its real batches.

- :func:`check_translation` (Exercise A.1): the ``GRPOConfig`` settings in
  which a run's translation differs from ``main``'s;
- :func:`check_silent_groups` (Exercise A.2): a function splitting one
  step's groups without a learning signal into all right and all wrong,
  tried on every step of the appendix's TRL run and held against TRL's own
  logged ``frac_reward_zero_std``; each mistake a student makes is named.

Each checker returns a :class:`~rlbook.exercises.CheckResult` and never raises on a wrong answer. The
reference solutions are registered at the bottom (:mod:`rlbook.exercises.registry`).
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Sequence
from typing import cast

import torch

from rlbook import runs
from rlbook.core import advantages as adv_lib
from rlbook.runs.catalogue import RUNS
from rlbook.trl.translation import OPTION_FIELDS, grpo_kwargs

from . import CheckResult, as_number, as_numbers, named_by, never_raises, not_a_function, not_answered, verdict
from .registry import Exercise, Mistake, register

BOX = 64
"""The widest line of a message a solution box prints: the box is narrower than the page's code column."""
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
    """Exercise A.1: the ``GRPOConfig`` settings that make TRL run the book's run ``run_name``.

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
        expected = grpo_kwargs(runs.spec(run_name).rl_config())
    except ValueError as err:
        return verdict(False, f"{run_name} has no TRL translation: {err}")
    main = grpo_kwargs(runs.MAIN)
    changed = [key for key in expected if expected[key] != main[key]]
    unknown = [key for key in answer if key not in expected]
    if unknown:
        return verdict(
            False,
            f"{', '.join(unknown)} is not among the settings this translation makes "
            "(look the names up in the options table)",
        )
    missing = [key for key in changed if key not in answer]
    if missing:
        hints = "; ".join(f"the one that translates the {_what_sets(key)}" for key in missing)
        steps = (
            " Remember that TRL counts some settings in optimiser steps." if set(missing) & set(OPTIMISER_STEPS) else ""
        )
        return verdict(
            False,
            f"{run_name} differs from main in {len(changed)} settings; your answer lacks "
            f"{len(missing)}: {hints}.{steps}",
        )
    wrong = [key for key in answer if not _same(answer[key], expected[key])]
    if wrong:
        key = wrong[0]
        given = answer[key]
        if isinstance(given, str) and not isinstance(expected[key], str):
            return verdict(False, f"{key} = {given!r} is text; give it as a number")
        cfg = runs.spec(run_name).rl_config()
        if (
            key in OPTIMISER_STEPS
            and as_number(given) is not None
            and cfg.updates_per_batch > 1
            and _same(given * cfg.updates_per_batch, expected[key])
        ):
            return verdict(
                False,
                f"{key} = {given!r} counts RL steps; TRL counts optimiser steps, and each RL step "
                f"of {run_name} takes {cfg.updates_per_batch} of them",
            )
        return verdict(
            False,
            f"{key} = {given!r} is not what {run_name} needs; look up the field it translates in the options table",
        )
    return verdict(True, textwrap.fill(f"right: {', '.join(f'{k} = {expected[k]!r}' for k in changed)}.", BOX))


TOLERANCE = 1e-6
"""How far a share may be from the truth: TRL logs in 32-bit floats."""


def split_of(rewards: torch.Tensor, group_size: int) -> tuple[float, float]:
    """The share of one step's groups whose rewards are all 1 (all right) and all 0 (all wrong) (Exercise A.2).

    ``rewards`` in TRL's order: each prompt's ``group_size`` rewards one
    after another. The truth the check holds answers against
    (:func:`rlbook.core.advantages.zero_variance_split`).
    """
    split = adv_lib.zero_variance_split(rewards.view(-1, group_size), right_from=1.0)
    return split["all_right"], split["all_wrong"]


def _shares(groups: torch.Tensor) -> tuple[float, float]:
    """All-right and all-wrong shares of rewards already grouped row by row (however wrongly)."""
    return split_of(groups.reshape(-1), groups.shape[1])


DIAGNOSES: dict[str, tuple[Callable[[torch.Tensor, int], object], str]] = {
    "swapped": (
        lambda r, g: split_of(r, g)[::-1],
        "your pair is (all wrong, all right): give the all-right share first",
    ),
    "percent": (
        lambda r, g: tuple(100 * x for x in split_of(r, g)),
        "those are percentages: give each share as a fraction of the groups, between 0 and 1",
    ),
    "counts": (
        lambda r, g: tuple(len(r) // g * x for x in split_of(r, g)),
        "those are counts of groups: divide each by the number of groups",
    ),
    "none": (
        lambda r, g: (0.0, 0.0),
        (
            "your function finds no group without a signal on any step, as it would if each of its groups mixed "
            "several prompts' rewards (grouped by position with rewards.view({g}, -1), or the whole batch taken as "
            "one group): a group is one prompt's {g} rewards, written one after another, rewards.view(-1, {g})"
        ),
    ),
    "by position": (
        lambda r, g: _shares(r.view(g, -1)),
        (
            "you grouped the rewards by position: TRL writes the {g} completions of one prompt one after "
            "another, so a group is rewards.view(-1, {g}), not rewards.view({g}, -1)"
        ),
    ),
    "strided": (
        lambda r, g: _shares(r.view(g, -1).T),
        (
            "you took every {n}th reward as a group: TRL writes the {g} completions of one prompt one after "
            "another, so a group is rewards.view(-1, {g})"
        ),
    ),
    "whole batch": (
        lambda r, g: _shares(r.view(1, -1)),
        (
            "you treated the whole batch as one group (what TRL's frac_reward_zero_std measures under "
            "scale_rewards='batch'): a group is one prompt's {g} rewards"
        ),
    ),
    "any right": (
        lambda r, g: ((r.view(-1, g).amax(dim=1) == 1).float().mean().item(), split_of(r, g)[1]),
        "your all-right share counts the groups with at least one right answer; all right means all {g}",
    ),
    "not all right": (
        lambda r, g: (split_of(r, g)[0], 1 - split_of(r, g)[0]),
        (
            "your all-wrong share counts every group that is not all right, including those with a "
            "signal, whose rewards differ"
        ),
    ),
    "silent and signal": (
        lambda r, g: (sum(split_of(r, g)), 1 - sum(split_of(r, g))),
        (
            "your pair is (without a signal, with a signal); split the groups without a signal into "
            "all right and all wrong"
        ),
    ),
    "silent": (
        lambda r, g: sum(split_of(r, g)),
        (
            "that is the one number TRL logs, frac_reward_zero_std, both kinds together; return the pair "
            "(all right, all wrong)"
        ),
    ),
    "complement": (
        lambda r, g: 1 - sum(split_of(r, g)),
        (
            "that is the share of groups with a signal (some right and some wrong), the groups TRL does not "
            "count; return the pair (all right, all wrong) of the others"
        ),
    ),
    "right only": (
        lambda r, g: split_of(r, g)[0],
        "that is the all-right share alone; return it with the all-wrong share, as a pair",
    ),
    "wrong only": (
        lambda r, g: split_of(r, g)[1],
        "that is the all-wrong share alone; return it with the all-right share, as a pair",
    ),
    "percent silent": (
        lambda r, g: 100 * sum(split_of(r, g)),
        "that is a percentage of the groups without a signal; return the two shares, as fractions",
    ),
    "count silent": (
        lambda r, g: len(r) // g * sum(split_of(r, g)),
        "that is a count of the groups without a signal; return the two shares of the groups",
    ),
    "mean reward": (lambda r, g: r.mean().item(), "that is the batch's mean reward"),
}
"""The mistakes Exercise A.2's check recognises: what the mistaken function returns for a step, and what to say."""


def _reading(value) -> tuple[float, ...] | None:
    """A returned value as a tuple of numbers: a pair (any flat sequence or tensor), a single number, or None."""
    number = as_number(value)
    if number is not None:
        return (number,)
    numbers = as_numbers(value)
    return None if numbers is None else tuple(numbers)


def _close(a: Sequence[float], b: Sequence[float]) -> bool:
    """Whether two readings hold as many numbers, each within :data:`TOLERANCE` of the other's."""
    return len(a) == len(b) and all(abs(x - y) <= TOLERANCE for x, y in zip(a, b))


def _diagnose(got: list[tuple[float, ...]], batches: list[torch.Tensor], group: int) -> str | None:
    """The message of the first mistake of :data:`DIAGNOSES` that the answers reproduce on every step, or None."""
    for wrong, message in DIAGNOSES.values():
        expected = cast(list[tuple[float, ...]], [_reading(wrong(r, group)) for r in batches])  # all numbers
        if all(_close(g, e) for g, e in zip(got, expected)):
            return message.format(g=group, n=len(batches[0]) // group)
    return None


def _batches(rewards, logged, group_size) -> tuple[list[torch.Tensor], list[float]] | None:
    """The steps' rewards as tensors and TRL's logged values, or None when the inputs are not the appendix's."""
    if not isinstance(group_size, int) or isinstance(group_size, bool) or group_size < 2:
        return None
    try:
        batches = [torch.tensor([float(x) for x in step]) for step in rewards]
        values = [float(x) for x in logged]
    except (TypeError, ValueError):
        return None
    if not batches or len(values) != len(batches) or any(len(b) == 0 or len(b) % group_size for b in batches):
        return None
    return batches, values


@never_raises
def check_silent_groups(fn: Callable | None, rewards=None, logged=None, group_size: int = 16) -> CheckResult:
    """Exercise A.2: ``fn(rewards, group_size) -> (all_right, all_wrong)``, the shares of one step's groups
    without a learning signal, tried on every step of the appendix's TRL run.

    ``rewards``: each step's rewards in TRL's order (``group_size`` per
    prompt, one prompt after another); ``logged``: TRL's
    ``frac_reward_zero_std`` of each step, which the two shares must add up
    to. A wrong function is named by the mistake of :data:`DIAGNOSES` it
    makes on every step; otherwise the message gives the first step where
    its shares do not add up to TRL's value, or where they do but split the
    groups wrongly. Never raises.
    """
    if fn is None:
        return not_answered("`silent_groups`, a function of one step's rewards and the group size")
    if not callable(fn):
        return not_a_function("silent_groups", fn)
    read = _batches(rewards, logged, group_size)
    if read is None:
        return verdict(False, "give the appendix's batches as the other arguments: F.a2.rewards, F.a2.logged, F.group")
    batches, values = read
    got = []
    for step, batch in enumerate(batches, start=1):
        try:
            returned = fn(batch.clone(), group_size)
        except Exception as err:  # noqa: BLE001 - the reader's code may raise anything
            return verdict(False, f"your function raised {type(err).__name__} at step {step}: {err}")
        if returned is None and step == 1:
            return not_answered("`silent_groups`, returning (all-right share, all-wrong share)")
        reading = _reading(returned)
        if reading is None or not all(abs(x) < float("inf") for x in reading):
            return verdict(
                False,
                f"at step {step} it returned {returned!r:.60}; return two numbers, the all-right "
                "share and the all-wrong share",
            )
        got.append(reading)
    truth = [split_of(b, group_size) for b in batches]
    if all(_close(g, t) for g, t in zip(got, truth)):
        first, last = truth[0], truth[-1]
        return verdict(
            True,
            textwrap.fill(
                f"right on all {len(batches)} steps. TRL logged {values[0]:.4f} at step 1: {first[0]:.4f} all right "
                f"and {first[1]:.4f} all wrong; at step {len(batches)}, {values[-1]:.4f}: {last[0]:.4f} all right and "
                f"{last[1]:.4f} all wrong. The log alone cannot tell the two apart.",
                BOX,
            ),
        )
    named = _diagnose(got, batches, group_size)
    if named is not None:
        return verdict(False, named)
    step = next(i for i, (g, t) in enumerate(zip(got, truth), start=1) if not _close(g, t))
    mine = got[step - 1]
    if len(mine) != 2:
        return verdict(
            False,
            f"return a pair of shares, (all right, all wrong); at step {step} yours has "
            f"{len(mine)} number{'s' if len(mine) != 1 else ''}",
        )
    if abs(sum(mine) - values[step - 1]) > TOLERANCE:
        return verdict(
            False,
            f"at step {step} your shares add up to {sum(mine):.4f}, but TRL logged "
            f"{values[step - 1]:.4f} for the groups whose {group_size} rewards are all equal",
        )
    return verdict(
        False,
        f"at step {step} your shares add up to TRL's {values[step - 1]:.4f}, but split it "
        "otherwise: a group is all right when its rewards are all 1, all wrong when all 0",
    )


def cispo_translation(run_name: str = "cispo") -> dict:
    """Exercise A.1's reference answer: the GRPOConfig settings of a CISPO run such as ``cispo`` that differ from main's.

    The loss and its cap on the ratio, the updates per batch, and the run's
    length and warm-up, which TRL counts in optimiser steps: RL steps times
    updates per batch.
    """
    cfg = runs.spec(run_name).rl_config()
    return {
        "loss_type": "cispo",
        "epsilon_high": cfg.cispo_cap,
        "num_iterations": cfg.updates_per_batch,
        "max_steps": cfg.steps * cfg.updates_per_batch,
        "warmup_steps": cfg.warmup * cfg.updates_per_batch,
    }


def silent_groups(rewards, group_size):
    """Exercise A.2's reference solution.

    The shares of groups whose rewards are all 1 and all 0.
    """
    groups = rewards.view(-1, group_size)  # one prompt's rewards per row
    all_right = (groups == 1).all(dim=1).float().mean().item()
    all_wrong = (groups == 0).all(dim=1).float().mean().item()
    return all_right, all_wrong


def _page_inputs(seeds: tuple[int, ...]) -> tuple:
    """Exercise A.2's inputs as the appendix passes them with its facts on ``seeds``: the batches, TRL's log and the
    group size."""
    from rlbook import book

    facts = book.load("bridge", seeds, check=False)
    return facts.a2.rewards, facts.a2.logged, facts.group


def _counted_in_rl_steps(run_name: str = "cispo") -> dict:
    """Exercise A.1's translation with the run's length and warm-up in RL steps, as the book counts them, not in
    TRL's optimiser steps."""
    cfg = runs.spec(run_name).rl_config()
    return dict(cispo_translation(run_name), max_steps=cfg.steps, warmup_steps=cfg.warmup)


MISTAKES: dict[str, tuple[Mistake, ...]] = {
    "trl-translation": (
        Mistake(_counted_in_rl_steps, "counts RL steps; TRL counts optimiser steps"),
        Mistake(
            lambda run_name="cispo": {k: v for k, v in cispo_translation(run_name).items() if k != "warmup_steps"},
            "Remember that TRL counts some settings in optimiser steps",
        ),
        Mistake(
            lambda run_name="cispo": dict(
                cispo_translation(run_name), cispo_cap=runs.spec(run_name).rl_config().cispo_cap
            ),
            "is not among the settings this translation makes",
        ),
    ),
    "silent-groups": tuple(
        Mistake(DIAGNOSES[key][0], named_by(DIAGNOSES[key][1])) for key in ("swapped", "percent", "any right", "silent")
    ),
}
"""The appendix's named mistakes, by exercise: each a plausible wrong answer and the words its checker names it with
(Exercise A.2's from its checker's table, :data:`DIAGNOSES`)."""

for _exercise in (
    Exercise(
        "trl-translation",
        "bridge",
        check_translation,
        cispo_translation,
        answer="value",
        inputs=lambda seeds: ("cispo",),
        answer_name="my_translation",
        call="F.a1.run",
        mistakes=MISTAKES["trl-translation"],
    ),
    Exercise(
        "silent-groups",
        "bridge",
        check_silent_groups,
        silent_groups,
        inputs=_page_inputs,
        mistakes=MISTAKES["silent-groups"],
    ),
):
    register(_exercise)
