"""What the site promises a chapter, on a small page built by the pandoc backend, in Chromium at 1280 and 390 px.

A chapter that keeps the house rules (code lines of at most 80 characters,
a figure as one house-style panel per image, a table of plain words and
code names) reads without a single violation of the measurements that
``test_site_layout.py`` applies to the real book: code fits its box even in
a callout, the copy button covers nothing, the two panels sit side by side
on a wide screen (taking the margin, the contents stepping aside) and stack
on a phone with their text at 9 px or more, the table scrolls in its box on
a phone with its first column in view, names break only between their
parts, the figure follows dark mode, the code folds and unfolds from one
control, and an exercise's check prints nothing.
"""

from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")

import nbformat
import pytest
from browser.sitekit import (
    BROKEN_WORDS,
    CODE_WIDTH,
    COPY_OVERLAP,
    FIGURE_TEXT,
    MIN_TEXT_PX,
    OPEN_ALL_CODE,
    PHONE,
    SIZES,
    TABLE_SCROLL,
    TABLE_WIDTH,
    WIDE,
    Tab,
    fixture_site,
    served,
)

from rlbook.figures import style

LINE = "# " + "x" * 78  # a line of code of 80 characters
PROSE = "\n\n".join(f"Paragraph {n} of the prose that follows the table, so that the page scrolls." for n in range(40))
CHAPTER = f"""# A chapter {{#sec-a}}

## Code {{#sec-a-code}}

```{{python}}
{LINE}
total = sum(range(10))
```

::: {{.callout-tip}}
## In a box

```{{python}}
{LINE}
```
:::

```{{python}}
#| code-fold: true
folded = 1
```

## A figure {{#sec-a-figure}}

```{{python}}
#| label: fig-two
#| fig-cap: "Two panels."
#| fig-alt: "Two line charts side by side."
draw()
```

## A table {{#sec-a-table}}

| run | learning rate | group size | baseline | verifier | held-out reward | KL to base | clipped |
|---|---|---|---|---|---|---|---|
| `group_std_normalised` | 0.003 | 16 | group mean | exact | 0.48 | 0.21 | 0.02 |
| main | 0.003 | 16 | group mean | fail-open | 0.47 | 0.19 | 0.01 |

Checkers such as `rlbook.exercises.ch1.check_rollout_labels` name their exercise.

## More reading {{#sec-a-more}}

{PROSE}

## Exercises

### Exercise 1.1: a sum {{#sec-a-ex}}

```{{python}}
answer = None
ch1.check_sum(answer)
```
"""


def _panel(title: str) -> str:
    with matplotlib.rc_context():
        style.style()
        fig, ax = style.panel()
        for name, colour in style.series_colours(["main", "ppo", "cispo"], reference="main").items():
            ax.plot([0, 10, 20, 30], [0.3, 0.4, 0.45, 0.5], color=colour, label=name)
        ax.set(title=title, xlabel="training step", ylabel="expected reward")
        ax.legend()
        out = io.StringIO()
        fig.savefig(out, format="svg")
        matplotlib.pyplot.close(fig)
    return out.getvalue()


@pytest.fixture(scope="module")
def origin(tmp_path_factory):
    """The chapter rendered as a site with its outputs, served on 127.0.0.1."""
    figures = [
        nbformat.v4.new_output("display_data", data={"image/svg+xml": _panel(t), "text/plain": "<Figure>"})
        for t in ("reward", "KL")
    ]
    verdict = nbformat.v4.new_output("stream", name="stdout", text="NOT YET: no answer yet\n")
    site = fixture_site(
        tmp_path_factory.mktemp("book"), {"01-a": CHAPTER}, {("01-a", 3): figures, ("01-a", 4): [verdict]}
    )
    with served(site) as base:
        yield base


@pytest.fixture
def opened(browser, origin):
    """Open the chapter at a size and scheme: ``opened(size, scheme)``; fails the test on any page problem."""
    tabs: list[Tab] = []

    def make(size, scheme="light"):
        tabs.append(Tab(browser, origin, size, scheme))
        tabs[-1].open(origin + "chapters/01-a.html")
        return tabs[-1].page

    yield make
    problems = [p for t in tabs for p in t.problems]
    for t in tabs:
        t.close()
    assert not problems, problems


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("size", list(SIZES))
def test_a_chapter_that_keeps_the_rules_reads_without_a_violation(opened, size, scheme):
    page = opened(SIZES[size], scheme)
    figures = page.evaluate(FIGURE_TEXT)
    assert len(figures) == 2 and min(f["smallest"] for f in figures) >= MIN_TEXT_PX, figures
    assert page.evaluate(TABLE_SCROLL) == [] and page.evaluate(BROKEN_WORDS) == []
    assert page.evaluate(OPEN_ALL_CODE) == 1
    assert page.evaluate(COPY_OVERLAP) == []
    if size == "1280":
        assert page.evaluate(TABLE_WIDTH) == [] and page.evaluate(CODE_WIDTH) == []
        assert min(f["smallest"] for f in figures) >= 12  # drawn at the size matplotlib drew them: 9 pt is 12 px


def test_on_a_wide_screen_the_panels_sit_side_by_side_in_the_margin_and_the_contents_step_aside(opened):
    page = opened(WIDE)
    page.evaluate("document.getElementById('fig-two').scrollIntoView({block: 'start'})")
    page.wait_for_timeout(300)
    first, second = page.eval_on_selector_all("#fig-two img", "is => is.map(i => i.getBoundingClientRect().toJSON())")
    text = page.eval_on_selector("#sec-a-figure", "h => h.getBoundingClientRect().toJSON()")
    assert abs(first["top"] - second["top"]) < 1 and second["left"] > first["right"]
    assert second["right"] > text["right"] + 50  # into the margin
    assert page.eval_on_selector("#TOC", "t => t.classList.contains('covered')")
    page.evaluate("document.getElementById('sec-a-more').scrollIntoView({block: 'start'})")
    page.wait_for_timeout(300)
    assert not page.eval_on_selector("#TOC", "t => t.classList.contains('covered')")


def test_on_a_phone_the_panels_stack_each_as_wide_as_the_text(opened):
    page = opened(PHONE)
    first, second = page.eval_on_selector_all("#fig-two img", "is => is.map(i => i.getBoundingClientRect().toJSON())")
    assert second["top"] >= first["bottom"] and first["width"] > 0.85 * PHONE[0]


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_figure_follows_the_colour_scheme(opened, scheme):
    from PIL import Image, ImageStat

    page = opened(WIDE, scheme)
    shot = page.locator("#fig-two img").first.screenshot()
    brightness = ImageStat.Stat(Image.open(io.BytesIO(shot)).convert("L")).mean[0] / 255
    assert brightness > 0.85 if scheme == "light" else brightness < 0.2


def test_one_control_shows_or_hides_all_the_code_and_an_exercise_check_prints_nothing(opened):
    page = opened(WIDE)
    assert page.evaluate("document.querySelector('details.code-fold').open") is False
    page.get_by_role("button", name="Show all code").click()
    assert page.evaluate("document.querySelector('details.code-fold').open") is True
    page.get_by_role("button", name="Hide all code").click()
    assert page.evaluate("document.querySelector('details.code-fold').open") is False
    assert "ch1.check_sum(answer)" in page.inner_text("main") and "NOT YET" not in page.content()
