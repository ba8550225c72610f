"""rlbook.publish.page_rules: a chapter page loads its facts once and only refers to them."""

from __future__ import annotations

import pytest

from rlbook.publish.config import Page
from rlbook.publish.page_rules import page_rule_problems

PAGE = Page("chapters/01-a.qmd", "main", "1", "A")
GOOD = """# A {#sec-a}

```{python}
#| include: false
from rlbook import book
F = book.load("loop")
S = F.by_seed[0]
```

The rate is `{python} F.rate`, on `{python} S.kinds["uncertain"]` sums.

```{python}
figures.plot(F.curve);
```

## Exercises

```{python}
def my_answer(x):
    return None
```
"""


def test_a_page_on_its_facts_is_clean():
    assert page_rule_problems(PAGE, GOOD) == []


def test_computed_inline_values_are_refused():
    text = GOOD.replace("`{python} F.rate`", '`{python} f"{F.rate:.2f}"`').replace(
        '`{python} S.kinds["uncertain"]`', "`{python} len(world.VOCAB)`"
    )
    problems = page_rule_problems(PAGE, text)
    assert len(problems) == 2 and all("not a reference into the facts" in p for p in problems)
    assert "chapters/01-a.qmd:10:" in problems[0]


def test_a_hidden_cell_that_computes_an_assert_and_a_helper_are_refused():
    text = GOOD.replace(
        "```{python}\nfigures.plot",
        "```{python}\n#| include: false\nassert F.rate > 0\n```\n\n```{python}\nhelper = lambda x: x\nfigures.plot",
    )
    problems = page_rule_problems(PAGE, text)
    assert any("only words the facts' choices" in p for p in problems)
    assert any("an assert on the page" in p for p in problems)
    assert any("a helper defined on the page" in p for p in problems)


def test_a_second_cell_loading_facts_is_refused():
    text = GOOD.replace(
        "```{python}\nfigures.plot", '```{python}\n#| include: false\nG = book.load("x")\n```\n\nfigures.plot'
    )
    assert any("one hidden cell that loads its facts" in p for p in page_rule_problems(PAGE, text))


WORDING = """```{python}
#| include: false
takeover = F.say("takeover", every="On every seed.", some="On {taken}, with `exploit`.")
```

The loophole: `{python} takeover` And a law.`{python} F.law("fail-open-pays")`

"""


def test_a_wording_cell_and_claim_marks_are_allowed_and_its_names_are_references():
    text = GOOD.replace("```{python}\nfigures.plot", WORDING + "```{python}\nfigures.plot")
    assert page_rule_problems(PAGE, text) == []


@pytest.mark.parametrize(
    "words",
    [
        'F.say("takeover", every=F.rate)',  # a value where the page's words go
        'F.say("takeover", every="On " + "every seed.")',  # words computed
        'F.say(name, every="x")',  # a choice not named by a constant
        'F.phrases("takeover")',  # another call
    ],
)
def test_a_wording_cell_that_computes_is_refused(words):
    text = GOOD.replace("```{python}\nfigures.plot", WORDING.replace(WORDING.split("= ", 1)[1].split("\n")[0], words)
                        + "```{python}\nfigures.plot")  # fmt: skip
    assert any("only words the facts' choices" in p for p in page_rule_problems(PAGE, text))


def test_a_mark_with_a_computed_name_is_not_a_reference():
    text = GOOD.replace("`{python} F.rate`", '`{python} F.law("a" + "b")`')
    assert any("not a reference into the facts" in p for p in page_rule_problems(PAGE, text))


def test_a_page_without_facts_is_refused():
    problems = page_rule_problems(PAGE, "# A\n\nText `{python} x`.\n")
    assert any("0 hidden cell" in p for p in problems) and any("no facts loaded" in p for p in problems)
