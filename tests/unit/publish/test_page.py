"""rlbook.publish.page: tables and display equations get boxes that scroll on their own, a figure's panels a row
of their own, names in code break only between their parts, and tables size their columns to their content."""

from __future__ import annotations

import json
import re

from rlbook.publish.page import (
    PANEL_GAP_PX,
    WIDE_FIGURE_PX,
    breakable_names,
    build_figures,
    natural_tables,
    scroll_boxes,
)
from rlbook.publish.pandoc_ast import pandoc_run
from rlbook.publish.render import pandoc_path


def _html(markdown: str) -> str:
    doc = json.loads(pandoc_run(pandoc_path(), ["-f", "markdown", "-t", "json"], markdown, print))
    doc["blocks"] = scroll_boxes(doc["blocks"])
    return pandoc_run(pandoc_path(), ["-f", "json", "-t", "html5", "--mathml", "--wrap=none"], json.dumps(doc), print)


def test_every_table_sits_in_a_scrolling_box():
    html = _html("| a | b |\n|---|---|\n| 1 | 2 |\n\n::: {.callout-note}\n| c |\n|---|\n| 3 |\n:::\n")
    assert html.count('<div class="table-scroll">\n<table>') == 2


def test_display_math_sits_in_a_scrolling_box_and_inline_math_does_not():
    html = _html("Inline $x^2$ and then\n\n$$\\sum_{i=1}^{G} A_i = 0$$\n")
    assert html.count('<span class="display-math"><math display="block"') == 1
    assert html.count("<math") == 2


def _site_html(markdown: str, alt: dict | None = None) -> str:
    doc = json.loads(pandoc_run(pandoc_path(), ["-f", "markdown", "-t", "json"], markdown, print))
    doc["blocks"] = breakable_names(natural_tables(build_figures(doc["blocks"], alt or {})))
    return pandoc_run(pandoc_path(), ["-f", "json", "-t", "html5", "--wrap=none"], json.dumps(doc), print)


def _figure(*widths: int) -> str:
    images = "\n\n".join(f'![](p{i}.svg){{.themed width="{w}" height="300"}}' for i, w in enumerate(widths))
    return f"::: {{#fig-x .rlbook-figure}}\n{images}\n\n::: {{.rlbook-caption}}\nPanels.\n:::\n:::\n"


def test_a_figure_s_panels_sit_in_one_row_box_and_only_a_figure_wider_than_the_text_may_use_the_margin():
    one = _site_html(_figure(392), {"fig-x": "One panel."})
    assert '<figure id="fig-x">' in one and '<div class="panels">' in one
    assert '<img src="p0.svg" class="themed" width="392" height="300" alt="One panel." />' in one
    two = _site_html(_figure(392, 392))
    assert '<figure id="fig-x" class="figure-wide">' in two and two.count("<img") == 2
    assert two.index('<div class="panels">') < two.index("<img") < two.index("<figcaption>")
    assert '<figure id="fig-x" class="figure-wide">' in _site_html(_figure(WIDE_FIGURE_PX + 1))
    assert "figure-wide" not in _site_html(_figure(WIDE_FIGURE_PX - PANEL_GAP_PX - 300, 300))


def test_a_figure_s_description_is_read_once_on_its_first_panel_and_the_others_are_named_by_their_place():
    three = _site_html(_figure(300, 300, 300), {"fig-x": "Three line charts, one per sum."})
    assert re.findall(r'<img src="p\d.svg"[^>]* alt="([^"]*)"', three) == [
        "Three line charts, one per sum.",
        "Panel 2 of 3 (described with panel 1)",
        "Panel 3 of 3 (described with panel 1)",
    ]


def test_names_in_code_break_only_after_underscores_dots_and_slashes():
    html = _site_html("Call `rlbook.exercises.check_rollout_labels(x)` on `main`, or `a/b_c`.\n")
    assert "<code>rlbook.<wbr>exercises.<wbr>check_<wbr>rollout_<wbr>labels(x)</code>" in html
    assert "<code>main</code>" in html and "<code>a/<wbr>b_<wbr>c</code>" in html
    assert "<code>x &lt; y_<wbr>z</code>" in _site_html("`x < y_z`\n")
    assert "<code>__init__</code>" in _site_html("`__init__`\n")  # nothing to break between


def test_a_table_with_long_rows_keeps_no_column_widths():
    long_row = "| " + "a long cell of words " * 4 + " | b |\n|---|---|\n| 1 | 2 |\n"
    assert "<colgroup>" in pandoc_run(pandoc_path(), ["-f", "markdown", "-t", "html5"], long_row, print)
    assert "<colgroup>" not in _site_html(long_row) and "<td>2</td>" in _site_html(long_row)
