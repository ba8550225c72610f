"""Every exercise of the book in one table, read from the pages themselves (the page "All the exercises").

An exercise is a heading ``Exercise N.k: task`` (the numbering
:mod:`rlbook.publish.reader` enforces); its checkers are the
``chN.check_...`` or ``exa.check_...`` calls in the cells that follow it,
before the next exercise. Nothing is typed twice: renaming an exercise or
its checker changes the table at the next build.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from rlbook.publish.config import book_pages
from rlbook.publish.qmd import split_qmd
from rlbook.publish.reader import headings

EXERCISE_HEADING = re.compile(r"^Exercise ([0-9A-Z]+\.\d+): (.+)$")
CHECKER_CALL = re.compile(r"\b((?:ch\d|exa)\.check_\w+)\(")
LABEL = re.compile(r"\{#([\w-]+)")


@dataclass(frozen=True)
class Exercise:
    """One exercise: its number, its task (the heading), where it is and the functions that check it."""

    number: str
    task: str
    page: str  # the .qmd file, relative to the book's root
    label: str
    checkers: tuple[str, ...]


def page_exercises(source: str, text: str) -> list[Exercise]:
    """The exercises of one page, in order; a heading without a ``{#label}`` raises a ValueError naming it."""
    blocks = split_qmd(text)
    lines = text.split("\n")
    found: list[tuple[int, str, str, str]] = []
    for line, _, heading, _ in headings(blocks):
        match = EXERCISE_HEADING.match(heading)
        if match:
            label_match = LABEL.search(lines[line - 1])
            if label_match is None:
                raise ValueError(f"{source}:{line}: exercise heading {heading!r} has no {{#label}} to link to")
            found.append((line, match.group(1), match.group(2), label_match.group(1)))
    exercises = []
    for i, (line, number, task, label) in enumerate(found):
        end = found[i + 1][0] if i + 1 < len(found) else len(lines) + 1
        cells = [b.text for b in blocks if b.kind == "code" and line < b.line < end]
        calls = [m.group(1) for cell in cells for m in CHECKER_CALL.finditer(cell)]
        exercises.append(Exercise(number, task, source, label, tuple(dict.fromkeys(calls))))
    return exercises


def book_exercises(root: Path) -> list[Exercise]:
    """Every exercise of the book at ``root``, in reading order."""
    root = Path(root)
    return [
        exercise
        for page in book_pages(root)
        for exercise in page_exercises(page.source, (root / page.source).read_text(encoding="utf-8"))
    ]


def exercises_markdown(root: Path, here: str) -> str:
    """The exercises as a table with a link to each, relative to the page ``here`` (a .qmd path)."""
    rows = ["| exercise | task | checked by |", "|---|---|---|"]
    base = Path(here).parent
    for ex in book_exercises(root):
        link = Path(ex.page).relative_to(base) if Path(ex.page).is_relative_to(base) else Path(ex.page)
        names = [f"`rlbook.exercises.{c.replace('exa.', 'appendix.')}`" for c in ex.checkers]
        rows.append(f"| [Exercise {ex.number}]({link.as_posix()}#{ex.label}) | {ex.task} | {', '.join(names)} |")
    return "\n".join(rows)
