"""Every exercise of the book in one table, read from the pages themselves (the page "All the exercises").

An exercise is a heading ``Exercise N.k: task`` (the numbering
:mod:`rlbook.publish.reader` enforces); its checkers are the
``chN.check_...`` or ``exa.check_...`` calls in the cells that follow it,
before the next exercise. A "Try it" box inside a chapter (a callout titled
``Try it``, its fence carrying a ``{#id}`` to link to) is listed too when it
has checks: those in the cells after its heading, up to the next heading
outside a callout; its task is the title of the section it sits in. Nothing
is typed twice: renaming an exercise or its checker changes the table at the
next build.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

from rlbook.publish.config import book_pages
from rlbook.publish.qmd import split_qmd
from rlbook.publish.reader import headings

EXERCISE_HEADING = re.compile(r"^Exercise ([0-9A-Z]+\.\d+): (.+)$")
TRY_IT_HEADING = re.compile(r"^Try it$")
DIV_OPEN = re.compile(r"^\s*:{3,}\s*\{([^}]*)\}")
BOX_ID = re.compile(r"(?:^|\s)#([\w-]+)")
CHECKER_CALL = re.compile(r"\b((?:ch\d+|exa)\.check_\w+)\(")
LABEL = re.compile(r"\{#([\w-]+)")


@dataclass(frozen=True)
class Exercise:
    """One exercise: its number, its task (the heading), where it is and the functions that check it."""

    number: str  # "3.1"; for a Try it, its chapter's number ("3") or ""
    task: str
    page: str  # the .qmd file, relative to the book's root
    label: str
    checkers: tuple[str, ...]
    kind: str = "Exercise"  # or "Try it"

    @property
    def name(self) -> str:
        """How the table names it: "Exercise 3.1", or "Try it, chapter 3" for a Try it box."""
        if self.kind == "Exercise":
            return f"Exercise {self.number}"
        where = "" if not self.number else f", {'chapter' if self.number.isdigit() else 'appendix'} {self.number}"
        return f"{self.kind}{where}"


def page_exercises(source: str, text: str, chapter: str = "") -> list[Exercise]:
    """The exercises of one page, in order, with its Try it boxes that have checks (numbered by ``chapter``).

    An exercise heading without a ``{#label}``, or a checked Try it box whose
    callout has no ``{#id}``, raises a ValueError naming it.
    """
    blocks = split_qmd(text)
    lines = text.split("\n")
    found: list[tuple[int, Exercise]] = []  # each with its heading's line, its checkers still to read
    outside: list[int] = []  # the lines of the headings outside any callout
    section = ""
    for line, _, heading, in_div in headings(blocks):
        if not in_div:
            outside.append(line)
            section = heading
        match = EXERCISE_HEADING.match(heading)
        if match:
            label_match = LABEL.search(lines[line - 1])
            if label_match is None:
                raise ValueError(f"{source}:{line}: exercise heading {heading!r} has no {{#label}} to link to")
            found.append((line, Exercise(match.group(1), match.group(2), source, label_match.group(1), ())))
        elif in_div and TRY_IT_HEADING.match(heading):
            found.append((line, Exercise(chapter, section, source, _box_id(lines, line), (), kind="Try it")))
    exercises = []
    for i, (line, exercise) in enumerate(found):
        end = found[i + 1][0] if i + 1 < len(found) else len(lines) + 1
        if exercise.kind != "Exercise":  # a box's checks follow it within its section
            end = min([end, *(n for n in outside if n > line)])
        cells = [b.text for b in blocks if b.kind == "code" and line < b.line < end]
        calls = tuple(dict.fromkeys(m.group(1) for cell in cells for m in CHECKER_CALL.finditer(cell)))
        if exercise.kind != "Exercise" and not calls:
            continue
        if not exercise.label:
            raise ValueError(f"{source}:{line}: this Try it box has checks but no {{#id}} on its callout to link to")
        exercises.append(replace(exercise, checkers=calls))
    return exercises


def _box_id(lines: list[str], line: int) -> str:
    """The ``{#id}`` on the fence that opens the callout whose title is on ``line`` (1-based), or ""."""
    before = [text for text in lines[: line - 1] if text.strip()]
    opening = DIV_OPEN.match(before[-1]) if before else None
    ident = BOX_ID.search(opening.group(1)) if opening else None
    return ident.group(1) if ident else ""


def book_exercises(root: Path) -> list[Exercise]:
    """Every exercise of the book at ``root``, in reading order."""
    root = Path(root)
    return [
        exercise
        for page in book_pages(root)
        for exercise in page_exercises(page.source, (root / page.source).read_text(encoding="utf-8"), page.number or "")
    ]


def exercises_markdown(root: Path, here: str) -> str:
    """The exercises as a table with a link to each, relative to the page ``here`` (a .qmd path)."""
    rows = ["| exercise | task | checked by |", "|---|---|---|"]
    base = Path(here).parent
    for ex in book_exercises(root):
        link = Path(ex.page).relative_to(base) if Path(ex.page).is_relative_to(base) else Path(ex.page)
        names = [f"`rlbook.exercises.{c.replace('exa.', 'appendix.')}`" for c in ex.checkers]
        rows.append(f"| [{ex.name}]({link.as_posix()}#{ex.label}) | {ex.task} | {', '.join(names)} |")
    return "\n".join(rows)
