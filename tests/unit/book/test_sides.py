"""Seeds grouped by the way a measure went (rlbook.book._sides): every combination of groups is a case, and only
the groups that hold a seed are named."""

from __future__ import annotations

import pytest

from rlbook.book import _sides
from rlbook.book.wording import choice


def test_the_cases_are_every_non_empty_selection_of_the_groups_in_order():
    assert _sides.cases(("rose", "fell")) == ("rose", "fell", "rose_fell")
    assert len(_sides.cases(("a", "b", "c"))) == 7 and _sides.cases(("a", "b", "c"))[-1] == "a_b_c"


def test_a_group_without_a_seed_is_neither_named_nor_a_value():
    made = _sides.grouped({"rose": [0, 2], "fell": [], "level": [1]}, (0, 1, 2), before="0.50")
    cases = _sides.cases(("rose", "fell", "level"))
    assert made == choice("rose_level", cases, rose="seeds 0 and 2", level="seed 1", before="0.50")


def test_a_sentence_with_every_group_empty_is_refused():
    with pytest.raises(ValueError, match="nothing to name"):
        _sides.grouped({"rose": [], "fell": []}, (0, 1))


def test_sides_put_an_equal_value_with_the_second_group_unless_a_third_is_named():
    values, references = [0.5, 0.4, 0.3], [0.4, 0.4, 0.4]
    assert _sides.sides(values, references, (0, 1, 2), ("up", "down")) == {"up": [0], "down": [1, 2]}
    assert _sides.sides(values, references, (0, 1, 2), ("up", "down", "same")) == {"up": [0], "down": [2], "same": [1]}
    with pytest.raises(ValueError, match="one value per seed"):
        _sides.sides([0.1], [0.1, 0.2], (0, 1), ("up", "down"))
