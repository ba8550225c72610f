"""Chapter 5's Exercise 5.4 (reward limits): an abort criterion replayed on real metric traces.

:func:`check_abort_rule` runs the reader's ``rule(history) -> bool`` over the
per-step metrics of ``main`` (every seed of the book), where it must stay
quiet, and of ``faults``, ``abort`` and ``exploit``, where it must fire, and
not before the first incident; :func:`should_abort` is the reference.
:mod:`rlbook.exercises.ch5` registers the exercise, and the page calls the
checker through it (``ch5.check_abort_rule``). The check returns a
:class:`~rlbook.exercises.CheckResult` and never raises on a wrong answer.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from rlbook import runs
from rlbook.analysis import audit

from . import CheckResult, apart, as_number, never_raises, not_a_function, not_answered, verdict

ABORT_TRACES = ("main", "faults", "abort", "exploit")
"""The runs whose per-step metrics Exercise 5.4's check replays, in order (``main`` on every seed of the book)."""
SPIKE = 1.5
"""How many times the KL estimate of each neighbouring update a step's must exceed for Exercise 5.4's check to call
it a single-step spike (its message for a rule that fires on one value of ``kl``)."""


class _NotABool(Exception):
    """Raised inside Exercise 5.4's replay when the reader's rule returns something other than True or False."""


def _strict(rule: Callable[[list[dict]], bool]) -> Callable[[list[dict]], bool]:
    """``rule``, refusing any answer that is not a bool (a truthy string must not count as an abort)."""

    def strict(history: list[dict]) -> bool:
        answer = rule(history)
        if not isinstance(answer, (bool, np.bool_)):
            raise _NotABool(answer)
        return bool(answer)

    return strict


@never_raises
def check_abort_rule(rule: Callable | None, seed: int = 0) -> CheckResult:
    """Exercise 5.4: ``rule(history) -> bool`` run over the metrics of ``main``, ``faults``, ``abort`` and ``exploit``.

    ``history`` is the list of per-step metric dicts up to the current step.
    The rule must never fire on ``main``, which is replayed on every seed of
    the book (``seed`` first): a healthy run's ``kl`` estimate spikes at a
    single update on some seeds, and a rule that stops at one high value is
    told where and what ``kl`` did there (:func:`_main_alarm`). On ``faults``
    and ``abort`` it must fire, and not before the first injected incident;
    on ``exploit`` it must fire. The ``exploit`` trace is that of ``seed`` if
    the reward hack took over there (see
    :func:`rlbook.analysis.audit.takeover_step`), else of the first of seeds
    0-2 where it did; ``faults`` and ``abort`` are those of ``seed``.
    """
    if rule is None:
        return not_answered("`should_abort`")
    if not callable(rule):
        return not_a_function("should_abort", rule)
    try:
        first = rule(list(runs.load("main", seed).metrics[:1]))
    except Exception:  # noqa: BLE001 - the replay below reports it with its trace
        first = False
    if first is None:
        return not_answered("`should_abort`")
    alarms = {}
    for name, trace_seed in _abort_traces(seed):
        run = runs.load(name, trace_seed)
        try:
            alarms[name] = audit.first_alarm(_strict(rule), run.metrics)
        except _NotABool as err:
            return verdict(
                False,
                f"on the {name!r} trace your rule returned {err.args[0]!r:.40}; return True to "
                "abort and False to go on (a string or a number is not a decision)",
            )
        except Exception as err:  # noqa: BLE001
            return verdict(
                False,
                f"your rule raised {type(err).__name__}: {err} on the {name!r} trace. Steps whose "
                "update was paused have no 'loss' or 'kl': read metrics with .get()",
            )
        problem = _main_alarm(rule, run, alarms[name]) if name == "main" else _abort_problem(name, run, alarms[name])
        if problem:
            return verdict(False, problem)
    fired = ", ".join(f"{n} at step {alarms[n]}" for n in ABORT_TRACES if alarms[n] is not None)
    return verdict(True, f"your rule stays quiet on main and fires on {fired}")


def _abort_traces(seed: int) -> list[tuple[str, int]]:
    """The (run, seed) traces Exercise 5.4 replays: ``main`` on every book seed, ``seed`` first, then the others."""
    from rlbook.book import SEEDS

    mains = [("main", s) for s in [seed, *(s for s in SEEDS if s != seed)]]
    return [*mains, ("faults", seed), ("abort", seed), ("exploit", _hacked_seed(seed))]


def _logged_kl(rows) -> float | None:
    """The first KL estimate logged among ``rows`` (a step whose update was paused logs none), or None."""
    return next((row["kl"] for row in rows if as_number(row.get("kl")) is not None), None)


def _main_alarm(rule: Callable, run, alarm: int | None) -> str | None:
    """What a rule that fires on the healthy ``main`` at step ``alarm`` did wrong, or None when it stays quiet.

    When the alarm goes away with that step's ``kl`` replaced by the update
    before's, the rule fired on that one value; the message then gives ``kl``
    at the updates either side, read from the trace, and calls the step a
    single-step spike when its ``kl`` is :data:`SPIKE` times both of theirs.
    """
    if alarm is None:
        return None
    where = f"your rule fires on the healthy 'main' run (seed {run.seed}) at step {alarm}"
    rows = list(run.metrics)
    at = next(i for i, row in enumerate(rows) if row["step"] == alarm)
    now, before, after = rows[at].get("kl"), _logged_kl(reversed(rows[:at])), _logged_kl(rows[at + 1 :])
    if as_number(now) is None or before is None:
        return f"{where}: a criterion that stops good runs gets switched off. Loosen it"
    try:
        alone = not _strict(rule)([*rows[:at], {**rows[at], "kl": before}])
    except Exception:  # noqa: BLE001 - a rule that cannot judge the changed history tells nothing here
        alone = False
    if not alone:
        return f"{where}: a criterion that stops good runs gets switched off. Loosen it"
    if after is not None and now > SPIKE * max(before, after):
        return (
            f"{where} on that update's kl alone: kl jumped from {apart(before, now, 2)} to "
            f"{apart(now, before, 2)} there and was back at {apart(after, now, 2)} on the next update. That is "
            "a single-step spike of one batch's estimate on a healthy run, and a rule that reads one value of "
            "kl stops at such spikes. Make it wait until kl has stayed high for several updates in a row"
        )
    return (
        f"{where} on that update's kl, {apart(now, before, 2)}: given the kl of the update before "
        f"({apart(before, now, 2)}) instead, it would stay quiet. A healthy run's kl reaches that level, so "
        "raise the bar, and make the rule wait until kl has stayed high for several updates in a row"
    )


def _hacked_seed(seed: int) -> int:
    """``seed`` if the reward hack took over in its ``exploit`` run, else the first of seeds 0-2 where it did."""
    order = [seed] + [s for s in (0, 1, 2) if s != seed]
    found = audit.first_hacked_seed({s: runs.load("exploit", s).rollouts for s in order})
    return seed if found is None else found


def _abort_problem(name: str, run, alarm: int | None) -> str | None:
    """What is wrong with a rule's first alarm on the ``faults``, ``abort`` or ``exploit`` trace, or None."""
    if name == "exploit":
        if audit.takeover_step(run.rollouts) is None or alarm is not None:
            return None
        return (
            f"your rule never fires on 'exploit' (seed {run.seed}), where the fail-open verifier was exploited: "
            "watch how far the policy moves, e.g. the 'kl' metric"
        )
    first = min(step for step, _ in runs.spec(name).rl_config().faults)
    if alarm is None:
        return f"your rule never fires on {name!r}, although faults were injected from step {first}"
    if alarm < first:
        return f"your rule fires on {name!r} at step {alarm}, before the first incident (step {first}): a false alarm"
    return None


def should_abort(history):
    """Exercise 5.4's reference: stop on an outage, a malformed burst, a non-finite loss, or a policy that has
    stayed far from where it started (a KL estimate above 1 on each of the last five updates).

    A healthy ``main`` stays mostly under 0.5, with rare single-step spikes (to 1.25 on one seed here, to 4 on
    one numerical draw), while ``exploit``'s first full-size updates lift it above 1.3 and it stays there:
    hence five updates in a row, not one high value.
    """
    now = history[-1]
    if now["unverifiable_rate"] > 0.1 or now["malformed_rate"] > 0.5:
        return True  # the verifier is down, or the answers stopped parsing
    loss = now.get("loss")  # absent, like "kl", on a step whose update was paused
    if loss is not None and not math.isfinite(loss):
        return True  # the update itself broke
    kls = [h["kl"] for h in history if h.get("kl") is not None][-5:]
    return len(kls) == 5 and min(kls) > 1.0
