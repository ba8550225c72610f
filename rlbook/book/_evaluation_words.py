"""Chapter 8's outcome-dependent choices, for its facts module (:mod:`rlbook.book.evaluation`).

Each selector turns an outcome of the runs into a choice
(:func:`rlbook.book.wording.choice`): which of its declared cases happened
and the values its wordings print, worded case by case in the page,
chapters/08-checkpoints-evaluation-record.qmd, with ``say``. Each picks its
case whatever the outcome and never offers a degenerate quantity (a zero
spread, a list of one repeated item) as evidence;
``tests/unit/book/test_evaluation.py`` tries each on every case. Private to
the chapter: :func:`rlbook.book.topics` skips modules whose name starts with
an underscore.
"""

from __future__ import annotations

from collections import Counter

from rlbook.analysis.selection import RULES
from rlbook.book import phrasing
from rlbook.book.facts import Num
from rlbook.book.wording import choice

TOLD_APART = ("one_pick", "within")
"""The cases of :func:`told_apart`: every rule picks the same checkpoint of main, or the picks' test accuracies lie
within a spread."""


def told_apart(picks: int, spread: Num, narrowest: Num) -> dict:
    """Whether the test prompts could tell main's ``picks`` (distinct checkpoints) apart: the spread of their test
    accuracies and the narrowest of their intervals, never a zero spread where they all picked one checkpoint."""
    if picks == 1:
        return choice("one_pick", TOLD_APART, narrowest=narrowest)
    return choice("within", TOLD_APART, spread=spread, narrowest=narrowest)


PICKS = ("all", "pair_first", "pair_last", "each")
"""The cases of :func:`picks`: the three rules pick one step; two pick one step and the third another, the pair
named first or last (in the rules' order); or each picks a step of its own."""


def picks(by_step: dict[int, list[str]]) -> dict:
    """Which of the three rules (:data:`rlbook.analysis.selection.RULES`) picks which step of main (chapter 8).

    ``by_step`` maps each picked step to the rules that pick it, in the
    rules' order. ValueError when the rules are not three, each named once.
    """
    groups = list(by_step.items())
    named = [rule for _, rules in groups for rule in rules]
    if sorted(named) != sorted(RULES):
        raise ValueError(f"the picks name the rules {named}; the wording covers {list(RULES)}, each once")
    if len(groups) == 1:
        ((step, rules),) = groups
        return choice("all", PICKS, count=phrasing.number_word(len(rules)), step=step)
    if len(groups) == 2:
        pair, (rule_step, (rule,)) = sorted(groups, key=lambda g: -len(g[1]))
        case = "pair_first" if groups[0] == pair else "pair_last"
        return choice(case, PICKS, pair=phrasing.listing(pair[1]), pair_step=pair[0], rule=rule, rule_step=rule_step)
    (first_step, (first,)), (second_step, (second,)), (third_step, (third,)) = groups
    return choice(
        "each",
        PICKS,
        first=first,
        first_step=first_step,
        second=second,
        second_step=second_step,
        third=third,
        third_step=third_step,
    )


VALIDATION_PICK = ("start", "later")
"""The cases of :func:`validation_pick`: on ``exploit`` the validation rule keeps step 0, or a later checkpoint."""


def validation_pick(step: int) -> dict:
    """The checkpoint of ``exploit`` the validation rule keeps, which may be the policy RL started from (step 0)."""
    return choice("start" if step == 0 else "later", VALIDATION_PICK, step=step)


NEVER_RIGHT = ("none", "one", "several")
"""The cases of :func:`never_right`: how many held-out sums got no right answer from either policy."""


def never_right(names: list[str]) -> dict:
    """Which held-out sums no policy answered right: none, the one, or how many and which (the claim guarantees at
    least one)."""
    if not names:
        return choice("none", NEVER_RIGHT)
    if len(names) == 1:
        return choice("one", NEVER_RIGHT, sum=names[0])
    return choice("several", NEVER_RIGHT, count=phrasing.number_word(len(names)), sums=phrasing.listing(names))


HABIT = ("kept", "changed", "none")
"""The cases of :func:`habit`: some never-right sums kept one wrong answer through RL, or every such answer
changed, or no sum was never right."""


def habit(habits: dict[str, tuple[str, str]]) -> dict:
    """What the never-right sums share: the commonest wrong answer kept from before RL to after it.

    ``habits`` maps each sum to its commonest answer (before RL, after RL).
    The choice names the largest group of sums that kept one same answer.
    """
    if not habits:
        return choice("none", HABIT)
    kept = Counter(after for before, after in habits.values() if before == after)
    if not kept:
        return choice("changed", HABIT)
    answer, _ = kept.most_common(1)[0]
    sums = [name for name, (before, after) in habits.items() if before == after == answer]
    return choice("kept", HABIT, sums=phrasing.listing(sums), answer=answer)


PICKS_FINDING = ("last", "earlier", "some_earlier")
"""The cases of :func:`picks_finding`: the validation rule picks main's last checkpoint on every seed, an earlier
one on every seed, or an earlier one on some seeds and the last on the others."""


def picks_finding(by_seed: dict, seeds: tuple[int, ...]) -> dict:
    """On which seeds the validation rule picks a different checkpoint of main from the fixed budget."""
    differ = [s for s in seeds if by_seed[s]["selected"] != by_seed[s]["last"]]
    if not differ:
        return choice("last", PICKS_FINDING, last=phrasing.seeds(seeds, seeds))
    same = [s for s in seeds if s not in differ]
    if not same:
        return choice("earlier", PICKS_FINDING, earlier=phrasing.seeds(differ, seeds))
    return choice(
        "some_earlier", PICKS_FINDING, earlier=phrasing.seeds(differ, seeds), last=phrasing.seeds(same, seeds)
    )


CONSTRAINT = ("costs", "some_cost", "free")
"""The cases of :func:`constraint_finding`: keeping the capability cost test accuracy on every seed, on some, or
on none."""


def constraint_finding(by_seed: dict, seeds: tuple[int, ...]) -> dict:
    """On which seeds keeping the capability cost test accuracy (the earlier pick scored lower on the test prompts)."""
    cost = [s for s in seeds if by_seed[s]["retained"]["constrained_test"] < by_seed[s]["retained"]["selected_test"]]
    free = [s for s in seeds if s not in cost]
    if not free:
        return choice("costs", CONSTRAINT, cost=phrasing.seeds(cost, seeds))
    if not cost:
        return choice("free", CONSTRAINT, free=phrasing.seeds(free, seeds))
    return choice("some_cost", CONSTRAINT, cost=phrasing.seeds(cost, seeds), free=phrasing.seeds(free, seeds))


CARRY = ("lower", "higher", "level", "lower_higher", "lower_level", "higher_level", "lower_higher_level")
"""The cases of :func:`carry_finding`: which of lower, higher and level (against the no-carry slice) the carry
slice started on some seed, joined in that order."""


def carry_finding(by_seed: dict, seeds: tuple[int, ...]) -> dict:
    """On which seeds ``main`` answered the carry slice worse than the no-carry slice before RL (chapter 8, slices).

    On this machine's draws carry sums started lower on every seed; on the
    README's plain draw they started higher on two of the three, so the
    page states the comparison seed by seed rather than as a rule. Each
    side the choice names holds at least one seed.
    """
    carry = {s: by_seed[s]["slices"]["carry_start"] for s in seeds}
    plain = {s: by_seed[s]["slices"]["plain_start"] for s in seeds}
    sides = {
        "lower": [s for s in seeds if carry[s] < plain[s]],
        "higher": [s for s in seeds if carry[s] > plain[s]],
        "level": [s for s in seeds if carry[s] == plain[s]],
    }
    found = {side: phrasing.seeds(where, seeds) for side, where in sides.items() if where}
    return choice("_".join(found), CARRY, **found)


def excess(values: list[float], low: float, usual: float) -> dict:
    """How much of each unmatched comparison's excess the unequal settings made, from the five comparisons' gains.

    ``values`` are the gains of :func:`rlbook.analysis.selection.comparison_rows`, in its order: matched at
    T = 1, best of k against one sample, matched at best of k, low temperature against T = 1, matched at the low
    temperature. The excess of an unmatched row over the first splits exactly in two: the unmatched row minus
    the matched one at the same setting (what the unequal settings made: ``attempts``, ``cooling``) and that
    matched gain minus the first (how RL's own gain differs at that setting: ``attempts_gain``,
    ``cooling_gain``). Each part comes with its choice (:func:`alone`, :func:`matched`), which the page words:
    ``attempts_alone``, ``attempts_matched``, ``cooling_alone`` and ``cooling_matched``; the last names the
    ``low`` and the ``usual`` temperature the comparisons sampled at, for the page to print.
    """
    first, more, both_more, cooler, both_cooler = values
    parts = {
        "attempts": more - both_more,
        "attempts_gain": both_more - first,
        "cooling": cooler - both_cooler,
        "cooling_gain": both_cooler - first,
    }
    return {
        **{k: Num(v, "+.2f") for k, v in parts.items()},
        "attempts_alone": alone(parts["attempts"]),
        "attempts_matched": matched(parts["attempts_gain"]),
        "cooling_alone": alone(parts["cooling"]),
        "cooling_matched": matched(parts["cooling_gain"], low=f"{low:g}", usual=f"{usual:g}"),
    }


NEGLIGIBLE = 0.005
"""The smallest change in a gain (chapter 8, the matched comparisons) that :func:`alone` and :func:`matched` give as
a number: below it, a change rounds to 0.00 at the page's two decimals."""

ALONE = ("adds", "negligible")
"""The cases of :func:`alone`: the unequal setting alone adds a change worth printing, or less than
:data:`NEGLIGIBLE` either way."""


def alone(change: float) -> dict:
    """What an unequal setting alone adds to the gain (:func:`excess`): the change, or the bound it stays under."""
    if abs(change) >= NEGLIGIBLE:
        return choice("adds", ALONE, change=Num(change, "+.2f"))
    return choice("negligible", ALONE, below=Num(NEGLIGIBLE, ".3f"))


MATCHED = ("larger", "smaller", "same")
"""The cases of :func:`matched`: RL's matched gain at a setting is larger or smaller than at the first comparison's,
or the same within :data:`NEGLIGIBLE`."""


def matched(change: float, **setting: str) -> dict:
    """How RL's matched gain at a setting differs from the first comparison's (:func:`excess`): by how much and
    which way, never a difference of 0.00, with the values that name the ``setting`` in every case."""
    case = phrasing.direction(change, 0.0, NEGLIGIBLE, MATCHED)
    by = {} if case == "same" else {"by": Num(abs(change))}
    return choice(case, MATCHED, **by, **setting)
