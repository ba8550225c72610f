"""The list of every exercise is read from the pages: numbers, tasks, labels and checkers."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlbook.publish.exercise_list import book_exercises, exercises_markdown, page_exercises

ROOT = Path(__file__).resolve().parents[3]
PAGE = """# C {#sec-c}

### Exercise 3.1: a first one {#sec-c-1}

```{python}
ch3.check_first(answer);
```

### Exercise 3.2: a question {#sec-c-2}

No code here.
"""


def test_exercises_are_read_with_their_checkers():
    first, second = page_exercises("chapters/03-c.qmd", PAGE)
    assert (first.number, first.task, first.label, first.checkers) == (
        "3.1",
        "a first one",
        "sec-c-1",
        ("ch3.check_first",),
    )
    assert (second.number, second.checkers) == ("3.2", ())


def test_an_exercise_heading_without_a_label_is_refused():
    with pytest.raises(ValueError, match="has no"):
        page_exercises("chapters/03-c.qmd", PAGE.replace(" {#sec-c-1}", ""))


def test_the_book_lists_every_exercise_in_order_each_with_a_checker():
    exercises = book_exercises(ROOT)
    numbers = [e.number for e in exercises]
    assert numbers[0] == "1.1" and numbers[-1].startswith("A.") and len(set(numbers)) == len(numbers)
    assert all(e.checkers for e in exercises), [e.number for e in exercises if not e.checkers]


def test_the_table_links_each_exercise_relative_to_its_page():
    table = exercises_markdown(ROOT, "chapters/exercises.qmd")
    assert "| [Exercise 1.1](01-rl-loop.qmd#sec-ex-1-1) | name the parts of a rollout |" in table
