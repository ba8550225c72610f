"""The light and dark toggle of the pandoc site (issue 54, item 6), on a small book built by the pandoc backend.

A page follows the system's colour scheme until the reader presses the
toggle (beside the book's title at 1280 px, in the top bar at 390 px); the
choice then holds on every page of the book and after a reload, kept in
localStorage (``setUpSchemeToggle`` in ``assets/book.js``). The page's head
applies it before the body is parsed (``assets/book.html``), so a page never
shows the other scheme first. The book's figures, SVGs that follow the
colour scheme, follow the choice as they follow the system setting.
"""

from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")

import nbformat
import pytest
from browser.sitekit import SIZES, Tab, fixture_site, served

from rlbook.figures import style

CHAPTER = """# A chapter {#sec-a}

## A figure {#sec-a-figure}

```{python}
#| label: fig-one
#| fig-cap: "One panel."
#| fig-alt: "A line chart."
draw()
```
"""
OTHER = "# Another chapter {#sec-b}\n\nThe next page of the book.\n"
AT_BODY = """new MutationObserver((_, watching) => {
  if (!document.body) return;
  window.schemeAtBody = document.documentElement.dataset.scheme || 'none';
  watching.disconnect();
}).observe(document, {childList: true, subtree: true});"""
"""Records the page's chosen scheme at the moment its body is first parsed: before anything can be drawn."""


def _panel() -> str:
    with matplotlib.rc_context():
        style.style()
        fig, ax = style.panel()
        ax.plot([0, 10, 20, 30], [0.3, 0.4, 0.45, 0.5], color=style.series_colours(["main"])["main"])
        ax.set(xlabel="training step", ylabel="expected reward")
        out = io.StringIO()
        fig.savefig(out, format="svg")
        matplotlib.pyplot.close(fig)
    return out.getvalue()


@pytest.fixture(scope="module")
def origin(tmp_path_factory):
    """Two chapters rendered as a site, the first with a figure, served on 127.0.0.1."""
    figure = nbformat.v4.new_output("display_data", data={"image/svg+xml": _panel(), "text/plain": "<Figure>"})
    site = fixture_site(tmp_path_factory.mktemp("book"), {"01-a": CHAPTER, "02-b": OTHER}, {("01-a", 0): [figure]})
    with served(site) as base:
        yield base


@pytest.fixture
def reader(browser, origin):
    """A tab on the book whose system asks for ``scheme``: ``reader(size, scheme)``; fails on any page problem."""
    tabs: list[Tab] = []

    def make(size: str, scheme: str) -> Tab:
        tabs.append(Tab(browser, origin, SIZES[size], scheme))
        tabs[-1].context.add_init_script(AT_BODY)
        return tabs[-1]

    yield make
    problems = [p for t in tabs for p in t.problems]
    for t in tabs:
        t.close()
    assert not problems, problems


def _seen(page) -> dict:
    """The scheme the page shows: its background, the toggle's state, the figure's brightness, and what the
    page's head had chosen before the body was parsed."""
    from PIL import Image, ImageStat

    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    figure = page.locator("main figure img")
    brightness = None
    if figure.count():
        shot = Image.open(io.BytesIO(figure.first.screenshot())).convert("L")
        brightness = "light" if ImageStat.Stat(shot).mean[0] / 255 > 0.85 else "dark"
    return {
        "page": "dark" if background == "rgb(21, 24, 28)" else "light" if background == "rgb(255, 255, 255)" else None,
        "toggle": "dark"
        if page.locator(".scheme-toggle").filter(visible=True).get_attribute("aria-pressed") == "true"
        else "light",
        "figure": brightness,
        "at body": page.evaluate("window.schemeAtBody"),
    }


def _other(scheme: str) -> str:
    return "dark" if scheme == "light" else "light"


@pytest.mark.parametrize("system", ["light", "dark"])
@pytest.mark.parametrize("size", list(SIZES))
def test_the_toggle_overrides_the_system_on_every_page_and_after_a_reload(reader, origin, size, system):
    t = reader(size, system)
    t.open(origin + "chapters/01-a.html")
    assert t.page.locator(".scheme-toggle").filter(visible=True).count() == 1
    assert _seen(t.page) == {"page": system, "toggle": system, "figure": system, "at body": "none"}
    t.page.locator(".scheme-toggle").filter(visible=True).click()
    chosen = _other(system)
    assert _seen(t.page) == {"page": chosen, "toggle": chosen, "figure": chosen, "at body": "none"}
    assert t.page.evaluate("localStorage.getItem('rlbook-scheme')") == chosen
    t.open(origin + "chapters/02-b.html")
    assert _seen(t.page) == {"page": chosen, "toggle": chosen, "figure": None, "at body": chosen}
    t.open(origin + "chapters/01-a.html")
    t.page.reload()
    assert _seen(t.page) == {"page": chosen, "toggle": chosen, "figure": chosen, "at body": chosen}


@pytest.mark.parametrize("size", list(SIZES))
def test_pressed_again_the_toggle_gives_the_page_back_to_the_system(reader, origin, size):
    t = reader(size, "light")
    t.open(origin + "chapters/01-a.html")
    t.page.locator(".scheme-toggle").filter(visible=True).click()
    t.page.locator(".scheme-toggle").filter(visible=True).click()
    assert t.page.evaluate("localStorage.getItem('rlbook-scheme')") is None
    t.page.reload()
    assert _seen(t.page)["page"] == "light"
    t.page.emulate_media(color_scheme="dark")  # the system turns dark: with no choice made, the page follows
    assert _seen(t.page) == {"page": "dark", "toggle": "dark", "figure": "dark", "at body": "none"}
