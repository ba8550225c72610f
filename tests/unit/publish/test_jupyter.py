"""The notebooks for JupyterLab, written from small ``.qmd`` snippets (rlbook.publish.jupyter)."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from rlbook.publish.config import Page
from rlbook.publish.execute import qmd_to_notebook
from rlbook.publish.jupyter import KERNELSPEC, for_jupyter, student_notebooks
from rlbook.publish.nbrefs import Bibliography
from rlbook.publish.render import pandoc_path

PAGE = Page("chapters/01-x.qmd", "main", "1", "X")
BIB = (
    "@book{sutton2018reinforcement, title = {Reinforcement Learning}, author = {Sutton, Richard S. and "
    "Barto, Andrew G.}, year = {2018}, publisher = {MIT Press}}\n"
)


def convert(text: str, labels: dict | None = None, bib: Bibliography | None = None, **kwargs) -> list:
    return for_jupyter(qmd_to_notebook(text), PAGE, labels or {}, bib, **kwargs).cells


def markdown(cells: list) -> str:
    return "\n\n".join(c.source for c in cells if c.cell_type == "markdown")


def test_a_callout_is_a_titled_quote_without_fences():
    text = markdown(convert("Intro.\n\n::: {.callout-note}\n## Learning objectives\n\n- one\n- two\n:::\n\nAfter.\n"))
    assert text == "Intro.\n\n> **Learning objectives**\n>\n> - one\n> - two\n\nAfter."


def test_a_callout_without_a_heading_is_titled_by_its_kind_or_its_title_attribute():
    assert "> **Warning**\n>\n> Careful." in markdown(convert("::: {.callout-warning}\nCareful.\n:::\n"))
    assert "> **Mind this**" in markdown(convert('::: {.callout-note title="Mind this"}\nText.\n:::\n'))


def test_a_solution_is_a_closed_details_block_whose_code_is_not_a_cell():
    cells = convert(
        "### Exercise 1: add\n\n```{python}\nx = None\n```\n\n"
        '::: {.callout-tip collapse="true"}\n## Solution\n\nAdd them.\n\n```{python}\nx = 1 + 1\n```\n'
        "\nThat is all.\n:::\n"
    )
    assert [c.cell_type for c in cells] == ["markdown", "code", "markdown"]
    assert cells[1].source == "x = None"
    assert cells[2].source == (
        "<details><summary><strong>Solution</strong></summary>\n\nAdd them.\n\n"
        "```python\nx = 1 + 1\n```\n\nThat is all.\n\n</details>"
    )
    assert "<details open" not in cells[2].source


def test_headings_are_numbered_and_lose_their_ids():
    text = markdown(convert("# Title {#sec-t}\n\n## Part {#sec-p}\n\n### Deep\n\n## Plain {.unnumbered}\n\n## Next\n"))
    assert text == "# 1 Title\n\n## 1.1 Part\n\n### 1.1.1 Deep\n\n## Plain\n\n## 1.2 Next"


def test_cross_references_read_as_their_numbers():
    labels = {"fig-a": "Figure 1.2", "sec-b": "Section 2.3"}
    text = markdown(convert("See @fig-a, [@sec-b], [-@fig-a] and [see @sec-b]; not `@fig-a` in code.\n", labels))
    assert text == "See Figure 1.2, Section 2.3, 1.2 and see Section 2.3; not `@fig-a` in code."


def test_citations_read_author_year_and_the_notebook_ends_with_its_references(tmp_path):
    (tmp_path / "refs.bib").write_text(BIB)
    bib = Bibliography(tmp_path / "refs.bib", pandoc_path())
    cells = convert("As @sutton2018reinforcement say [@sutton2018reinforcement, ch. 3].\n", bib=bib)
    assert cells[0].source == "As Sutton and Barto (2018) say (Sutton and Barto 2018, ch.\u00a03)."
    assert cells[-1].source.startswith("## References\n\nSutton, Richard S., and Andrew G. Barto. 2018.")


def test_the_refs_div_lists_every_work_the_book_cites(tmp_path):
    (tmp_path / "refs.bib").write_text(BIB)
    bib = Bibliography(tmp_path / "refs.bib", pandoc_path())
    cells = convert(
        "# References {.unnumbered}\n\n::: {#refs}\n:::\n", bib=bib, book_citations=["sutton2018reinforcement"]
    )
    assert len(cells) == 1 and cells[0].source.startswith("# References\n\nSutton, Richard S.")


def test_raw_html_blocks_and_front_matter_are_left_out():
    cells = convert('---\ntitle: x\n---\n\nBefore.\n\n```{=html}\n<div id="w"></div>\n```\n\nAfter.\n')
    assert markdown(cells) == "Before.\n\nAfter."
    assert all(c.cell_type != "raw" for c in cells)


def test_cell_options_move_to_metadata_and_captions_become_markdown():
    cells = convert(
        '```{python}\n#| label: fig-a\n#| fig-cap: "A long caption."\n#| fig-alt: "Alt."\nplot()\n```\n\n'
        "```{python}\n#| include: false\nassert True\n```\n",
        {"fig-a": "Figure 1.1"},
    )
    figure, caption, hidden = cells
    assert figure.source == "plot()" and figure.metadata["quarto"]["fig-alt"] == "Alt."
    assert caption.source == "**Figure 1.1:** A long caption."
    assert hidden.metadata["jupyter"] == {"source_hidden": True}  # an error it raises stays in sight


def test_an_answer_and_its_check_in_one_cell_become_two_cells():
    cells = convert("### Exercise 2: f\n\n```{python}\ndef f(x):\n    return None  # yours\n\n\nch1.check_f(f);\n```\n")
    assert [c.source for c in cells[1:]] == ["def f(x):\n    return None  # yours", "ch1.check_f(f);"]


def test_a_later_cell_that_redefines_an_answer_fails_naming_the_name():
    text = "### Exercise 1: x\n\n```{python}\nlabels = None\n```\n\n## After\n\n```{python}\nlabels = {}\n```\n"
    with pytest.raises(ValueError, match="defines labels, which the exercise asks the student to write"):
        convert(text)


def test_kernelspec_as_jupyterlab_writes_it_and_execution_counts_in_order():
    nb = qmd_to_notebook("```{python}\na = 1\n```\n\nText.\n\n```{python}\nb = 2\n```\n")
    for cell, count in zip([c for c in nb.cells if c.cell_type == "code"], (3, 7)):
        cell.execution_count = count
        cell.outputs = [nbformat.v4.new_output("execute_result", {"text/plain": "1"}, execution_count=count)]
    out = for_jupyter(nb, PAGE, {})
    assert out.metadata.kernelspec == KERNELSPEC and out.metadata.language_info["name"] == "python"
    assert [(c.execution_count, c.outputs[0]["execution_count"]) for c in out.cells if c.cell_type == "code"] == [
        (1, 1),
        (2, 2),
    ]
    nbformat.validate(out)


def test_student_notebooks_number_across_pages(tmp_path):
    (tmp_path / "chapters").mkdir()
    first, second = Page("chapters/01-a.qmd", "main", "1", "A"), Page("chapters/02-b.qmd", "main", "2", "B")
    (tmp_path / first.source).write_text("# A {#sec-a}\n\n## Part {#sec-part}\n")
    (tmp_path / second.source).write_text("# B\n\nBack to @sec-part of @sec-a.\n")
    executed = {p.stem: qmd_to_notebook((tmp_path / p.source).read_text()) for p in (first, second)}
    notebooks = student_notebooks(Path(tmp_path), [first, second], executed, pandoc_path(), None)
    assert "Back to Section 1.1 of Chapter 1." in notebooks["02-b"].cells[0].source


def test_links_to_pages_point_at_their_notebooks():
    text = markdown(convert("See [one](01-a.qmd#sec-x), [two](chapters/02-b.qmd) and [web](https://x.org/a.qmd).\n"))
    assert text == "See [one](01-a.ipynb#sec-x), [two](02-b.ipynb) and [web](https://x.org/a.qmd)."


def test_cell_ids_follow_the_page_and_the_place_so_two_builds_write_the_same_notebook():
    text = "# A page\n\n```{python}\na = 1\n```\n\nText.\n\n```{python}\nb = 2\n```\n"
    first, second = (for_jupyter(qmd_to_notebook(text), PAGE, {}) for _ in range(2))
    assert nbformat.writes(first) == nbformat.writes(second)
    assert [cell.id for cell in first.cells] == [f"01-x-{i}" for i in range(len(first.cells))]
    nbformat.validate(first)
