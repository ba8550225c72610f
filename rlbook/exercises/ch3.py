"""Checks for chapter 3's exercises (credit assignment and the update).

- :func:`check_try_it`: the advantages of the groups ``[1, 1, 0, 0]`` and ``[1, 1, 1, 1]``;
- :func:`check_split_credit` (exercise 5): outcome and per-step credit of a multi-step answer;
- :func:`check_group_normalized` (exercise 14): group-normalised advantages;
- :func:`check_ppo_clip_loss`: PPO's clipped token loss.

Each check runs the reader's answer on fresh inputs, compares it with the
reference in ``rlbook`` and returns a :class:`~rlbook.exercises.CheckResult`
whose message says what differs. It never raises on a wrong answer.
"""
from __future__ import annotations

import math
import random
from typing import Callable

import numpy as np
import torch

from rlbook.analysis.credit import ProcessGroup, split_credit, token_steps
from rlbook.core import advantages as adv_lib
from rlbook.core import losses

from . import (CheckResult, Option, as_count, as_number, as_numbers, check_choice, never_raises, not_a_function,
               not_answered, verdict)

TRY_IT_GROUPS = {"[1, 1, 0, 0]": [1.0, 1.0, 0.0, 0.0], "[1, 1, 1, 1]": [1.0, 1.0, 1.0, 1.0]}
"""The two groups of the "try it" question, by the key the reader's dict uses."""


def _close(a, b, tol: float = 1e-4) -> bool:
    a, b = torch.as_tensor(a, dtype=torch.float64), torch.as_tensor(b, dtype=torch.float64)
    return a.shape == b.shape and bool(torch.allclose(a, b, atol=tol, rtol=tol))


def _call(fn: Callable, *args):
    """``fn(*args)``, or the exception it raised (reported, never re-raised)."""
    try:
        return fn(*args), None
    except Exception as err:  # noqa: BLE001 - a reader's bug becomes a message
        return None, f"your function raised {type(err).__name__}: {err}"


def _group_key(key) -> tuple[float, ...] | None:
    """A try-it key as the rewards it names: ``"[1, 1, 0, 0]"``, ``"[1,1,0,0]"``, ``"1100"`` or ``(1, 1, 0, 0)``."""
    if isinstance(key, str):
        text = key.strip().strip("[]()").replace(",", " ").split()
        if len(text) == 1 and text[0].isdigit():
            text = list(text[0])
        try:
            return tuple(float(x) for x in text)
        except ValueError:
            return None
    numbers = as_numbers(key)
    return None if numbers is None else tuple(numbers)


@never_raises
def check_try_it(answer: dict | None) -> CheckResult:
    """The reader's group-centred advantages for ``[1, 1, 0, 0]`` and ``[1, 1, 1, 1]`` (a dict of lists).

    A key may be written as in the example (``"[1, 1, 0, 0]"``), without
    spaces, or as a tuple of rewards; each value is a list of four numbers.
    """
    if answer is None:
        return not_answered("`answer` with one list of four advantages per group")
    if not isinstance(answer, dict):
        return verdict(False, f"`answer` must be a dict from group to advantages, e.g. {{{list(TRY_IT_GROUPS)[0]!r}: "
                              f"[...], ...}}, got {type(answer).__name__}")
    by_group = {_group_key(k): v for k, v in answer.items()}
    for key, rewards in TRY_IT_GROUPS.items():
        if tuple(rewards) not in by_group:
            return verdict(False, f"missing the group {key}: use the keys {list(TRY_IT_GROUPS)}")
        given = by_group[tuple(rewards)]
        values = as_numbers(given)
        if values is None:
            return verdict(False, f"{key}: give a list of four numbers, one advantage per answer; got {given!r:.40}")
        if len(values) != 4:
            return verdict(False, f"{key}: give one advantage per answer, four in all; got {len(values)}")
        expected = adv_lib.group_centered(rewards)
        if not _close(values, expected, 1e-3):
            mean = sum(rewards) / 4
            if _close(values, -expected, 1e-3):
                return verdict(False, f"{key}: the signs are flipped: an advantage is reward minus the mean")
            if _close(values, adv_lib.group_normalized(rewards), 1e-3):
                return verdict(False, f"{key}: you also divided by the standard deviation; the question asks for "
                                      "group-centred advantages, reward minus the group's mean only")
            return verdict(False, f"{key}: subtract the group's mean reward ({mean:g}) from each reward; "
                                  f"you gave {values}")
    return verdict(True, "the mean reward rises from 0.5 to 1, while the within-group signal falls to nothing: "
                         "in [1, 1, 1, 1] every answer equals the baseline, so no token is pushed either way")


def _random_completion(rng: random.Random) -> str:
    """A multi-step-looking answer: digit fields, commas, maybe an end mark, sometimes too many fields."""
    fields = ["".join(rng.choice("0123456789") for _ in range(rng.randint(1, 2))) for _ in range(rng.randint(1, 3))]
    text = ",".join(fields)
    return text + "#" if rng.random() < 0.7 else text


@never_raises
def check_split_credit(fn: Callable | None, group=None) -> CheckResult:
    """Exercise 5: ``fn(completion, outcome_adv, step_adv)`` must return per-character outcome and process credit.

    Tested on every rollout of ``group`` (a :class:`rlbook.analysis.credit.ProcessGroup`,
    the chapter's real one) when given, then on random answers.
    """
    if fn is None:
        return not_answered("`my_split_credit`")
    if not callable(fn):
        return not_a_function("my_split_credit", fn)
    if group is not None and not isinstance(group, ProcessGroup):
        return verdict(False, f"`group` must be the chapter's ProcessGroup (pgroup), got {type(group).__name__}")
    rng = random.Random(3)
    cases = []
    if group is not None:
        cases += [(c, float(group.outcome_adv[i]), [float(a) for a in group.step_adv[i]])
                  for i, c in enumerate(group.completions)]
    cases += [(_random_completion(rng), rng.uniform(-1, 1), [rng.uniform(-1, 1), rng.uniform(-1, 1)])
              for _ in range(40)]
    for completion, outcome_adv, step_adv in cases:
        got, error = _call(fn, completion, outcome_adv, step_adv)
        if error:
            return verdict(False, error)
        if got is None:
            return not_answered("`my_split_credit` (it returned None)")
        want = split_credit(completion, outcome_adv, step_adv)
        if not isinstance(got, dict) or set(got) != {"outcome", "process"}:
            return verdict(False, "return a dict with the keys 'outcome' and 'process'")
        for key in ("outcome", "process"):
            if as_numbers(got[key]) is None:
                return verdict(False, f"'{key}' must be a list of numbers, one per generated character; got "
                                      f"{got[key]!r:.40}")
            if len(got[key]) != len(completion):
                return verdict(False, f"{completion!r} has {len(completion)} generated characters (the end mark and "
                                      f"commas count); your '{key}' list has {len(got[key])}")
        got = {key: as_numbers(got[key]) for key in ("outcome", "process")}
        if not _close(got["outcome"], want["outcome"]):
            return verdict(False, f"{completion!r}: under an outcome reward every generated character gets the same "
                                  f"advantage, {outcome_adv:+.3f}; you gave {got['outcome']}")
        if not _close(got["process"], want["process"]):
            steps = token_steps(completion, len(step_adv))
            wrong = [i for i, (a, b) in enumerate(zip(got["process"], want["process"])) if abs(a - b) > 1e-4]
            return verdict(False, f"{completion!r}: process credit differs at character(s) {wrong}. Each character "
                                  f"takes the advantage of its step; the steps here are {steps} (a comma or end mark "
                                  f"belongs to the step it closes)")
    return verdict(True, f"outcome and process credit match on {len(cases)} answers")


@never_raises
def check_group_normalized(fn: Callable | None) -> CheckResult:
    """Exercise 14: ``fn(rewards)`` on a ``(groups, G)`` tensor must equal :func:`rlbook.core.advantages.group_normalized`.

    The reference divides the centred rewards by the population standard
    deviation (``ddof=0``) plus ``eps = 1e-6``.
    """
    if fn is None:
        return not_answered("`my_group_normalized`")
    if not callable(fn):
        return not_a_function("my_group_normalized", fn)
    gen = torch.Generator().manual_seed(14)
    binary = (torch.rand(12, 8, generator=gen) < 0.5).float()
    binary[0] = 1.0
    binary[1] = 0.0
    graded = torch.rand(6, 5, generator=gen) * 3 - 1
    for rewards in (binary, graded):
        got, error = _call(fn, rewards.clone())
        if error:
            return verdict(False, error)
        if got is None:
            return not_answered("`my_group_normalized` (it returned None)")
        try:
            # a list of NumPy rows goes through one array: torch warns on such a list, and is slow with it
            got = (got.detach().double() if isinstance(got, torch.Tensor)
                   else torch.as_tensor(np.asarray(got, dtype=np.float64)))
        except (TypeError, ValueError, RuntimeError):
            return verdict(False, f"return a tensor of numbers of the rewards' shape, got {type(got).__name__}")
        want = adv_lib.group_normalized(rewards).double()
        if got.shape != want.shape:
            return verdict(False, f"expected shape {tuple(want.shape)} (one advantage per reward), got {tuple(got.shape)}")
        if not torch.isfinite(got).all():
            return verdict(False, "some advantages are not finite: a group whose rewards are all equal has standard "
                                  "deviation 0, so add eps = 1e-6 to the denominator")
        if _close(got, want):
            continue
        if _close(got, adv_lib.group_normalized(rewards, ddof=1).double()):
            return verdict(False, "you divided by the sample standard deviation (n - 1); use the population one "
                                  "(divide by G), e.g. rewards.std(dim=-1, correction=0)")
        if _close(got, adv_lib.batch_normalized(rewards).double()):
            return verdict(False, "you scaled by the standard deviation of the whole batch; each group needs its own")
        if _close(got, adv_lib.group_centered(rewards).double()):
            return verdict(False, "these are the centred advantages: now divide each group by its standard deviation")
        if _close(got, (rewards / (rewards.std(dim=-1, keepdim=True, correction=0) + 1e-6)).double()):
            return verdict(False, "subtract each group's mean before dividing: advantages within a group must sum to 0")
        row = next(i for i in range(len(want)) if not _close(got[i], want[i]))
        return verdict(False, f"group {row} (rewards {rewards[row].numpy().round(3).tolist()}): expected "
                              f"{want[row].numpy().round(3).tolist()}, got {got[row].numpy().round(3).tolist()}")
    return verdict(True, "matches rlbook.core.advantages.group_normalized on binary and graded rewards")


def _random_batch(gen: torch.Generator, rows: int = 6, cols: int = 5) -> tuple[torch.Tensor, ...]:
    """Random ``logp``, ``old_logp``, per-sequence ``adv`` and ``mask`` with ratios well past the clip region."""
    old = -torch.rand(rows, cols, generator=gen) * 3
    logp = old + torch.randn(rows, cols, generator=gen) * 0.5
    adv = torch.randn(rows, generator=gen)
    mask = torch.rand(rows, cols, generator=gen) < 0.75
    mask[:, 0] = True
    return logp, old, adv, mask


@never_raises
def check_ppo_clip_loss(fn: Callable | None) -> CheckResult:
    """``fn(logp, old_logp, adv, mask, eps)`` must equal :func:`rlbook.core.losses.ppo_clip_loss`'s loss and its gradient.

    ``adv`` has one value per sequence (shape ``(B,)``); the loss averages over
    the masked tokens of the whole batch (``token_mean``).
    """
    if fn is None:
        return not_answered("`my_ppo_clip_loss`")
    if not callable(fn):
        return not_a_function("my_ppo_clip_loss", fn)
    gen = torch.Generator().manual_seed(7)
    for trial in range(5):
        logp, old, adv, mask = _random_batch(gen)
        eps = 0.2 if trial % 2 == 0 else 0.1
        mine = logp.clone().requires_grad_(True)
        ref = logp.clone().requires_grad_(True)
        got, error = _call(fn, mine, old.clone(), adv.clone(), mask.clone(), eps)
        if error:
            return verdict(False, error)
        if got is None:
            return not_answered("`my_ppo_clip_loss` (it returned None)")
        if not isinstance(got, torch.Tensor) or got.dim() != 0:
            return verdict(False, "return one number, a 0-dimensional tensor (the loss to minimise)")
        want, _ = losses.ppo_clip_loss(ref, old, adv, mask, eps_low=eps, eps_high=eps)
        if not _close(got.detach(), want.detach()):
            return verdict(False, _diagnose_ppo(float(got.detach()), logp, old, adv, mask, eps, float(want.detach())))
        if not got.requires_grad:
            return verdict(False, "the loss has no gradient: keep logp in the computation (no .detach(), no .item())")
        got.backward()
        want.backward()
        if mine.grad is None or not _close(mine.grad, ref.grad):
            return verdict(False, "the value is right but the gradient is not: " +
                           _diagnose_ppo_gradient(mine.grad, logp, old, adv, mask, eps))
    return verdict(True, "matches rlbook.core.losses.ppo_clip_loss, value and gradient, on 5 random batches")


def _diagnose_ppo(got: float, logp, old, adv, mask, eps: float, want: float) -> str:
    """The likeliest mistake behind a wrong PPO loss value."""
    ratio = torch.exp(logp - old)
    a = adv[:, None]
    m = mask.float()
    unclipped = ratio * a
    clipped = ratio.clamp(1 - eps, 1 + eps) * a
    candidates = {
        "the sign: the loss is minus the objective": -want,
        "you used the clipped term alone; take the minimum of the clipped and unclipped terms": -((clipped * m).sum() / m.sum()),
        "you used max instead of min": -((torch.maximum(unclipped, clipped) * m).sum() / m.sum()),
        "you averaged over every position; average over the masked (generated) tokens only": -(torch.minimum(unclipped, clipped).mean()),
        "no clipping at all: that is the plain importance-weighted loss": -((unclipped * m).sum() / m.sum()),
    }
    for hint, value in candidates.items():
        if math.isclose(got, float(value), rel_tol=1e-4, abs_tol=1e-5):
            return hint
    return f"expected {want:.5f}, got {got:.5f}"


def _gradient_of(loss_fn: Callable, logp: torch.Tensor) -> torch.Tensor:
    """The gradient of ``loss_fn(logp)`` with respect to ``logp``."""
    leaf = logp.clone().requires_grad_(True)
    loss_fn(leaf).backward()
    return leaf.grad


def _diagnose_ppo_gradient(grad: torch.Tensor | None, logp, old, adv, mask, eps: float) -> str:
    """The likeliest reason a PPO loss with the right value has the wrong gradient."""
    if grad is None or not torch.any(grad != 0):
        return ("no gradient reaches logp: a .detach(), .item() or torch.tensor(...) cuts it off. Compute the ratio "
                "from logp itself")
    a, m = adv[:, None], mask.float()

    def unclipped(lp):
        return -((torch.exp(lp - old) * a) * m).sum() / m.sum()

    def clipped_value_as_constant(lp):
        ratio = torch.exp(lp - old)
        low = torch.minimum(ratio * a, ratio.clamp(1 - eps, 1 + eps) * a)
        return -((ratio * a + (low - ratio * a).detach()) * m).sum() / m.sum()

    def detached_clip(lp):
        ratio = torch.exp(lp - old)
        return -((torch.minimum(ratio * a, ratio.detach().clamp(1 - eps, 1 + eps) * a)) * m).sum() / m.sum()

    if _close(grad, _gradient_of(unclipped, logp)) or _close(grad, _gradient_of(clipped_value_as_constant, logp)):
        return ("it is the unclipped gradient on every token. Where the clipped term is the minimum, its gradient "
                "must be zero: clip the ratio itself with torch.clamp, so the clip cuts the gradient there")
    if _close(grad, _gradient_of(detached_clip, logp)):
        return ("inside the clip range the clipped term must carry the gradient too: clamp the ratio, do not detach "
                "it before clamping")
    if torch.any(grad[~mask] != 0):
        return "tokens outside the mask get a gradient: multiply by the mask before summing"
    return "compute every term from logp itself (no .detach() inside the objective), and let the min pick the term"


TRY_IT_WHY = {
    "a": Option("The rewards are so high that the gradient saturates.", False,
                "nothing saturates here: the advantages are exactly 0, before any gradient is taken"),
    "b": Option("A higher mean reward lowers the learning rate.", False,
                "the learning rate does not depend on the rewards; look at what the advantages are"),
    "c": Option("Every reward in [1, 1, 1, 1] equals the group's mean, so every advantage is 0 and the update has "
                "no answer to prefer over another.", True,
                "right: the signal is each reward's distance from its own group's mean, and a group that is all "
                "right (or all wrong) has none, however high its mean"),
    "d": Option("The baseline is subtracted twice, once per right answer.", False,
                "the mean is subtracted once from each reward; compute the four advantages again"),
}
"""The stated answers to the "why" of chapter 3's Try it: why the mean reward rises while the group's signal vanishes."""


@never_raises
def check_try_it_why(choice: str | None) -> CheckResult:
    """The "why" of chapter 3's Try it, as a pick among :data:`TRY_IT_WHY`."""
    return check_choice(choice, TRY_IT_WHY, "why")


def _positions(value) -> set[int] | None:
    """Character positions given as a list, tuple, set or range of whole numbers, or None."""
    if isinstance(value, (str, bytes, dict)) or not hasattr(value, "__iter__"):
        return None
    items = [as_count(x) for x in value]
    return None if None in items else set(items)


@never_raises
def check_credit_reading(pushed_down, blamed, group, row: int) -> CheckResult:
    """Exercise 5's reading: which characters of answer ``row`` of ``group`` each credit pushes down.

    ``pushed_down`` lists the positions (from 0) of the characters that get a
    negative advantage under the outcome reward, ``blamed`` those that get
    one under the step labels; both are compared with
    :func:`rlbook.analysis.credit.split_credit` of that answer.
    """
    if pushed_down is None and blamed is None:
        return not_answered("`pushed_down` and `blamed`, two lists of character positions (from 0)")
    if not isinstance(group, ProcessGroup) or not isinstance(row, int) or not 0 <= row < len(group.completions):
        return verdict(False, "give the chapter's group and chosen answer (pgroup, prow) as the last two arguments")
    text = group.completions[row]
    credit = split_credit(text, float(group.outcome_adv[row]), [float(a) for a in group.step_adv[row]])
    want = {key: {i for i, a in enumerate(credit[key]) if a < 0} for key in ("outcome", "process")}
    for name, given, key in (("pushed_down", pushed_down, "outcome"), ("blamed", blamed, "process")):
        positions = _positions(given)
        if positions is None:
            return verdict(False, f"`{name}` must be a list of character positions of {text!r} (whole numbers "
                                  f"from 0 to {len(text) - 1})")
        if positions == want[key]:
            continue
        if key == "outcome":
            return verdict(False, f"pushed_down: the outcome advantage of {text!r} is one number, "
                                  f"{float(group.outcome_adv[row]):+.3f}, and every generated character shares it")
        return verdict(False, f"blamed: under the step labels a character takes its step's advantage, here "
                              f"{[round(float(a), 3) for a in group.step_adv[row]]}; a comma or the end mark "
                              "belongs to the step it closes")
    return verdict(True, f"the outcome pushes down all {len(want['outcome'])} characters of {text!r}; the step "
                         f"labels put the blame on {len(want['process'])} of them, "
                         f"{''.join(text[i] for i in sorted(want['process']))!r}, and spare the rest")
