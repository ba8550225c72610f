"""rlbook.publish.markdown: figures written themed and with their drawn size, checks of the reader's answers
without output, labelled cells named, folds as Quarto's code-fold asks."""

from __future__ import annotations

import nbformat

from rlbook.publish.config import Page
from rlbook.publish.markdown import notebook_markdown, svg_attributes

PAGE = Page("chapters/03-c.qmd", "main", "3", "C")
SVG = (
    '<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="293.98pt" height="238.03pt" '
    'viewBox="0 0 293.98 238.03"><path style="fill: #ffffff"/><text style="font-size: 9px">step</text></svg>'
)
DEFAULTS = {"echo": True, "output": True, "include": True, "warning": True, "code-fold": "show"}


def _notebook(*cells) -> dict:
    return nbformat.v4.new_notebook(cells=list(cells))


def _code(source: str, *outputs) -> nbformat.NotebookNode:
    return nbformat.v4.new_code_cell(source, outputs=list(outputs))


def _printed(text: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_output("stream", name="stdout", text=text)


def _markdown(nb: dict, tmp_path) -> str:
    return notebook_markdown(nb, PAGE, tmp_path / "media", "../media/03-c", dict(DEFAULTS)).markdown


def test_an_svg_figure_is_written_themed_and_tagged_with_the_css_pixels_it_was_drawn_at(tmp_path):
    figure = nbformat.v4.new_output("display_data", data={"image/svg+xml": SVG, "text/plain": "<Figure>"})
    nb = _notebook(_code('#| label: fig-a\n#| fig-cap: "A."\n#| fig-alt: "An a."\nplot()', figure))
    markdown = _markdown(nb, tmp_path)
    assert '![](../media/03-c/03-c-0-1.svg){.themed width="392" height="317"}' in markdown
    written = (tmp_path / "media" / "03-c-0-1.svg").read_text()
    assert "prefers-color-scheme: dark" in written and "fill: var(--rlbook-ffffff)" in written


def test_svg_attributes_read_points_or_pixels_and_do_without_a_size():
    assert svg_attributes('<svg width="72pt" height="36pt">') == '.themed width="96" height="48"'
    assert svg_attributes('<svg height="20px" width="50px" viewBox="0 0 50 20">') == ".themed"
    assert svg_attributes('<svg width="50" height="20">') == '.themed width="50" height="20"'
    assert svg_attributes("<svg viewBox='0 0 1 1'>") == ".themed"


def test_a_check_of_the_reader_s_answer_is_shown_without_output_and_its_solution_with_it(tmp_path):
    nb = _notebook(
        nbformat.v4.new_markdown_cell("## Exercises\n\n### Exercise 3.1: a sum {#sec-ex}\nWrite it."),
        _code("print(data)", _printed("the data to work on\n")),
        _code("answer = None"),
        _code("ch3.check_sum(answer)", _printed("NOT YET: no answer yet\n")),
        _code("#| output: true\nch3.check_sum(answer)", _printed("NOT YET: asked to be shown\n")),
        nbformat.v4.new_markdown_cell('::: {.callout-tip collapse="true"}\n## Solution'),
        _code("answer = 2\nch3.check_sum(answer)", _printed("PASSED: the sum\n")),
        nbformat.v4.new_markdown_cell(":::\n\n## Summary"),
    )
    markdown = _markdown(nb, tmp_path)
    assert "ch3.check_sum(answer)" in markdown and "NOT YET: no answer yet" not in markdown
    assert "the data to work on" in markdown and "NOT YET: asked to be shown" in markdown
    assert "PASSED: the sum" in markdown


def test_a_labelled_cell_is_named_by_its_label_and_a_figure_cell_by_its_float_only(tmp_path):
    nb = _notebook(
        _code("#| label: lst-loop\nfor step in range(3):\n    pass"),
        _code('#| label: tbl-t\n#| tbl-cap: "T."\nshow()', _printed("| a |\n")),
    )
    markdown = _markdown(nb, tmp_path)
    assert ":::: {#lst-loop .cell}" in markdown
    assert ":::: {.cell}" in markdown and "::: {#tbl-t .rlbook-table}" in markdown


def test_code_fold_true_folds_closed_show_folds_open_and_false_does_not_fold(tmp_path):
    nb = _notebook(
        _code("#| code-fold: true\nclosed = 1"),
        _code("shown = 1"),
        _code('#| code-fold: false\n#| code-summary: "Loop"\nplain = 1'),
    )
    markdown = _markdown(nb, tmp_path)
    closed, shown, plain = markdown.split(":::: {.cell}")[1:]
    assert '<details class="code-fold">' in closed and "closed = 1" in closed
    assert '<details class="code-fold" open>' in shown
    assert "<details" not in plain and "plain = 1" in plain
