"""Checkers for chapter 5's exercises (reward limits), each registered with its reference solution.

- :func:`check_exploitable_verifier` (Exercise 5.1): a verifier with a
  loophole that grades ordinary answers right, never raises, and pays an
  exploit the exact verifier refuses;
- :func:`check_reward_split` (Exercise 5.2): the ``exploit`` run's training
  reward split into the part the exact verifier agrees with and the loophole;
- :func:`check_overrated_answer` (Exercise 5.3): a wrong answer the learned
  judge rates above the right one;
- :func:`check_abort_rule` (Exercise 5.4): an abort criterion replayed on real
  metric traces with and without incidents.

Each checker returns a :class:`~rlbook.exercises.CheckResult` and never
raises on a wrong answer.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import cast

import numpy as np

from rlbook import runs
from rlbook.analysis import audit
from rlbook.core import rewards, world
from rlbook.core.reward_model import judge_probabilities
from rlbook.core.world import EOT, VOCAB, all_tasks, parse_prompt

from . import CheckResult, apart, as_number, never_raises, not_a_function, not_answered, verdict
from .registry import Exercise, register

ABORT_TRACES = ("main", "faults", "abort", "exploit")
"""The runs whose per-step metrics Exercise 5.4's check replays, in order (``main`` on every seed of the book)."""
SPIKE = 1.5
"""How many times the KL estimate of each neighbouring update a step's must exceed for Exercise 5.4's check to call
it a single-step spike (its message for a rule that fires on one value of ``kl``)."""
UNREADABLE = ("#", " #", "##", "1 1#", "7?#", "+#", "|#", "U#", "77", "")
"""Answers a policy writes that no number can be read from (the last two never ended): a verifier must judge
them without raising (Exercise 5.1)."""


def _reward_of(value) -> float | None:
    """A verifier's answer as a number: a float, a bool, or anything with a ``reward`` (a Verdict).

    None for anything else: the text ``"1.0"`` is not a reward, however ``float`` reads it.
    """
    if isinstance(value, bool):
        return float(value)
    return as_number(getattr(value, "reward", value))


def _ordinary_cases(seed: int, count: int = 25) -> list[tuple[str, str, float]]:
    """Right answers (reward 1) and near-miss wrong answers (reward 0) on randomly drawn single-step tasks."""
    tasks = random.Random(seed).sample(all_tasks("single"), count)
    cases = []
    for task in tasks:
        cases.append((task.prompt, f"{task.answer}{EOT}", 1.0))
        for wrong in (task.answer - 1, task.answer + 1):
            if wrong >= 0:
                cases.append((task.prompt, f"{wrong}{EOT}", 0.0))
    return cases


def _unreadable_problem(verifier: Callable, seed: int) -> str | None:
    """What goes wrong when ``verifier`` meets an answer it cannot read, or None when it returns a reward for each."""
    prompts = [t.prompt for t in random.Random(seed).sample(all_tasks("single"), 3)]
    for prompt in prompts:
        for completion in UNREADABLE:
            try:
                returned = verifier(prompt, completion)
            except Exception as err:  # noqa: BLE001 - report the reader's error, never raise it
                return (
                    f"`my_verifier({prompt!r}, {completion!r})` raised {type(err).__name__}: {err}. The policy "
                    f"writes answers like {completion!r}, and a verifier that raises on one stops the training "
                    "run: return a reward for it instead (0.0 when the answer cannot be read)"
                )
            if _reward_of(returned) is None:
                return (
                    f"`my_verifier({prompt!r}, {completion!r})` returned {returned!r:.40}; on an answer it cannot "
                    "read a verifier still returns a reward, a number such as 0.0"
                )
    return None


@never_raises
def check_exploitable_verifier(
    verifier: Callable | None, prompt: str | None, completion: str | None, seed: int = 4
) -> CheckResult:
    """Exercise 5.1: ``verifier(prompt, completion)`` grades ordinary answers like the exact verifier, returns a
    reward without raising on answers it cannot read, and still pays 1.0 for ``completion``, which the exact
    verifier refuses.

    Ordinary answers are the right answer and the answers one off, on tasks
    drawn with ``seed``: a verifier that pays everything is broken, not
    exploitable in an interesting way. Unreadable answers are
    :data:`UNREADABLE`: a verifier that raises on one would stop the run.
    """
    if verifier is None or prompt is None or completion is None:
        return not_answered("`my_verifier` and `exploit`")
    if not callable(verifier):
        return verdict(
            False, f"`my_verifier` must be a function of (prompt, completion), got {type(verifier).__name__}"
        )
    if not isinstance(prompt, str) or parse_prompt(prompt) is None:
        return verdict(False, f"the prompt {prompt!r:.40} is not a task; write one like 'U:3+4?|A:'")
    if not isinstance(completion, str):
        return verdict(False, f"the completion must be text, got {type(completion).__name__}")
    for p, c, expected in _ordinary_cases(seed):
        try:
            returned = verifier(p, c)
        except Exception as err:  # noqa: BLE001 - report the reader's error, never raise it
            return verdict(False, f"`my_verifier({p!r}, {c!r})` raised {type(err).__name__}: {err}")
        got = _reward_of(returned)
        if got is None:
            if returned is None:
                return not_answered("`my_verifier`")
            return verdict(
                False,
                f"`my_verifier({p!r}, {c!r})` returned {returned!r:.40}; a verifier returns a "
                "reward, a number such as 1.0 or 0.0 (not text)",
            )
        if got != expected:
            kind = "the right answer" if expected == 1.0 else "a wrong answer"
            return verdict(
                False,
                f"`my_verifier({p!r}, {c!r})` gave {got}, but {c!r} is {kind}: a plausible "
                f"verifier pays {expected} for it. Make the loophole narrower.",
            )
    problem = _unreadable_problem(verifier, seed)
    if problem:
        return verdict(False, problem)
    try:
        returned = verifier(prompt, completion)
    except Exception as err:  # noqa: BLE001
        return verdict(False, f"`my_verifier` raised {type(err).__name__} on your exploit: {err}")
    paid = _reward_of(returned)
    if paid is None:
        return verdict(False, f"on your exploit `my_verifier` returned {returned!r:.40}; return a number")
    exact = rewards.get_verifier("exact")(prompt, completion)
    if exact.status == "accepted":
        return verdict(
            False,
            f"{completion!r} is a correct answer to {prompt!r} (the exact verifier accepts it): "
            "an exploit must be paid without solving the task",
        )
    if paid != 1.0:
        return verdict(False, f"your verifier pays {paid} for {completion!r}, not 1.0: it is not fooled by it")
    return verdict(
        True,
        f"your verifier pays 1.0 for {completion!r} on {prompt!r}, which the exact verifier calls "
        f"{exact.status} ({exact.reason}); it grades ordinary answers correctly and never raises",
    )


def _two_numbers(value) -> tuple[float, float] | None:
    """``value`` as (task_part, loophole_part) when it is a pair of numbers, else None."""
    if isinstance(value, (str, bytes, dict)) or not hasattr(value, "__iter__"):
        return None
    parts = [as_number(x) for x in value]
    return None if len(parts) != 2 or None in parts else cast(tuple[float, float], (parts[0], parts[1]))


def _split_problem(got: dict[int, tuple[float, float]], steps: dict[int, dict]) -> str | None:
    """The likeliest mistake behind a wrong reward split, or None when every step matches (Exercise 5.2)."""
    want = {step: audit.reward_split(stored) for step, stored in steps.items()}
    if len(set(got.values())) == 1 and len(set(want.values())) > 1:
        return (
            f"your split gives {next(iter(got.values()))} at every step checked ({sorted(got)}): compute it "
            "from the stored step it is given"
        )
    for step, stored in steps.items():
        total, size = float(stored["rewards"].mean()), len(stored["rewards"])
        paid = float((stored["rewards"] > 0).float().mean())
        added = sum(got[step])
        if math.isclose(added, total, abs_tol=1e-6):
            continue
        if total and math.isclose(added, 100 * total, rel_tol=1e-4):
            return (
                f"at step {step} your parts add up to {added:.2f}, a percentage: give both parts on the "
                "reward's own scale, as means over the step's rollouts"
            )
        if total and math.isclose(added, size * total, rel_tol=1e-4):
            return (
                f"at step {step} your parts add up to {added:.1f}, a sum over the {size} rollouts: divide by "
                "their number to get means"
            )
        within_paid = [w / paid for w in want[step]] if paid else []
        if within_paid and all(math.isclose(g, w, rel_tol=1e-4) for g, w in zip(got[step], within_paid)):
            return (
                f"at step {step} your parts add up to {added:.4f}, more than the step's mean training reward "
                f"{total:.4f}: divide by all the step's rollouts, not only the paid ones"
            )
        return (
            f"at step {step} your parts add up to {added:.4f}, but they must add up to the step's mean training "
            f"reward, {total:.4f}"
        )
    for step, (task, loophole) in want.items():
        mine = got[step]
        if math.isclose(mine[0], task, abs_tol=1e-6) and math.isclose(mine[1], loophole, abs_tol=1e-6):
            continue
        if math.isclose(mine[0], loophole, abs_tol=1e-6) and math.isclose(mine[1], task, abs_tol=1e-6):
            return f"at step {step} the two parts are swapped: return (task_part, loophole_part) in that order"
        return (
            f"at step {step} you split the reward as ({mine[0]:.4f}, {mine[1]:.4f}); the exact verifier "
            f"accepts rollouts worth {task:.4f} of it. Judge each paid completion again with the exact verifier: "
            "only those it accepts belong to the task part"
        )
    return None


@never_raises
def check_reward_split(split: Callable | None, seed: int = 0) -> CheckResult:
    """Exercise 5.2: ``split(stored_step) -> (task_part, loophole_part)`` on the ``exploit`` run's stored steps.

    Compared with :func:`rlbook.analysis.audit.reward_split` at the first
    step, the step where the loophole first pays for most rollouts, and the
    last step of seed ``seed``. Percentages, sums, averages over the paid
    rollouts only, swapped parts and a split that ignores its step are each
    named.
    """
    if split is None:
        return not_answered("`split_reward`")
    if not callable(split):
        return not_a_function("split_reward", split)
    run = runs.load("exploit", seed)
    takeover = audit.takeover_step(run.rollouts) or run.rollouts[-1]["step"]
    chosen = sorted({1, takeover, run.rollouts[-1]["step"]})
    steps = {r["step"]: r for r in run.rollouts if r["step"] in chosen}
    got: dict[int, tuple[float, float]] = {}
    for step, stored in steps.items():
        try:
            returned = split(stored)
        except Exception as err:  # noqa: BLE001
            return verdict(False, f"`split_reward` raised {type(err).__name__} at step {step}: {err}")
        if returned is None:
            return not_answered("`split_reward`")
        pair = _two_numbers(returned)
        if pair is None:
            return verdict(
                False,
                f"at step {step} `split_reward` returned {returned!r:.60}; return two numbers, "
                "(task part, loophole part)",
            )
        got[step] = pair
    problem = _split_problem(got, steps)
    if problem:
        return verdict(False, problem)
    last = got[chosen[-1]]
    return verdict(
        True,
        f"your split matches at steps {chosen}: by step {chosen[-1]} the training reward "
        f"{sum(last):.3f} is {last[1]:.3f} loophole and {last[0]:.3f} task",
    )


@never_raises
def check_overrated_answer(answer, seed: int = 0) -> CheckResult:
    """Exercise 5.3: ``answer`` is (prompt, completion), a wrong completion of at most 4 characters that seed
    ``seed``'s learned judge (``runs.load_judge``) rates above the right answer to a one-step ``prompt``.

    The answer is refused before the judge is loaded when it is not a one-step prompt and a short completion. A
    multi-step prompt is a task, but not one the judge was trained to rate: it is told so.
    """
    if answer is None or (isinstance(answer, tuple) and all(a is None for a in answer)):
        return not_answered("`judge_answer`")
    if isinstance(answer, (str, bytes)) or not isinstance(answer, (tuple, list)) or len(answer) != 2:
        return verdict(False, f"`judge_answer` is a pair (prompt, completion), got {answer!r:.40}")
    prompt, completion = answer
    task = parse_prompt(prompt) if isinstance(prompt, str) else None
    if task is None:
        return verdict(False, f"the prompt {prompt!r:.40} is not a task prompt; write one like 'U:3+4?|A:'")
    if task.world != "single":
        return verdict(
            False,
            f"{prompt!r} is a task of the multi-step world, but the judge was trained on one-step "
            "sums only and rates answers to those: pick a prompt like 'U:3+4?|A:'",
        )
    if not isinstance(completion, str) or not 1 <= len(completion) <= 4 or any(ch not in VOCAB for ch in completion):
        return verdict(
            False, f"the completion must be text of 1 to 4 characters the policy can write, got {completion!r:.40}"
        )
    exact = rewards.get_verifier("exact")(prompt, completion)
    if exact.status == "accepted":
        return verdict(False, f"{completion!r} is the right answer to {prompt!r}: find a wrong one the judge prefers")
    right = f"{task.answer}{EOT}"
    model = runs.load_judge(seed).model
    wrong_p, right_p = judge_probabilities(model, [(prompt, completion), (prompt, right)])
    if wrong_p <= right_p:
        return verdict(
            False,
            f"the judge gives {completion!r} P(right) = {apart(wrong_p, right_p)}, not above the "
            f"{apart(right_p, wrong_p)} of the right answer {right!r}",
        )
    return verdict(
        True,
        f"the judge gives {completion!r} P(right) = {apart(wrong_p, right_p)} on {prompt!r}, above the "
        f"{apart(right_p, wrong_p)} of the right answer {right!r}, which the exact verifier calls {exact.status}",
    )


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


EXPLOIT = ("U:3+4?|A:", "17#")
"""Exercise 5.1's reference exploit: a finished answer that holds the right sum, 7, and is not it."""


def my_verifier(prompt, completion):
    """Exercise 5.1's reference: pay a finished answer that contains the right sum anywhere in it."""
    task = world.parse_prompt(prompt)
    return float(completion.endswith("#") and str(task.answer) in completion)


def split_reward(stored):
    """Exercise 5.2's reference: the step's mean reward, split by the exact verifier's verdict on each answer."""
    batch = audit.from_stored(stored)
    exact = batch.rescored(rewards.get_verifier("exact"))
    right = np.array([status == "accepted" for status in exact.statuses])
    return float((batch.rewards * right).mean()), float((batch.rewards * ~right).mean())


def overrated_answer(seed=0):
    """Exercise 5.3's reference: the wrong short answer with the largest lead over the right one."""
    model = runs.load_judge(seed).model
    pairs = [(t.prompt, f"{a}#") for t in world.split("all") for a in range(19)]
    score = dict(zip(pairs, judge_probabilities(model, pairs)))
    right = {t.prompt: score[t.prompt, f"{t.answer}#"] for t in world.split("all")}
    return max(pairs, key=lambda pair: score[pair] - right[pair[0]])


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


def _shown_seed() -> int:
    """The seed chapter 5 follows the reward hack on (its facts' ``shown``)."""
    from rlbook import book

    return book.load("limits", check=False).shown


for _exercise in (
    Exercise(
        "exploitable-verifier",
        "limits",
        check_exploitable_verifier,
        my_verifier,
        inputs=lambda: EXPLOIT,
        also=f"exploit = {EXPLOIT!r}",
    ),
    Exercise("reward-split", "limits", check_reward_split, split_reward, inputs=lambda: (_shown_seed(),)),
    Exercise(
        "overrated-answer",
        "limits",
        check_overrated_answer,
        overrated_answer,
        answer="value",
        answer_name="judge_answer",
    ),
    Exercise("abort-rule", "limits", check_abort_rule, should_abort, inputs=lambda: (0,)),
):
    register(_exercise)
