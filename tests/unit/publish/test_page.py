"""rlbook.publish.page: tables and display equations get boxes that scroll on their own."""
from __future__ import annotations

import json

from rlbook.publish.build import pandoc_path
from rlbook.publish.page import scroll_boxes
from rlbook.publish.pandoc_ast import pandoc_run


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
