"""Labels numbered from the ``.qmd`` sources and references as text (rlbook.publish.nbrefs)."""

from __future__ import annotations

from rlbook.publish.config import Page
from rlbook.publish.nbrefs import citations, page_labels, prose_spans, resolve_crossrefs

CHAPTER = """\
# Loops {#sec-loops}

::: {.callout-note}
## Learning objectives
Not a section.
:::

## First {#sec-first}

```{python}
#| label: fig-one
plot()
```

```{python}
#| label: tbl-one
table()
```

![A picture](a.png){#fig-two}

```
## not a heading
```

## Second {#sec-second}
"""


def test_a_chapter_numbers_sections_figures_and_tables_as_the_website():
    labels = page_labels(Page("chapters/03-loops.qmd", "main", "3", "Loops"), CHAPTER)
    assert labels == {
        "fig-one": "Figure 3.1",
        "tbl-one": "Table 3.1",
        "fig-two": "Figure 3.2",
        "sec-loops": "Chapter 3",
        "sec-first": "Section 3.1",
        "sec-second": "Section 3.2",
    }


def test_an_appendix_is_lettered_and_an_unnumbered_page_keeps_its_titles():
    assert page_labels(Page("a.qmd", "appendix", "A", "T"), "# T {#sec-t}\n\n## S {#sec-s}\n") == {
        "sec-t": "Appendix A",
        "sec-s": "Section A.1",
    }
    assert page_labels(Page("p.qmd", "front", None, "P"), "# Preface {#sec-p .unnumbered}\n") == {"sec-p": "Preface"}


def test_references_in_code_are_left_alone():
    text = "See @fig-one.\n\n```python\nx = '@fig-one'\n```\n\nand `@fig-one`."
    assert (
        resolve_crossrefs(text, {"fig-one": "Figure 1.1"})
        == "See Figure 1.1.\n\n```python\nx = '@fig-one'\n```\n\nand `@fig-one`."
    )
    assert [("a `b` c")[a:b] for a, b in prose_spans("a `b` c")] == ["a ", " c"]


def test_citations_are_found_as_written_and_unknown_keys_and_emails_are_not():
    text = "As @a said [@a; @b, p. 3], not @zz nor me@a.org, and [@fig-x]."
    assert citations(text, {"a", "b"}) == ["[@a; @b, p. 3]", "@a"]
