"""A chapter's claims: laws the book teaches and findings of this build's runs, each tied to its sentence.

A facts module (:mod:`rlbook.book`) lists its claims in ``CLAIMS``, each a
check over the chapter's facts with a ``kind``:

- a **law** is a lesson that must hold on any machine: an identity, a
  property of the code, or an outcome of training that the audit
  (``rlbook claims --seeds 0-9``, ``ROBUSTNESS.md``) found on every seed of
  two numerical draws. Its sentence in the page ends with
  ```` `{python} F.law("name")` ````, which prints nothing while the law
  holds and a visible notice with the figures when it does not; a strict
  build (``make test``, CI, ``rlbook build --strict``) fails instead;
- a **finding** is what this build's runs did. Its sentence carries
  ```` `{python} F.seeds("name")` ```` (the seeds it held on, in words: "on
  every seed", "on seeds 0 and 2, not on seed 1") or
  ```` `{python} F.finding("name")` ```` (a sentence worded from the facts,
  which prints nothing), and it never stops a build.

The book's lint (:mod:`rlbook.publish.lint`) checks that every claim is
marked exactly once in its page and every mark names a claim.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from rlbook.book import phrasing
from rlbook.book.facts import Facts
from rlbook.book.wording import Words

Kind = Literal["law", "finding"]
KINDS: tuple[Kind, ...] = ("law", "finding")


@dataclass(frozen=True)
class Every:
    """A check that ``key(F, seed)`` holds on every seed of the facts, which can also say where it held."""

    key: Callable[[Facts, int], Any]

    def __call__(self, facts: Facts) -> bool:
        return all(self.on(facts).values())

    def on(self, facts: Facts) -> dict[int, bool]:
        """Seed -> whether the check held there; a seed where it raised counts as not holding."""
        out = {}
        for seed in facts.seeds:
            try:
                out[seed] = bool(self.key(facts, seed))
            except Exception:  # noqa: BLE001 - a check that cannot be evaluated does not hold
                out[seed] = False
        return out


def every(key: Callable[[Any], Any]) -> Every:
    """The per-seed check ``key(F.by_seed[seed])`` on every seed (the common form of a chapter's claims)."""
    return Every(lambda facts, seed: key(facts.by_seed[seed]))


def every_seed(key: Callable[[Facts, int], Any]) -> Every:
    """The per-seed check ``key(F, seed)``, for a check that needs more of the facts than one seed's."""
    return Every(key)


@dataclass(frozen=True)
class Claim:
    """One claim: a short ``name``, what it checks (``says``), the check, what to show if it fails, and its kind.

    ``holds(F)`` is true when the chapter's facts ``F`` bear the claim out;
    ``shows(F)`` gives the figures a reader of a failure needs, in one line.
    ``kind`` is ``"law"`` or ``"finding"`` (this module's docstring).
    """

    name: str
    says: str
    holds: Callable[[Facts], Any]
    shows: Callable[[Facts], Any] | None = None
    kind: Kind = field(kw_only=True)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"claim {self.name!r}: kind must be 'law' or 'finding', not {self.kind!r}")

    def failure(self, facts: Facts) -> str | None:
        """None when the claim holds on ``facts``; otherwise one line saying what failed and the figures seen."""
        try:
            if self.holds(facts):
                return None
            seen = "" if self.shows is None else f"; saw {self.shows(facts)}"
        except Exception as err:  # noqa: BLE001 - a claim that cannot be evaluated is a broken claim
            seen = f"; checking it raised {type(err).__name__}: {err}"
        return f"{self.kind} {self.name!r} does not hold: {self.says}{seen}"

    def by_seed(self, facts: Facts) -> dict[int, bool] | None:
        """Seed -> whether the claim held there, for a per-seed claim (:func:`every`); None for a whole claim."""
        return self.holds.on(facts) if isinstance(self.holds, Every) else None


class ClaimError(AssertionError):
    """Laws of a chapter that its facts do not bear out: the chapter, then one line per law."""


@dataclass(frozen=True)
class Verdict:
    """What one claim came to on a build's facts: its kind, the failure line (None when it held), the seeds."""

    kind: Kind
    failure: str | None
    held_on: tuple[int, ...] | None
    seeds: tuple[int, ...]


NOTICE_CLASS = "law-notice"
"""The class of the span that marks a law that did not hold (styled by the site's stylesheets)."""


def notice(name: str, failure: str) -> Words:
    """The visible notice a page shows after law ``name``, which did not hold on this machine's runs."""
    figures = failure.split("; saw ", 1)[1] if "; saw " in failure else failure
    text = f"On this machine's runs this did not hold (saw {figures}); see the build's summary."
    escaped = text.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]").replace("*", "\\*")
    return Words(f' [{escaped}]{{.{NOTICE_CLASS} law="{name}"}}')


class Checked(Facts):
    """A chapter's facts with its claims' verdicts: ``F.law``, ``F.seeds`` and ``F.finding`` mark sentences."""

    __slots__ = ("_verdicts",)

    def __init__(self, data: Mapping[Any, Any], verdicts: Mapping[str, Verdict], path: str = "F") -> None:
        super().__init__(data, path)
        object.__setattr__(self, "_verdicts", dict(verdicts))

    def _verdict(self, name: str, kind: Kind) -> Verdict:
        verdict = self._verdicts.get(name)
        if verdict is None:
            raise KeyError(f"no claim named {name!r}; this chapter's claims are: {', '.join(sorted(self._verdicts))}")
        if verdict.kind != kind:
            raise ValueError(f"claim {name!r} is a {verdict.kind}, not a {kind}: mark it with F.{verdict.kind}(...)")
        return verdict

    def law(self, name: str) -> Words:
        """Nothing when law ``name`` holds; the notice with its figures when it does not."""
        verdict = self._verdict(name, "law")
        return Words("") if verdict.failure is None else notice(name, verdict.failure)

    def finding(self, name: str) -> Words:
        """Nothing: marks the sentence that finding ``name`` words from the facts."""
        self._verdict(name, "finding")
        return Words("")

    def seeds(self, name: str) -> Words:
        """Where per-seed finding ``name`` held, in words: "on every seed", "on seeds 0 and 2, not on seed 1"."""
        verdict = self._verdict(name, "finding")
        if verdict.held_on is None:
            raise ValueError(f"finding {name!r} is not checked seed by seed: word its sentence with F.finding")
        return Words(held_phrase(verdict.held_on, verdict.seeds))

    def verdicts(self) -> dict[str, Verdict]:
        """Claim name -> :class:`Verdict`, for the build's summary."""
        return dict(self._verdicts)

    def __reduce__(self):
        return (Checked, (self._data, self._verdicts, self._path))


def held_phrase(held_on: Sequence[int], of: Sequence[int]) -> str:
    """ "on every seed", "on seeds 0 and 2, not on seed 1", or "on none of the three seeds"."""
    missed = [s for s in of if s not in held_on]
    if not held_on:
        return f"on {phrasing.seeds([], of)}"
    if not missed:
        return f"on {phrasing.seeds(of, of)}"
    return f"on {phrasing.seeds(held_on, of)}, not on {phrasing.seeds(missed, of)}"


def judge(topic: str, claims: Sequence[Claim], facts: Facts) -> dict[str, Verdict]:
    """Every claim of ``claims`` judged on ``facts``; ValueError when a name is declared twice."""
    names = [c.name for c in claims]
    if len(set(names)) < len(names):
        raise ValueError(
            f"chapter {topic!r} declares a claim name twice: {sorted(n for n in names if names.count(n) > 1)}"
        )
    seeds = tuple(facts.seeds) if "seeds" in facts else ()
    out = {}
    for claim in claims:
        per_seed = claim.by_seed(facts)
        held_on = None if per_seed is None else tuple(s for s, ok in per_seed.items() if ok)
        out[claim.name] = Verdict(claim.kind, claim.failure(facts), held_on, seeds)
    return out


def failed_laws(verdicts: Mapping[str, Verdict]) -> list[str]:
    """The failure lines of the laws among ``verdicts`` that did not hold."""
    return [v.failure for v in verdicts.values() if v.kind == "law" and v.failure is not None]


def check(topic: str, page: str, claims: Sequence[Claim], facts: Facts) -> Checked:
    """``facts`` with its verdicts; with ``RLBOOK_STRICT`` set, raise :class:`ClaimError` naming every failed law.

    Without it (a reader's build), a failed law is printed once on standard
    error and shown in the page at its sentence; the build lists it in its
    summary. Findings never fail.
    """
    import os
    import sys

    verdicts = judge(topic, claims, facts)
    failures = failed_laws(verdicts)
    if failures:
        message = f"chapter {topic!r} ({page}):\n" + "\n".join(f"  {line}" for line in failures)
        if os.environ.get(STRICT, "") not in ("", "0"):
            raise ClaimError(message)
        print(f"{NOTICE_PREFIX} {message}", file=sys.stderr)
    return Checked(facts, verdicts, "F")


STRICT = "RLBOOK_STRICT"
"""Set (to anything but 0) by ``rlbook build --strict``, ``make test`` and CI: a law that fails stops the build."""

NOTICE_PREFIX = "law did not hold:"
"""How a failed law starts its line on standard error, which the build collects for its summary."""
