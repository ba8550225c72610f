"""Search on a small site built by the pandoc backend, in Chromium: what a reader finds and in which order.

The site is rendered by :func:`rlbook.publish.site.render_site` from two
chapters given as executed notebooks (``sitekit.fixture_site``: no kernel runs), and searched through
the search box of ``assets/book.js``: only prose is found, each result is
credited to the section that holds it, a heading weighs more than body
text, a page lists its best section first, and "pass@k" finds its family
(pass@1, pass@4). The real book's terms are tested in ``test_site_layout.py``.
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
print("quuxly printed: pass@k CISPO zero variance")
```

## Counting right answers {#sec-loop-count}

We compare pass@1 with pass@4 on the held-out sums, and every answer that passes gets a reward.
"""
EXPLORE = """# Exploration {#sec-explore}

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
        t.page.fill(".pagefind-ui__search-input", term)
        # Done when the message no longer says it is searching and every result listed has its link.
        t.page.wait_for_function(
            """() => {
            const message = document.querySelector('.pagefind-ui__message');
            const results = [...document.querySelectorAll('.pagefind-ui__result')];
            return message && !/Searching/.test(message.textContent)
                && results.every(r => r.querySelector('.pagefind-ui__result-link'));
        }""",
            timeout=20_000,
        )
        shown = t.page.eval_on_selector_all(
            ".pagefind-ui__result",
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
