"""Seeds grouped by the way a measure went, as a choice that a page words case by case (chapters 2, 6 and 7).

"Rose on seeds 0 and 2 and fell on seed 1": which groups such a sentence
names follows the runs, so every combination of groups that hold a seed is
a case of its choice (:func:`rlbook.book.wording.choice`), named by those
groups in their order, joined by ``_`` (``"rose_fell"``), and each named
group's seeds are a value of the group's name (``{rose}``, ``{fell}``), in
words (:func:`rlbook.book.phrasing.seeds`). A group with no seed is never
named, so no wording of a case can offer an empty group as evidence.
Private to the facts modules that use it (:func:`rlbook.book.topics` skips
modules whose name starts with an underscore).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from rlbook.book import phrasing
from rlbook.book.wording import choice


def cases(groups: Sequence[str]) -> tuple[str, ...]:
    """Every case of a choice over ``groups``: each non-empty selection of them, in their order, joined by ``_``.

    ``cases(("rose", "fell"))`` is ``("rose", "fell", "rose_fell")``.
    """
    return tuple("_".join(chosen) for n in range(1, len(groups) + 1) for chosen in itertools.combinations(groups, n))


def grouped(
    groups: Mapping[str, Sequence[int]], of: Sequence[int], declared: Sequence[str] = (), **values: Any
) -> dict[str, Any]:
    """The choice of a sentence that names the seeds of each of ``groups`` that holds one, with ``values`` besides.

    ``groups`` maps each group's name to its seeds among ``of``, in the order
    the sentence names them. ``declared`` gives the choice's cases where its
    sentence has more than :func:`cases` of the groups. ValueError when no
    group holds a seed.
    """
    named = [name for name, where in groups.items() if where]
    if not named:
        raise ValueError(f"no seed in any of the groups {list(groups)}: a sentence about them has nothing to name")
    seeds = {name: phrasing.seeds(groups[name], of) for name in named}
    return choice("_".join(named), declared or cases(list(groups)), **seeds, **values)


def sides(
    values: Sequence[float], references: Sequence[float], of: Sequence[int], names: Sequence[str]
) -> dict[str, list[int]]:
    """The seeds ``of`` by where ``values`` lies against ``references``, seed by seed, as :func:`grouped` takes them.

    ``names`` are the groups of a larger value, a smaller one and, when a
    third is given, an equal one; with two names an equal value goes with
    the second (as :func:`rlbook.book.phrasing.by_side` groups them).
    ValueError unless there is one value and one reference per seed.
    """
    if not len(values) == len(references) == len(of):
        raise ValueError(f"one value per seed: {len(values)} values and {len(references)} references, {len(of)} seeds")
    if len(names) not in (2, 3):
        raise ValueError(f"a larger, a smaller and at most one equal group, not {list(names)}")
    groups: dict[str, list[int]] = {name: [] for name in names}
    for seed, value, reference in zip(of, values, references):
        side = 0 if value > reference else 2 if value == reference and len(names) == 3 else 1
        groups[names[side]].append(seed)
    return groups
