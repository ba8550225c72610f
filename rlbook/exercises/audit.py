"""Every exercise on every audited seed: its reference passes and its named mistakes are named.

A checker whose expected values come from the runs must be right whatever
the runs did. The audit of the book's claims (``rlbook claims --seeds 0-9
--draws pinned,native``) therefore also builds each exercise's inputs as its
page would have them on each audited seed alone (its chapter's facts
computed on that one seed, which the page then follows), and on each one
hands the checker the reference solution, which must pass, and every named
:class:`~rlbook.exercises.registry.Mistake`, which must be refused with its
words. ``ROBUSTNESS.md`` reports how often each held.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field

from rlbook.book import check
from rlbook.book._available import available
from rlbook.exercises.registry import Exercise, all_exercises

MODULE = "rlbook.exercises.audit"


@dataclass
class ExerciseTally:
    """One exercise on one draw: the seeds where its reference passed, and where each mistake was named.

    ``named_on`` maps a mistake's words to the seeds where the checker refused
    it with them; ``errors`` maps a seed to why its inputs could not be built.
    """

    name: str
    chapter: str
    seeds: list[int]
    passed_on: list[int] = field(default_factory=list)
    named_on: dict[str, list[int]] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)

    @property
    def rate(self) -> str:
        """ "10/10" when the reference and every mistake held on all ten seeds; the worst count otherwise."""
        held = [set(self.passed_on), *(set(on) for on in self.named_on.values())]
        return f"{min(len(h) for h in held)}/{len(self.seeds)}"

    @property
    def everywhere(self) -> bool:
        """Whether the reference passed and every mistake was named on every seed."""
        return self.rate == f"{len(self.seeds)}/{len(self.seeds)}"


def judge(exercise: Exercise, seed: int) -> tuple[bool, dict[str, bool]]:
    """Whether the reference passes on ``seed``, and for each mistake whether it is refused with its words."""
    inputs = exercise.inputs((seed,))
    reference = exercise.answer_with(exercise.reference, *inputs)
    named = {}
    for mistake in exercise.mistakes:
        result = exercise.answer_with(mistake.wrong, *inputs)
        named[mistake.says] = not result.passed and mistake.says in result.message
    return reference.passed, named


def audit_exercises(
    seeds: tuple[int, ...], topics: Sequence[str] = (), out: Callable[[str], None] = print
) -> list[ExerciseTally]:
    """Judge every exercise (:func:`judge`) of chapters ``topics`` (default: all) on each of ``seeds``, on the runs
    of the audit's cache (:func:`rlbook.book.check.in_audit_cache`)."""
    with check.in_audit_cache():
        return _audit_exercises(seeds, topics, out)


def _audit_exercises(seeds: tuple[int, ...], topics: Sequence[str], out: Callable[[str], None]) -> list[ExerciseTally]:
    from rlbook.book.prefetch import prefetch_book

    exercises = [e for e in all_exercises().values() if available(e.chapter) and (not topics or e.chapter in topics)]
    topics = sorted({e.chapter for e in exercises})
    for seed in seeds:
        prefetch_book(topics, out=out, seeds=(seed,), keep_going=True)
    tallies = []
    for exercise in exercises:
        tally = ExerciseTally(exercise.name, exercise.chapter, list(seeds))
        tally.named_on = {m.says: [] for m in exercise.mistakes}
        for seed in seeds:
            try:
                with contextlib.redirect_stdout(io.StringIO()):  # each check prints its verdict
                    passed, named = judge(exercise, seed)
            except Exception as err:  # noqa: BLE001 - an exercise that cannot be built on a seed fails there
                tally.errors[str(seed)] = f"{type(err).__name__}: {err}"
                continue
            if passed:
                tally.passed_on.append(seed)
            for says, ok in named.items():
                if ok:
                    tally.named_on[says].append(seed)
        out(f"exercise {exercise.name}: {tally.rate}")
        tallies.append(tally)
    return tallies


def audit_draws(
    seeds: tuple[int, ...], draws: Sequence[str], topics: Sequence[str] = (), out: Callable[[str], None] = print
) -> dict[str, list[ExerciseTally]]:
    """:func:`audit_exercises` once per numerical draw (:func:`rlbook.book.check.per_draw`)."""
    rows = check.per_draw(MODULE, seeds, draws, list(topics), out)
    return {draw: [ExerciseTally(**row) for row in found] for draw, found in rows.items()}


def _failures(tally: ExerciseTally) -> str:
    missed = [str(s) for s in tally.seeds if s not in tally.passed_on]
    parts = [f"reference failed on seed(s) {', '.join(missed)}"] if missed else []
    parts += [
        f"“{says}” missed on seed(s) {', '.join(str(s) for s in tally.seeds if s not in on)}"
        for says, on in tally.named_on.items()
        if len(on) < len(tally.seeds)
    ]
    return "; ".join(parts)


def report(results: dict[str, list[ExerciseTally]]) -> str:
    """The Markdown section of ``ROBUSTNESS.md`` on the exercises: :func:`report_data` of :func:`audit_data`."""
    return report_data(audit_data(results), list(results))


def report_data(rows: list[dict], draws: list[str]) -> str:
    """The Markdown section of ``ROBUSTNESS.md`` on the exercises from the audit's data (:func:`audit_data`): one row
    per exercise, its rate on every draw and where it failed."""
    failing = [row["name"] for row in rows if not row["everywhere"]]
    mistakes = sum(row["mistakes"] for row in rows)
    lines = [
        "## The exercises on every audited seed",
        "",
        (
            f"{len(rows)} exercises and {mistakes} named mistakes, each tried with its page's inputs as they "
            "are on each audited seed alone. A rate counts the seeds where the reference solution passed its "
            "check and every named mistake was refused with its words. "
            + (f"{len(failing)} exercise(s) failed somewhere: {', '.join(failing)}." if failing else "All held.")
        ),
        "",
        "| exercise | chapter | mistakes | " + " | ".join(draws) + " | where it failed |",
        "|---|---|---|" + "---|" * len(draws) + "---|",
    ]
    for row in rows:
        rates = " | ".join(row["rates"][draw] for draw in draws)
        lines.append(
            f"| `{row['name']}` | {row['chapter']} | {row['mistakes']} | {rates} | {row.get('failed') or 'nowhere'} |"
        )
    return "\n".join(lines) + "\n"


def audit_data(results: dict[str, list[ExerciseTally]]) -> list[dict]:
    """The exercises' audit as plain data, for the ``exercises`` entry of ``rlbook/book/robustness.json``."""
    rows = list(zip(*results.values(), strict=True))
    return [
        {
            "name": row[0].name,
            "chapter": row[0].chapter,
            "mistakes": len(row[0].named_on),
            "rates": {draw: t.rate for draw, t in zip(results, row, strict=True)},
            "everywhere": all(t.everywhere for t in row),
            "failed": "; ".join(
                f"{draw}: {_failures(t)}" for draw, t in zip(results, row, strict=True) if _failures(t)
            ),
        }
        for row in rows
    ]


def main(argv: list[str] | None = None) -> int:
    """``python -m rlbook.exercises.audit --seeds 0-9 [chapters]``: one draw's exercise audit as JSON on the last
    line."""
    import argparse

    parser = argparse.ArgumentParser(prog=f"python -m {MODULE}")
    parser.add_argument("--seeds", required=True, type=check.parse_seeds)
    parser.add_argument("chapters", nargs="*")
    args = parser.parse_args(argv)
    tallies = audit_exercises(args.seeds, args.chapters, out=lambda line: print(line, file=sys.stderr, flush=True))
    print(json.dumps([asdict(t) for t in tallies]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
