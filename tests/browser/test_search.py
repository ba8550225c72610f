"""Search on a small site built by the pandoc backend, in Chromium: what a reader finds and in which order.

The site is rendered by :func:`rlbook.publish.site.render_site` from two
chapters given as executed notebooks (``sitekit.fixture_site``: no kernel runs), and searched through
the search box of ``assets/book.js``: only prose is found, and a name that
only code holds finds nothing, though the prose holds words that begin like
it; each result is credited to the section that holds it, a heading weighs
more than body text, a page lists its best section first, a question is
searched by the words that carry it (not by "why", which every "Why this
chapter matters" heading holds), and "pass@k" finds its family (pass@1,
pass@4). The real book's terms are tested in ``test_site_layout.py``.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import nbformat
import pytest
from browser.sitekit import WIDE, Tab, fixture_site, served

LOOP = """# The loop {#sec-loop}

## Why this chapter matters {#sec-loop-why}

A policy writes answers and a verifier scores them.

```{python}
frobnicate = 256  # a constant for pass@k with CISPO and zero variance
PASSK_N = markdown_table(frobnicate)
print("quuxly printed: pass@k CISPO zero variance")
```

## Counting right answers {#sec-loop-count}

We compare pass@1 with pass@4 on the held-out sums, and every answer that passes gets a reward. Each row of
the table marks one sum, and the end-of-turn mark closes an answer.
"""
EXPLORE = """# Exploration {#sec-explore}

## Why this chapter matters {#sec-explore-why}

Why explore at all? Why does a policy that is always right learn nothing? This chapter says why.

## What a group tells us {#sec-explore-group}

A group of answers can be all right. Such a group has zero variance in its rewards, and the advantage then
vanishes; the next sections return to it. Losses such as CISPO keep every token's gradient.

## Groups with zero variance {#sec-zero-variance}

A group whose rewards are all equal gives its answers no advantage: the rewards have zero variance.

## The pass@k estimate {#sec-passk}

The *pass@k* of a prompt is the chance that at least one of k answers is right. It grows with k: a
policy that is right one time in ten has a pass@k near one for large k. We estimate pass@k from n samples
per prompt, and report pass@k for several values of k.

## pass@k after training {#sec-passk-after}

After training, pass@k rises for small k; pass@k for large k barely moves, as pass@k of the base already
came close to one, so pass@k at large k measures coverage: pass@k, pass@k, pass@k.

## Scaling advantages {#sec-explore-scale}

Some updates divide each advantage by the standard deviation of its group's rewards, which makes every
group's push the same size.
"""


@pytest.fixture(scope="module")
def origin(tmp_path_factory):
    """The two chapters rendered as a site and served on 127.0.0.1; yields the site's base URL."""
    printed = nbformat.v4.new_output("stream", name="stdout", text="quuxly printed: pass@k CISPO zero variance\n")
    site = fixture_site(
        tmp_path_factory.mktemp("book"), {"01-loop": LOOP, "02-explore": EXPLORE}, {("01-loop", 0): [printed]}
    )
    with served(site) as base:
        yield base


def search(browser, origin: str, term: str) -> list[list[str]]:
    """What the search box lists for ``term``: per result, its links as shown (page, then its sections)."""
    t = Tab(browser, origin, WIDE)
    try:
        t.open(origin + "index.html")
        t.page.fill(".search-input", term)
        # Done when the message says how many results this term found.
        t.page.wait_for_function(
            """t => { const m = document.querySelector('.search-message').textContent;
                      return /results? for/.test(m) && m.includes(t); }""",
            arg=term,
            timeout=20_000,
        )
        shown = t.page.eval_on_selector_all(
            ".search-result",
            """rs => rs.map(r =>
            [...r.querySelectorAll('a[href]')].map(a => a.getAttribute('href')))""",
        )
    finally:
        t.close()
    assert not t.problems, t.problems
    return [[_short(href) for href in links] for links in shown]


def _short(href: str) -> str:
    url = urlsplit(href)
    return Path(url.path).name + (f"#{url.fragment}" if url.fragment else "")


def test_code_and_printed_outputs_are_not_found(browser, origin):
    assert search(browser, origin, "frobnicate") == []
    assert search(browser, origin, "quuxly") == []


@pytest.mark.parametrize("name", ["markdown_table", "PASSK_N"])
def test_a_name_that_only_code_holds_finds_nothing_though_the_prose_has_words_like_it(browser, origin, name):
    # Issue 57: Pagefind, finding no page with the name, searched words that begin like it ("mark", "table",
    # "pass"): the prose of chapter 1 holds "marks", "mark", "table" and "passes".
    assert search(browser, origin, name) == []


def test_a_question_lists_the_section_on_its_subject_first_and_no_why_heading(browser, origin):
    # Issue 57: "why divide by standard deviation" listed every "Why this chapter matters" first.
    results = search(browser, origin, "why divide by standard deviation")
    assert results == [["02-explore.html", "02-explore.html#sec-explore-scale"]]
    assert search(browser, origin, "Why divide by the standard deviation?") == results


def test_a_question_of_question_words_alone_is_searched_as_typed(browser, origin):
    results = search(browser, origin, "why")
    assert sorted(links[:2] for links in results) == [
        ["01-loop.html", "01-loop.html#sec-loop-why"],
        ["02-explore.html", "02-explore.html#sec-explore-why"],
    ]


def test_a_term_taught_under_its_own_heading_is_listed_first_before_a_passing_mention(browser, origin):
    results = search(browser, origin, "zero variance")
    assert [links[0] for links in results] == ["02-explore.html"]  # not the code of chapter 1
    assert results[0][1:3] == ["02-explore.html#sec-zero-variance", "02-explore.html#sec-explore-group"]


def test_pass_at_k_finds_the_section_that_defines_it_first_and_pass_at_4_too(browser, origin):
    # Both sections are headed by the term: the first to teach it comes first, however often the second uses it.
    results = search(browser, origin, "pass@k")
    assert results[0][:3] == ["02-explore.html", "02-explore.html#sec-passk", "02-explore.html#sec-passk-after"]
    assert ["01-loop.html", "01-loop.html#sec-loop-count"] in [links[:2] for links in results]


def test_a_result_is_credited_to_the_section_whose_prose_names_it(browser, origin):
    results = search(browser, origin, "CISPO")
    assert results == [["02-explore.html", "02-explore.html#sec-explore-group"]]
