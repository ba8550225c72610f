"""The book's pages and the exercise registry agree: each solution box names a registered exercise, and
every registered exercise has its solution box on the page of its chapter."""

from __future__ import annotations

import re
from pathlib import Path

from rlbook import book
from rlbook.exercises.registry import all_exercises

ROOT = Path(__file__).resolve().parents[2]
SOLUTION = re.compile(r"\bsolution\(\"([\w-]+)\"")


def test_solution_boxes_and_registry_agree():
    exercises = all_exercises()
    shown: dict[str, str] = {}
    for page in sorted((ROOT / "chapters").glob("*.qmd")):
        for name in SOLUTION.findall(page.read_text(encoding="utf-8")):
            assert name in exercises, f"{page.name} shows the solution of {name!r}, which is not registered"
            shown[name] = f"chapters/{page.name}"
    for name, exercise in exercises.items():
        assert name in shown, f"exercise {name!r} is registered but no page shows its solution"
        assert shown[name] == book.chapter(exercise.chapter).PAGE, (
            f"exercise {name!r} belongs to {exercise.chapter!r} but its solution is on {shown[name]}"
        )
