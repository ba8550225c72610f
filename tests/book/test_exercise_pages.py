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


def test_exercise_8_4_names_what_its_reference_uses_before_the_solution():
    """A reader can write the retained-capability test from the question alone: it names the sampler, how to call
    it greedily with a budget, what it returns, and where the sums are."""
    text = (ROOT / "chapters/08-checkpoints-evaluation-record.qmd").read_text(encoding="utf-8")
    question = text.split("### Exercise 8.4")[1].split("## Solution")[0]
    source = all_exercises()["retained-test"].source()
    for name in ("sample", "BUDGET", "split", ".completions()", ".operands", ".answer"):
        assert name in source, f"the reference of Exercise 8.4 no longer uses {name}: update this test"
    for named in (
        "`sample` from `rlbook.core.sampling`",
        "`sample(policy, prompts, budget=BUDGET, greedy=True)`",
        "`BUDGET`, from `rlbook.core.world`",
        "`.completions()`",
        '`split("all")` from `rlbook.core.world`',
        "`.operands`",
        "`.answer`",
    ):
        assert named in question, f"Exercise 8.4's question does not say {named}"
