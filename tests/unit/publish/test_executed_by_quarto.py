"""rlbook.publish.notebooks.executed_by_quarto: a page's executed notebook read back from the one Quarto executed.

``fixtures/quarto-kept/`` holds a page (``01-kept.qmd``) and the notebook Quarto 1.10.16 executed it in and kept
(``execute: keep-ipynb``; Quarto names it ``01-kept.quarto_ipynb``, renamed here because git ignores that name):
its option lines rewritten, inline values in the markdown cells' metadata, an ``eval: false`` cell counted as run.
That this gives what rlbook's own execution gives is tested against a kernel in ``tests/book/test_quarto_project.py``.
"""

from __future__ import annotations

import copy
from pathlib import Path

import nbformat
import pytest

from rlbook.publish.notebooks import executed_by_quarto, inline_value

KEPT = Path(__file__).parent / "fixtures" / "quarto-kept"


def _page() -> tuple[str, nbformat.NotebookNode]:
    return (KEPT / "01-kept.qmd").read_text(), nbformat.read(KEPT / "01-kept.executed.ipynb", as_version=4)


def test_each_code_cell_gets_the_outputs_quarto_gave_it_and_an_unrun_cell_none():
    text, kept = _page()
    nb = executed_by_quarto(text, kept, "chapters/01-kept.qmd")
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    assert [len(cell.outputs) for cell in code] == [0, 3, 0, 1]
    assert [cell.execution_count for cell in code] == [1, 2, None, 4]  # Quarto counts the eval: false cell too
    assert code[0].source.startswith("#| include: false\n")  # the page's own option lines, not Quarto's rewrite
    assert all("image/svg+xml" in output.data for output in code[1].outputs)
    assert code[3].outputs[0].text == "42\n"


def test_the_prose_prints_each_inline_value_as_rlbook_prints_it():
    text, kept = _page()
    nb = executed_by_quarto(text, kept, "chapters/01-kept.qmd")
    prose = [cell.source for cell in nb.cells if cell.cell_type == "markdown"]
    assert "The answer is 42, the share 45.7% and the word it's *so*." in prose  # Quarto escapes the *; str() not
    assert "The code shows `{python}` expressions in prose only, as in `x = 1`." in prose


def test_a_notebook_of_other_code_is_refused_with_the_cell_named():
    text, kept = _page()
    other = copy.deepcopy(kept)
    [cell for cell in other["cells"] if cell["cell_type"] == "code"][3]["source"] = "print(answer + 1)"
    with pytest.raises(ValueError, match="chapters/01-kept.qmd: code cell 4 is not the one Quarto executed"):
        executed_by_quarto(text, other, "chapters/01-kept.qmd")
    other["cells"] = other["cells"][:-1]
    with pytest.raises(ValueError, match="chapters/01-kept.qmd: Quarto executed 3 code cells, the page has 4"):
        executed_by_quarto(text, other, "chapters/01-kept.qmd")


def test_an_inline_expression_quarto_did_not_evaluate_is_refused():
    text, kept = _page()
    for cell in kept["cells"]:
        cell.get("metadata", {}).pop("user_expressions", None)
    with pytest.raises(ValueError, match="evaluated no inline expression `\\{python\\} answer`"):
        executed_by_quarto(text, kept, "chapters/01-kept.qmd")


def test_an_inline_value_is_its_markdown_else_its_str():
    assert inline_value({"status": "ok", "data": {"text/markdown": "45.7%", "text/plain": "Num(0.4567, '.1%')"}}) == (
        "45.7%"
    )
    assert inline_value({"status": "ok", "data": {"text/plain": "42"}}) == "42"
    assert inline_value({"status": "ok", "data": {"text/plain": '"it\'s *so*"'}}) == "it's *so*"
    assert inline_value({"status": "ok", "data": {"text/plain": ["0.", "25"]}}) == "0.25"
    with pytest.raises(ValueError, match="NameError: name 'y' is not defined"):
        inline_value({"status": "error", "ename": "NameError", "evalue": "name 'y' is not defined"})
