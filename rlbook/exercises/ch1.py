"""Chapter 1's exercises (the RL loop) as its page meets them: each registered with its checker, reference and inputs.

- Exercise 1.1, the RL terms defined, then mapped onto a real rollout
  (:func:`check_definitions`, :func:`check_rollout_labels`): checkers and
  reference answers in :mod:`rlbook.exercises.loop_terms`.
- Exercise 1.2, advantages with a group-mean baseline and what they do to a
  real batch (:func:`check_advantages`, :func:`check_pushes`), and Exercise 1.3,
  the chance that a group holds a right answer
  (:func:`check_chance_of_a_right_answer`, :func:`check_below_half`): checkers
  in :mod:`rlbook.exercises.loop_groups`, reference solutions here, so that the
  solution boxes read them from this module.

The page imports this module alone and calls every check through it
(``ch1.check_advantages``): the book's table of exercises reads a page's
checks from its ``chN.check_...`` calls. The inputs an exercise is registered
with come from the chapter's facts, as the page's do.
"""

from __future__ import annotations

import numpy as np

from rlbook.core.world import parse_prompt

from . import named_by
from .loop_groups import (
    ADVANTAGE_MISTAKES,
    CHANCE_MISTAKES,
    check_advantages,
    check_below_half,
    check_chance_of_a_right_answer,
    check_pushes,
)
from .loop_terms import check_definitions, check_rollout_labels, fill_definitions, rollout_labels
from .registry import Exercise, Mistake, register


def advantages_from_rewards(rewards):
    """Exercise 1.2's reference solution: each reward minus the group's mean reward."""
    baseline = sum(rewards) / len(rewards)
    return [r - baseline for r in rewards]


def count_pushes(first, last):
    """Exercise 1.2's second part, reference: in each batch, how many answers
    get a positive, a negative and a zero advantage."""
    pushes = {}
    for name, batch in (("first", first), ("last", last)):
        advantages = [a for group in batch for a in advantages_from_rewards(group)]
        up = sum(a > 0 for a in advantages)
        down = sum(a < 0 for a in advantages)
        pushes[name] = (up, down, len(advantages) - up - down)
    return pushes


def chance_of_a_right_answer(p, n):
    """Exercise 1.3's reference solution: 1 minus the chance that all ``n`` samples are wrong."""
    return 1 - (1 - np.asarray(p, dtype=float)) ** n


def count_below_half(per_prompt, *sizes):
    """Exercise 1.3's second reference: per group size, the held-out sums where a group is right with chance < 1/2."""
    p = np.asarray(per_prompt, dtype=float)
    counts = {}
    for n in sizes:
        chance = 1 - (1 - p) ** n
        counts[n] = int((chance < 0.5).sum())
    return counts


def shown_record(seeds: tuple[int, ...]) -> dict:
    """The rollout chapter 1 prints for Exercise 1.1 with its facts on ``seeds``: the shown base policy's, on the
    workshop's uncertain sum."""
    from rlbook import book
    from rlbook.analysis.workshop import rollout_record
    from rlbook.runs import load

    facts = book.load("loop", seeds, check=False)
    policy = load("base", facts.shown).policy(step=1)
    task = parse_prompt(facts.unsure_prompt)
    assert task is not None  # the chapter's own prompt
    return rollout_record(policy, task, seed=facts.shown)


def _batches(seeds: tuple[int, ...]) -> tuple:
    """Exercise 1.2's second part as the page asks it with its facts on ``seeds``: the rewards of main's first and
    last batches."""
    from rlbook import book

    facts = book.load("loop", seeds, check=False)
    return facts.rewards_first, facts.rewards_last


def _below_half_inputs(seeds: tuple[int, ...]) -> tuple:
    """Exercise 1.3's second question as the page asks it with its facts on ``seeds``: the shown seed's held-out
    rates and both group sizes."""
    from rlbook import book

    facts = book.load("loop", seeds, check=False)
    return facts.by_seed[facts.shown].per_prompt, facts.group, facts.samples


def _right_and_wrong(first, last) -> dict:
    """Exercise 1.2's second part done as counts of right and wrong answers (those above and below the batch's
    mean reward), none left alone: a mistake the check names."""
    counts = {}
    for name, batch in (("first", first), ("last", last)):
        rewards = np.asarray(batch, dtype=float)
        above = int((rewards > rewards.mean()).sum())
        counts[name] = (above, rewards.size - above, 0)
    return counts


def _shares_of_pushes(first, last) -> dict:
    """Exercise 1.2's second part given as shares of each batch's answers instead of counts: a mistake the check
    names."""
    counts = count_pushes(first, last)
    return {name: tuple(c / sum(three) for c in three) for name, three in counts.items()}


def _below_half_by_rate(per_prompt, *sizes) -> dict:
    """Exercise 1.3's second question answered with the sums whose own rate is below one half, whatever the group
    size: a mistake the check names."""
    below = int((np.asarray(per_prompt, dtype=float) < 0.5).sum())
    return dict.fromkeys(sizes, below)


MISTAKES: dict[str, tuple[Mistake, ...]] = {
    "definitions": (
        Mistake(lambda: dict(fill_definitions(), **{"return": "d"}), "return: (d) defines the expected return"),
        Mistake(lambda: dict(fill_definitions(), rollout="e", trajectory="f"), "rollout: (e) defines the trajectory"),
        Mistake(lambda: dict(fill_definitions(), reward="g"), "reward: (g) defines the advantage"),
    ),
    "rollout-labels": (
        Mistake(
            lambda record: dict(rollout_labels(record), state=record["prompt"], action=record["completion"][0]),
            "you counted from 1",
        ),
        Mistake(
            lambda record: dict(rollout_labels(record), state=record["prompt"] + record["completion"][:2]),
            "already contains the action",
        ),
        Mistake(lambda record: dict(rollout_labels(record), trajectory=record["completion"]), "the actions alone"),
        Mistake(lambda record: dict(rollout_labels(record), rewards=record["reward"]), "one reward per action"),
    ),
    "advantages": tuple(
        Mistake(lambda rewards, slip=slip: slip(np.asarray(rewards, dtype=float)).tolist(), named_by(hint))
        for slip, hint in ADVANTAGE_MISTAKES
    ),
    "advantages-on-a-batch": (
        Mistake(_right_and_wrong, "those are the right and the wrong answers"),
        Mistake(_shares_of_pushes, "those are shares"),
        Mistake(lambda first, last: count_pushes(last, first), "the other batch's counts"),
    ),
    "chance-of-a-right-answer": tuple(Mistake(formula, named_by(hint)) for formula, hint in CHANCE_MISTAKES),
    "below-half": (
        Mistake(
            lambda per_prompt, *sizes: {n: int((chance_of_a_right_answer(per_prompt, n) > 0.5).sum()) for n in sizes},
            "counting the sums whose chance is above one half",
        ),
        Mistake(_below_half_by_rate, "counting the sums whose own rate p is below one half"),
    ),
}
"""Chapter 1's named mistakes, by exercise: each a plausible wrong answer and the words its checker names it with
(the formulas of Exercises 1.2 and 1.3 come from their checkers' tables in :mod:`.loop_groups`)."""

for _exercise in (
    Exercise(
        "definitions",
        "loop",
        check_definitions,
        fill_definitions,
        answer="value",
        answer_name="definitions",
        mistakes=MISTAKES["definitions"],
    ),
    Exercise(
        "rollout-labels",
        "loop",
        check_rollout_labels,
        rollout_labels,
        answer="value",
        inputs=lambda seeds: (shown_record(seeds),),
        answer_name="labels",
        call="record",
        mistakes=MISTAKES["rollout-labels"],
    ),
    Exercise("advantages", "loop", check_advantages, advantages_from_rewards, mistakes=MISTAKES["advantages"]),
    Exercise(
        "advantages-on-a-batch",
        "loop",
        check_pushes,
        count_pushes,
        answer="value",
        inputs=_batches,
        answer_name="pushes",
        call="F.rewards_first, F.rewards_last",
        mistakes=MISTAKES["advantages-on-a-batch"],
    ),
    Exercise(
        "chance-of-a-right-answer",
        "loop",
        check_chance_of_a_right_answer,
        chance_of_a_right_answer,
        mistakes=MISTAKES["chance-of-a-right-answer"],
    ),
    Exercise(
        "below-half",
        "loop",
        check_below_half,
        count_below_half,
        answer="value",
        inputs=_below_half_inputs,
        answer_name="below_half",
        call="S.per_prompt, F.group, F.samples",
        mistakes=MISTAKES["below-half"],
    ),
):
    register(_exercise)
