"""The list of every exercise is read from the pages: numbers, tasks, labels and checkers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rlbook.exercises import ch3
from rlbook.exercises.registry import REGISTRY
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


BOXES = """# C {#sec-c}

## Groups {#sec-c-groups}

::: {.callout-tip #try-c-groups}
## Try it

Work it out.
:::

```{python}
ch3.check_try_it(answer);
```

## Later {#sec-c-later}

```{python}
ch3.check_later(answer);
```

::: {.callout-tip}
## Try it

Only think about it.
:::

### Exercise 3.1: a first one {#sec-c-1}

```{python}
ch3.check_first(answer);
```
"""


def test_a_try_it_box_with_checks_is_listed_under_its_section():
    box, exercise = page_exercises("chapters/03-c.qmd", BOXES, "3")
    assert (box.name, box.task, box.label, box.checkers) == (
        "Try it, chapter 3",
        "Groups",
        "try-c-groups",
        ("ch3.check_try_it",),
    )
    assert (exercise.name, exercise.checkers) == ("Exercise 3.1", ("ch3.check_first",))


def test_a_checked_try_it_box_without_an_id_is_refused():
    with pytest.raises(ValueError, match="no \\{#id\\}"):
        page_exercises("chapters/03-c.qmd", BOXES.replace(" #try-c-groups", ""), "3")


def test_the_table_lists_every_registered_try_it_with_its_checks():
    boxes = [e for e in book_exercises(ROOT) if e.kind == "Try it"]
    assert ("chapters/03-reward-to-gradient.qmd", "3") in [(e.page, e.number) for e in boxes]
    listed = {checker for box in boxes for checker in box.checkers}
    registered = {
        f"ch3.{ex.check.__name__}"
        for name, ex in REGISTRY.items()
        if name.startswith("try-it") and ex.check.__module__ == ch3.__name__
    }
    assert registered and registered <= listed, registered - listed
    table = exercises_markdown(ROOT, "chapters/exercises.qmd")
    assert all(f"| [Try it, chapter {b.number}]({Path(b.page).name}#{b.label}) |" in table for b in boxes)


def test_exercise_labels_name_their_subject_not_an_old_number():
    for exercise in book_exercises(ROOT):
        chapter = re.match(r"sec-ch(\w+)-", exercise.label)
        assert chapter is None or chapter.group(1) == exercise.number.split(".")[0], exercise
        assert not re.search(r"-ex\d+$", exercise.label), exercise
        numbered = re.fullmatch(r"sec-ex-(\w+)-(\d+)", exercise.label)
        assert numbered is None or f"{numbered.group(1)}.{numbered.group(2)}".upper() == exercise.number, exercise
