"""The reader's lint rules: each one catches its fault in a small page, and a clean page passes."""

from __future__ import annotations

import pytest

from rlbook.publish.config import Page
from rlbook.publish.reader import (
    MAX_VISIBLE_LINES,
    MAX_VISIBLE_WIDTH,
    answer_checks,
    code_lines,
    reader_problems,
    visible,
)

CHAPTER = Page("chapters/03-c.qmd", "main", "3", "C")
CLEAN = """# C {#sec-c}

## Why this chapter matters

Because.

::: {.callout-note}
## Learning objectives
- one
:::

```{python}
rate = 0.25
share = f"{rate:.0%}"
```

Right on `{python} share` of the sums, `{python} f"{rate:.2f}"` as a fraction.

```{python}
#| include: false
assert rate < 0.5, "the rate stays below one half"
```

## Summary

Short.

## Exercises

### Exercise 3.1: a first one {#sec-c-ex1}

::: {.callout-tip collapse="true"}
## Solution
Done; see Exercise 3.2 too.
:::

### Exercise 3.2: a second one
"""


def problems(text: str, page: Page = CHAPTER) -> list[str]:
    return reader_problems(page, text)


def test_a_clean_chapter_has_no_problem():
    assert problems(CLEAN) == []


def test_visible_follows_include_and_echo_and_the_book_defaults():
    assert visible({}) and visible({"output": False})
    assert not visible({"include": False}) and not visible({"echo": False})
    assert not visible({}, {"echo": False}) and visible({"echo": True}, {"echo": False})


def test_an_assert_in_a_visible_cell_is_reported_with_its_line():
    text = CLEAN.replace('share = f"{rate:.0%}"\n', 'share = f"{rate:.0%}"\nassert rate > 0\n')
    found = problems(text)
    line = text.split("\n").index("assert rate > 0") + 1
    assert len(found) == 1 and found[0].startswith(f"chapters/03-c.qmd:{line}: an assert in a cell the reader sees")


def test_an_assert_in_a_cell_with_echo_false_is_fine():
    text = CLEAN.replace("#| include: false", "#| echo: false")
    assert problems(text) == []


def test_a_visible_cell_over_the_limit_is_reported_and_one_at_it_is_fine():
    at_limit = "\n".join(f"x{i} = {i}" for i in range(MAX_VISIBLE_LINES))
    over = at_limit + "\nx = 0"
    assert code_lines(f"\n{at_limit}\n\n") == MAX_VISIBLE_LINES
    fine = CLEAN.replace("```{python}\nrate", f"```{{python}}\n#| label: x\n{at_limit}\n```\n\n```{{python}}\nrate")
    assert problems(fine) == []
    long = CLEAN.replace("```{python}\nrate", f"```{{python}}\n{over}\n```\n\n```{{python}}\nrate")
    found = problems(long)
    assert len(found) == 1 and f"has {MAX_VISIBLE_LINES + 1} lines" in found[0]


def test_a_visible_line_over_80_characters_is_reported_with_its_line_and_one_at_80_is_fine():
    fine = CLEAN.replace("rate = 0.25\n", f"rate = 0.25\n# {'x' * (MAX_VISIBLE_WIDTH - 2)}\n")
    assert problems(fine) == []
    over = CLEAN.replace("rate = 0.25\n", f"rate = 0.25\n# {'x' * (MAX_VISIBLE_WIDTH - 1)}\n")
    line = over.split("\n").index(f"# {'x' * (MAX_VISIBLE_WIDTH - 1)}") + 1
    found = problems(over)
    assert found == [
        (
            f"chapters/03-c.qmd:{line}: a line of {MAX_VISIBLE_WIDTH + 1} characters in a cell the reader "
            f"sees (at most {MAX_VISIBLE_WIDTH}, which the page shows without clipping); wrap it"
        )
    ]


def test_long_option_lines_and_long_lines_of_hidden_cells_are_fine():
    caption = '#| fig-cap: "' + "a long caption " * 20 + '"'
    text = CLEAN.replace("rate = 0.25\n", f"{caption}\nrate = 0.25\n")
    text = text.replace("#| include: false\n", f"#| include: false\nx = {'1 + ' * 40}1\n")
    assert problems(text) == []


def test_a_visible_cell_that_draws_a_figure_or_a_table_must_fold_closed():
    for label in ("fig-rate", "tbl-rate"):
        open_cell = CLEAN.replace("rate = 0.25\n", f"#| label: {label}\nrate = 0.25\n")
        found = problems(open_cell)
        assert len(found) == 1 and f"the cell that draws {label} shows its code open" in found[0]
        for fold in ("false", "show"):
            assert problems(open_cell.replace("rate = 0.25\n", f"#| code-fold: {fold}\nrate = 0.25\n")) == found
        closed = open_cell.replace("rate = 0.25\n", "#| code-fold: true\nrate = 0.25\n")
        assert problems(closed) == []
        assert problems(open_cell.replace(f"#| label: {label}\n", f"#| label: {label}\n#| echo: false\n")) == []


def test_answer_checks_are_the_cells_outside_any_box_that_call_a_checker():
    cells = [
        ("markdown", "::: {.callout-tip}\n## Try it\nCompute it.\n:::"),
        ("code", "answer = None"),
        ("code", "ch3.check_try_it(answer);"),  # a Try it's check, after its box
        ("markdown", "### Exercise 3.1: a first one {#sec-x}\nDo it."),
        ("code", "print(data)"),  # what the exercise works on: shown
        ("code", "#| label: x\ncheck_sum(answer)"),
        ("markdown", '::: {.callout-tip collapse="true"}\n## Solution'),
        ("code", "answer = 1\nch3.check_sum(answer)"),  # the solution's check: its PASSED is shown
        ("markdown", ":::\n\n## Summary"),
        ("code", "checked = check(1)"),  # not a checker's name
        ("code", "this is not python ("),
    ]
    assert answer_checks(cells) == {2, 5}


def test_a_long_hidden_cell_is_fine():
    body = "\n".join(f"x{i} = {i}" for i in range(40))
    text = CLEAN.replace("#| include: false\n", f"#| include: false\n{body}\n")
    assert problems(text) == []


def test_prose_composed_in_a_visible_cell_and_used_inline_is_reported():
    text = CLEAN.replace('share = f"{rate:.0%}"', 'share = f"{rate:.0%} of the sums"')
    found = problems(text)
    assert len(found) == 1 and "share is prose composed in a cell the reader sees" in found[0]


def test_wording_chosen_with_if_else_is_reported_even_in_a_hidden_cell():
    text = (
        CLEAN.replace('assert rate < 0.5, "the rate stays below one half"', 'word = "rose" if rate > 0.2 else "fell"')
        + "\nIt `{python} word`.\n"
    )
    found = problems(text)
    assert len(found) == 1 and "word chooses the page's wording with if/else" in found[0]


def test_an_if_statement_that_picks_a_sentence_is_reported():
    cell = '```{python}\nif rate > 0.2:\n    verdict = "it rose"\nelse:\n    verdict = "it fell"\n```\n'
    found = problems(CLEAN + "\n" + cell + "\nSo `{python} verdict`.\n")
    assert any("an if/else chooses the page's wording" in p for p in found)


def test_an_inline_value_that_picks_a_word_is_reported():
    found = problems(CLEAN + '\nIt `{python} "rose" if rate > 0.2 else "fell"`.\n')
    assert len(found) == 1 and "an inline value chooses the page's wording" in found[0]


def test_a_string_not_used_in_the_prose_is_not_wording():
    text = CLEAN.replace('share = f"{rate:.0%}"', 'share = f"{rate:.0%}"\nlabel = "a" if rate else "b"')
    assert problems(text) == []


@pytest.mark.parametrize(
    "heading",
    [
        "### Exercise 1: a first one",
        "### Exercise 3.2: a first one",
        "### Exercise: a first one",
        "### Exercise 3.1 a first one",
    ],
)
def test_an_exercise_heading_out_of_the_scheme_is_reported(heading):
    found = problems(CLEAN.replace("### Exercise 3.1: a first one", heading))
    assert len(found) == 1 and "should read 'Exercise 3.1: ...'" in found[0]


def test_an_exercise_in_bold_and_an_old_style_citation_are_reported():
    text = CLEAN + "\n**Exercise 3.3 (bold).** Do it, then exercise 4.\n"
    found = problems(text)
    assert any("an exercise in bold text" in p for p in found)
    assert any("'exercise 4': cite an exercise by its number N.k" in p for p in found)


def test_the_appendix_numbers_its_exercises_by_its_letter():
    appendix = Page("chapters/appendix-t.qmd", "appendix", "A", "T")
    text = "# T\n\n### Exercise A.1: translate\n\n### Exercise A.2: audit\n\nAs Exercise A.1 did.\n"
    assert problems(text, appendix) == []


@pytest.mark.parametrize("words", ["the source", "The sources", "the source's exercise"])
def test_the_source_in_prose_is_reported(words):
    found = problems(CLEAN + f"\nAs in {words} we follow.\n")
    assert len(found) == 1 and "in text the reader sees" in found[0]


def test_the_source_inside_code_spans_is_not_prose():
    assert problems(CLEAN + "\nCall `the source` here.\n") == []


def test_a_chapter_must_open_with_why_and_end_with_summary_then_exercises():
    swapped = CLEAN.replace("## Summary\n\nShort.\n\n", "").replace(
        "### Exercise 3.2: a second one", "### Exercise 3.2: a second one\n\n## Summary\n"
    )
    assert any("should end with 'Summary' and then 'Exercises'" in p for p in problems(swapped))
    no_why = CLEAN.replace("## Why this chapter matters", "## Motivation")
    assert any("first section should be 'Why this chapter matters'" in p for p in problems(no_why))
    no_goals = CLEAN.replace("## Learning objectives", "## Goals")
    assert any("no 'Learning objectives'" in p for p in problems(no_goals))


def test_the_structure_rule_is_for_numbered_chapters_only():
    preface = Page("index.qmd", "front", None, "Preface")
    assert problems("# Preface\n\nText.\n", preface) == []


def test_wording_put_into_a_dict_the_text_reads_is_reported():
    text = CLEAN.replace('share = f"{rate:.0%}"', 'share = f"{rate:.0%}"\nN = {}\nN["w"] = "rose" if rate else "fell"')
    found = problems(text + "\nIt `{python} N['w']`.\n")
    assert len(found) == 1 and "N chooses the page's wording with if/else" in found[0]
