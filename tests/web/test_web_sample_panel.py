"""The sample panel opens on the sum the page's text discusses (chapter 1 names it in #rlbook-workshop-sum)."""

from __future__ import annotations


def test_the_panel_opens_on_the_named_sum_or_on_5_plus_6(node):
    named = ["9+6", " 3+4 ", None, "`{python} F.unsure`", "12+3", ""]
    answer = node({"startingSum": named, "data": {}})["startingSum"]
    assert answer == [{"a": 9, "b": 6}, {"a": 3, "b": 4}] + [{"a": 5, "b": 6}] * 4
