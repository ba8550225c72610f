"""What moves when the process scorer changes its rule: step 2 judged against the true partial sum (ch2).

The book's scorer (:func:`rlbook.core.rewards.process_score`) judges step 2
against the rollout's *own* first sum. Chapter 2 asks what a different,
equally defensible rule would do to the same rollouts: judge every step
against the true partial sum (``a + b``, then ``a + b + c``), whatever the
rollout wrote before it. The two rules agree whenever the first sum is
right; they part on a wrong first sum, where one of them pays step 2 and the
other does not. Exercise 2.3 counts the rollouts that gain and lose.
"""

from __future__ import annotations

from rlbook.core import rewards as rw
from rlbook.core.world import parse_prompt

from .verdicts import Judged, judge


def true_sum_steps(prompt: str, completion: str) -> tuple[bool, ...]:
    """Each step of a multi-step rollout judged against the true partial sum, not the rollout's own previous one.

    The steps are read as the book's scorer reads them: from the text before
    the first end mark, split at commas, each a canonical number
    (:func:`rlbook.core.rewards.read_number`); a missing or unreadable step
    is invalid. A prompt that is not a task has no steps.
    """
    task = parse_prompt(prompt) if isinstance(completion, str) else None
    if task is None:
        return ()
    fields = completion.split(rw.EOT)[0].split(",")
    return tuple(i < len(fields) and rw.read_number(fields[i])[0] == str(want) for i, want in enumerate(task.steps))


def rule_change(judged: list[Judged]) -> dict[str, object]:
    """How the true-partial-sum rule would rescore judged rollouts: how many gain, how many lose, from which cells.

    ``gained``/``lost``: rollouts (repeats included) whose process score
    would rise or fall; ``gained_from``/``lost_from``: the same counts by
    the cell the rollout is in under the book's rule (:attr:`Judged.kind`).
    """
    moves: dict[str, dict[str, int]] = {"gained_from": {}, "lost_from": {}}
    for j in judged:
        steps = true_sum_steps(j.prompt, j.completion)
        new = sum(steps) / len(steps) if steps else 0.0
        if new != j.process:
            side = moves["gained_from" if new > j.process else "lost_from"]
            side[j.kind] = side.get(j.kind, 0) + 1
    return {"gained": sum(moves["gained_from"].values()), "lost": sum(moves["lost_from"].values()), **moves}


def rule_change_of(prompts: list[str], completions: list[str]) -> dict[str, object]:
    """:func:`rule_change` of rollouts given as text: both verdicts first (:func:`judge`), then the rescoring."""
    return rule_change(judge(list(prompts), list(completions)))
