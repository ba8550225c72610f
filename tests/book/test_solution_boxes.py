"""Every solution box runs where it stands: pasted into its answer cell on its page, it passes the check.

Each page that holds exercises is executed as the build executes it (code
cells in order, in a fresh kernel), except that each answer cell gets its
solution box's code (:meth:`rlbook.exercises.registry.Exercise.source`)
pasted in before its check, and the check's verdict must pass. The answer
cell must also hand the checker the name the box defines.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from rlbook import book
from rlbook.exercises.registry import Exercise, all_exercises
from rlbook.publish.execute import execute_notebook, qmd_to_notebook
from rlbook.publish.qmd import cell_options

ROOT = Path(__file__).resolve().parents[2]
EXERCISES = all_exercises()
PAGES = sorted({book.chapter(e.chapter).PAGE for e in EXERCISES.values()})


def check_call(code: str, exercise: Exercise) -> ast.Expr | None:
    """The top-level statement of ``code`` that calls ``exercise``'s checker, if any."""
    for node in ast.parse(code).body:
        call = node.value if isinstance(node, ast.Expr) else None
        if isinstance(call, ast.Call) and getattr(call.func, "attr", None) == exercise.check.__name__:
            return node
    return None


def pasted(code: str, statement: ast.Expr, exercise: Exercise) -> str:
    """The answer cell ``code`` with the box pasted in before its check, whose verdict must pass."""
    call = statement.value
    assert isinstance(call, ast.Call)
    answer = call.args[0]
    assert ast.unparse(answer) == exercise.answered_as, (
        f"{exercise.name}: the answer cell hands the checker {ast.unparse(answer)}, the box defines "
        f"{exercise.answered_as}"
    )
    lines = code.splitlines()
    before = "\n".join(lines[: statement.lineno - 1])
    return (
        f"{before}\n\n{exercise.source()}\n\n"
        f"_verdict = {ast.get_source_segment(code, call)}\n"
        f"assert _verdict.passed, {exercise.name!r} + ': ' + _verdict.message\n"
    )


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES)
def test_every_solution_box_passes_pasted_into_its_answer_cell(page):
    text = (ROOT / page).read_text(encoding="utf-8")
    nb = qmd_to_notebook(text)
    nb.cells = [cell for cell in nb.cells if cell.cell_type == "code"]  # the prose's inline values are not needed
    here = [e for e in EXERCISES.values() if book.chapter(e.chapter).PAGE == page]
    found = set()
    for cell in nb.cells:
        _, code = cell_options(cell.source)
        for exercise in here:
            statement = check_call(code, exercise)
            if statement is not None:
                cell.source = pasted(code, statement, exercise)
                code = cell.source
                found.add(exercise.name)
    assert found == {e.name for e in here}, f"no answer cell on {page} for {sorted({e.name for e in here} - found)}"
    execute_notebook(nb, (ROOT / page).parent, page, text, timeout=600)
