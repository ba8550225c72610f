"""Sentences whose words follow the runs: the page holds every wording, the facts choose which one applies.

A chapter cannot know before its runs are trained how some sentences must
read: did the loophole take over on every seed, or only on some? Such a
sentence lives in its page, in every form it can take, and the chapter's
facts module only decides which form this build's runs call for. It
computes a :func:`choice`: the case that happened, every case that could
have, and the values the wordings fill in::

    choice("some", CASES, taken="seeds 0 and 2", others="seed 1")

and the page words each case, with ``{name}`` where a value goes::

    `{python} F.say("takeover",
        every="The loophole took over on every seed.",
        some="The loophole took over on {taken}, not on {others}.")`

:func:`say` insists that the page words exactly the cases the choice
declares, whichever of them happened, so a case that is rare on this
machine still has its words on every build; and that the chosen wording
names only values the choice holds. A writer therefore edits a chapter's
sentences in its ``.qmd`` alone, and the facts module's selector is tested
on every outcome. Used by every chapter's facts (``F.say``).
"""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence
from typing import Any


class Words(str):
    """Markdown a page's inline expression writes as it is (Quarto reads ``_repr_markdown_``)."""

    def _repr_markdown_(self) -> str:
        return str(self)


class WordingError(ValueError):
    """A page's wordings that do not fit the facts' choice: a case missing or extra, or a value it lacks."""


def choice(case: str, cases: Sequence[str], **values: Any) -> dict[str, Any]:
    """The facts' side of a sentence: which of ``cases`` happened, and the ``values`` its wordings may print.

    ValueError when ``case`` is not one of ``cases`` (a selector that
    returns an outcome its page has no words for).
    """
    if case not in cases:
        raise ValueError(f"the case {case!r} is not one of the declared cases {list(cases)}")
    if len(set(cases)) != len(cases):
        raise ValueError(f"the cases {list(cases)} name one case twice")
    return {"case": case, "cases": list(cases), "values": dict(values)}


def fields(wording: str) -> set[str]:
    """The names of the values ``wording`` prints (its ``{name}`` fields)."""
    return {name for _, name, _, _ in string.Formatter().parse(wording) if name}


def say(name: str, made: Mapping[str, Any], wordings: Mapping[str, str]) -> Words:
    """The sentence of choice ``made`` (named ``name`` in the facts) in the page's ``wordings``, values filled in.

    Raises :class:`WordingError` when the wordings' cases differ from the
    choice's declared cases, or the chosen wording prints a value the choice
    does not hold.
    """
    declared, given = list(made["cases"]), set(wordings)
    if given != set(declared):
        missing, extra = [c for c in declared if c not in given], sorted(given - set(declared))
        raise WordingError(
            f"F.say({name!r}) words the cases {sorted(given)}; the facts declare {declared}"
            + (f" (missing: {', '.join(missing)})" if missing else "")
            + (f" (no such case: {', '.join(extra)})" if extra else "")
        )
    wording, values = wordings[made["case"]], made["values"]
    unknown = sorted(fields(wording) - set(values))
    if unknown:
        raise WordingError(
            f"F.say({name!r}), case {made['case']!r}, prints {', '.join(unknown)}; "
            f"the choice holds {', '.join(sorted(values)) or 'no values'}"
        )
    return Words(wording.format(**values))
