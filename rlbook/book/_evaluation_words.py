"""Chapter 8's outcome-dependent wording, for its facts module (:mod:`rlbook.book.evaluation`).

Each function turns an outcome of the runs into a sentence that reads right
whatever the outcome, and never offers a degenerate quantity (a zero spread,
a list of one repeated item) as evidence; ``tests/unit/book/test_evaluation.py``
tries each on every outcome. Private to the chapter: :func:`rlbook.book.topics`
skips modules whose name starts with an underscore.
"""

from __future__ import annotations

from collections import Counter

from rlbook.analysis.selection import RULES
from rlbook.book import phrasing
from rlbook.book.facts import Num


def apart_sentence(picks: int, spread: Num, narrowest: Num) -> str:
    """Whether the test prompts could tell main's picks apart, said without offering a zero spread as evidence."""
    if picks == 1:
        return (
            f"On main the choice of rule made no difference here, and with intervals {narrowest} wide or more the "
            "test prompts could not have shown one."
        )
    return (
        f"Their test accuracies lie within {spread} of each other, while the narrowest of their intervals is "
        f"{narrowest} wide: the test prompts cannot tell these rules apart on main, and that is itself worth "
        "reporting."
    )


def pick_sentence(by_step: dict[int, list[str]]) -> str:
    """Which rule picks which step, in one sentence: "The training reward rule picks step 100, ..."."""
    said = []
    for step, rules in by_step.items():
        if len(rules) == 1:
            said.append(f"the {rules[0]} rule picks step {step}")
        elif len(rules) == len(RULES):
            said.append(f"all {phrasing.number_word(len(rules))} rules pick step {step}")
        else:
            said.append(f"the {phrasing.listing(rules)} rules both pick step {step}")
    text = phrasing.listing(said, "while") if len(said) == 2 else phrasing.listing(said)
    return text[0].upper() + text[1:]


def stuck_sentence(names: list[str]) -> str:
    """Which held-out sums no policy answered right, in one sentence (the claim guarantees at least one)."""
    if not names:
        return "every held-out sum got a right answer from one policy or the other."
    if len(names) == 1:
        return f"one sum, {names[0]}, got no right answer from either policy."
    return (
        f"{phrasing.number_word(len(names))} sums ({phrasing.listing(names)}) got no right answer from either policy."
    )


def habit_sentence(habits: dict[str, tuple[str, str]]) -> str:
    """What the never-right sums share: the commonest wrong answer kept from before RL to after it.

    ``habits`` maps each sum to its commonest answer (before RL, after RL).
    The sentence names the largest group of sums that kept one same answer.
    """
    kept = Counter(after for before, after in habits.values() if before == after)
    if not kept:
        return "Their commonest answers changed during RL, but none of them became the right one."
    answer, _ = kept.most_common(1)[0]
    sums = [name for name, (before, after) in habits.items() if before == after == answer]
    return (
        f"To {phrasing.listing(sums)} the policy's commonest answer is {answer}, before RL and after it: "
        "a wrong habit that training did not touch."
    )


def picks_finding(by_seed: dict, seeds: tuple[int, ...]) -> str:
    """On which seeds the validation rule picks a different checkpoint of main from the fixed budget."""
    differ = [s for s in seeds if by_seed[s]["selected"] != by_seed[s]["last"]]
    if not differ:
        return (
            f"On {phrasing.seeds(seeds, seeds)} the validation rule picks the last checkpoint, the fixed budget's pick."
        )
    same = [s for s in seeds if s not in differ]
    tail = f"; on {phrasing.seeds(same, seeds)} it picks the last one" if same else ""
    return f"The validation rule picks an earlier checkpoint than the fixed budget on {phrasing.seeds(differ, seeds)}{tail}."


def constraint_finding(by_seed: dict, seeds: tuple[int, ...]) -> str:
    """On which seeds keeping the capability cost test accuracy (the earlier pick scored lower on the test prompts)."""
    cost = [s for s in seeds if by_seed[s]["retained"]["constrained_test"] < by_seed[s]["retained"]["selected_test"]]
    if len(cost) == len(seeds):
        return f"On {phrasing.seeds(seeds, seeds)} the constraint costs test accuracy."
    free = [s for s in seeds if s not in cost]
    said = f"On {phrasing.seeds(cost, seeds)} the constraint costs test accuracy; on " if cost else "On "
    return said + f"{phrasing.seeds(free, seeds)} the earlier checkpoint does as well or better on the test prompts."


def carry_finding(by_seed: dict, seeds: tuple[int, ...]) -> str:
    """On which seeds ``main`` answered the carry slice worse than the no-carry slice before RL (chapter 8, slices).

    On this machine's draws carry sums started lower on every seed; on the
    README's plain draw they started higher on two of the three, so the
    page states the comparison seed by seed rather than as a rule.
    """
    carry = [by_seed[s]["slices"]["carry_start"] for s in seeds]
    plain = [by_seed[s]["slices"]["plain_start"] for s in seeds]
    return "Carry sums started " + phrasing.by_side(plain, carry, seeds, "lower", "higher", "level") + "."


def excess(values: list[float]) -> dict:
    """How much of each unmatched comparison's excess the unequal settings made, from the five comparisons' gains.

    ``values`` are the gains of :func:`rlbook.analysis.selection.comparison_rows`, in its order: matched at
    T = 1, best of k against one sample, matched at best of k, low temperature against T = 1, matched at the low
    temperature. The excess of an unmatched row over the first splits exactly in two: the unmatched row minus
    the matched one at the same setting (what the unequal settings made: ``attempts``, ``cooling``) and that
    matched gain minus the first (how RL's own gain differs at that setting: ``attempts_gain``,
    ``cooling_gain``). ``words`` says it in two sentences.
    """
    first, more, both_more, cooler, both_cooler = values
    parts = {
        "attempts": more - both_more,
        "attempts_gain": both_more - first,
        "cooling": cooler - both_cooler,
        "cooling_gain": both_cooler - first,
    }

    def differs(change: float, setting: str, reference: str) -> str:
        side = phrasing.direction(change, 0.0, 0.005, ("larger", "smaller", "the same"))
        if side == "the same":
            return f"the same {setting} as {reference}"
        return f"{abs(change):.2f} {side} {setting} than {reference}"

    def adds(change: float, verb: str) -> str:
        return f"{verb} {change:+.2f}" if abs(change) >= 0.005 else f"{verb} less than 0.005 either way"

    said = (
        f"With best of four, the extra attempts alone {adds(parts['attempts'], 'add')} (the unmatched row minus the "
        f"matched one at best of four), and RL's matched gain is "
        f"{differs(parts['attempts_gain'], 'with four attempts', 'with one')}. At temperature 0.5, the cooler "
        f"sampling alone {adds(parts['cooling'], 'adds')}, and RL's matched gain is "
        f"{differs(parts['cooling_gain'], 'at 0.5', 'at 1')}."
    )
    return {**{k: Num(v, "+.2f") for k, v in parts.items()}, "words": said}
