"""The one writer of the chapters' Markdown tables (rlbook.analysis.tables), and the modules that re-export it."""

from __future__ import annotations

import pytest

from rlbook import trl_bridge as figures
from rlbook.analysis import audit, credit, disagreement, glance, selection, tables


def test_every_chapter_module_writes_its_tables_with_the_one_function():
    for module in (audit, disagreement, glance, selection, figures):
        assert module.markdown_table is tables.markdown_table
    assert credit.dict_table is tables.dict_table


def test_pipes_are_escaped_outside_code_spans_only():
    table = tables.markdown_table(["a", "b"], [["x|y", "`U:3+4?|A:`"], ["two\nlines", 3]], "lr")
    # separators as long as each column's longest cell: 'two lines' (9) and '`U:3+4?|A:`' (11)
    assert table.splitlines() == [
        "| a | b |",
        "|:---------|-----------:|",
        "| x\\|y | `U:3+4?|A:` |",
        "| two lines | 3 |",
    ]


def test_a_separator_is_capped_and_the_shape_checked():
    assert tables.markdown_table(["long"], [["x" * 100]]).splitlines()[1] == "|:" + "-" * tables.MAX_RULE + "|"
    with pytest.raises(ValueError, match="one entry per column"):
        tables.markdown_table(["a"], [["x", "y"]])
    with pytest.raises(ValueError, match="one entry per column"):
        tables.markdown_table(["a", "b"], [], "l")


def test_code_columns_show_inline_code_and_an_html_code_element_where_a_pipe_or_backtick_forbids_a_span():
    rows = (r for r in [["'2|#'", 3], ["'#'", 1], ["a`b<", 2]])  # any iterable of rows
    text = tables.markdown_table(["completion", "n"], rows, code=[0])
    assert text.splitlines()[2:] == [
        "| <code>&#x27;2&#124;#&#x27;</code> | 3 |",
        "| `'#'` | 1 |",
        "| <code>a&#96;b&lt;</code> | 2 |",
    ]


def test_dict_table_rounds_floats_shows_none_as_a_dash_and_right_aligns_numbers():
    text = tables.dict_table([{"run": "a", "x": 0.12345}, {"run": "bb", "x": None}])
    assert text.splitlines() == ["| run | x |", "|:---|-----:|", "| a | 0.123 |", "| bb | – |"]
    assert tables.dict_table([{"x": 0.5}], digits=1).splitlines()[-1] == "| 0.5 |"


def test_pandoc_shows_a_code_cell_with_a_pipe_as_code_with_straight_quotes():
    import subprocess

    from rlbook.publish.render import pandoc_path

    table = tables.markdown_table(["completion", "n"], [["'|#'", 3], ["int('`')", 1]], code=[0])
    html = subprocess.run(
        [pandoc_path(), "-f", "markdown", "-t", "html"], input=table, text=True, capture_output=True, check=True
    ).stdout
    assert "<code>'|#'</code>" in html and "<code>int('`')</code>" in html
