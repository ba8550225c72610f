"""Boxes that scroll sideways on a phone, and the cue that says so, on a small page built by the pandoc backend.

At 390 px a line of code of 80 characters, its printed output, a long
display formula, a long inline formula, a table of nine columns and the
table of a live panel (built by a script after the page has loaded, as the
workshop builds chapter 3's advantages) are all wider than the text: each
scrolls inside its own box, never the page, and shows a shaded edge where
more of it is hidden (``setUpScrollCues`` in ``assets/book.js``,
``.scroll-frame`` in ``assets/book.css``). Issue 57 found tables, code and
formulas on the real book's phone pages that scrolled, or were cut off,
with nothing to say so; ``test_site_layout.py`` measures every page of the
real book with the same script (``sitekit.SCROLL_CUES``). At 1280 px all of
them fit, and no cue shows. On a phone an inline formula, a box of its own
there, is not cut at its top or bottom (issue 57: the top of every italic T
was), and a table that scrolls anyway gives its column of long text the room
to be read in a few lines.
"""

from __future__ import annotations

import io

import nbformat
import pytest
from browser.sitekit import INLINE_MATH_CUT, PHONE, SCROLL_CUES, WIDE, Tab, fixture_site, served

LINE = "# " + "x" * 78  # a line of code of 80 characters (so is the print below): it fits at 1280 px, not at 390
PROSE = "\n\n".join(f"Paragraph {n} of the prose that follows, so that the page scrolls." for n in range(30))
REASON = "step 1 7 ≠ 5+1 invalid; step 2 12 ≠ 7+6 invalid"
"""A cell of long text (chapter 2's scorer's reasons): squeezed to its longest word, its row was 200 px tall."""
# The panel's root is written with single quotes: the build takes class="rlbook-workshop" for the book's own
# workshop and would write the workshop's files, which need the whole book.
PANEL = """```{=html}
<div class='rlbook-workshop' data-panel="fixture"></div>
<script>
  // A live panel as the workshop builds it, after the page has loaded: a table in a box that scrolls
  // (chapter 3's advantages; the box's overflow is workshop.css's), rebuilt wider when the reader types.
  window.addEventListener("load", () => setTimeout(() => {
    const row = (n) => "<tr>" + Array.from({length: n}, (_, i) => "<td>−0.577" + i + "</td>").join("") + "</tr>";
    const root = document.querySelector("[data-panel=fixture]");
    root.innerHTML = '<div class="rw-panel"><div class="rw-scroll" style="overflow-x: auto"><table class="rw-advantages">' + row(6) +
      "</table></div></div>";
    window.widenPanel = () => { root.querySelector("table").innerHTML = row(14); };
  }, 300));
</script>
```"""
CHAPTER = f"""# A chapter {{#sec-a}}

## Code {{#sec-a-code}}

```{{python}}
{LINE}
print("{"y" * 71}")
```

## A formula {{#sec-a-math}}

$$
\\mathcal{{L}}(\\theta) = -\\frac{{1}}{{N}} \\sum_{{i=1}}^{{N}} \\sum_{{t=1}}^{{T_i}} A_i
\\log \\pi_\\theta(y_{{i,t}} \\mid x, y_{{i,<t}}) + \\beta \\, \\mathrm{{KL}}(\\pi_\\theta \\,\\|\\, \\pi_{{\\mathrm{{ref}}}})
$$

## Inline formulas {{#sec-a-inline}}

Sampling at temperature $T$ divides the scores by $T$; at $T \\neq 1$ the policy is another, and
$\\mathcal{{L}}(\\theta) = -\\frac{{1}}{{N}} \\sum_{{i=1}}^{{N}} A_i \\log \\pi_\\theta(y_i \\mid x) + \\beta \\, \\mathrm{{KL}}(\\pi_\\theta \\,\\|\\, \\pi_{{\\mathrm{{ref}}}})$
is one long formula in a sentence.

## A table {{#sec-a-table}}

| run | learning rate | group size | baseline | verifier | held-out reward | KL to base | clipped | the scorer's reason |
|---|---|---|---|---|---|---|---|---|
| main | 0.003 | 16 | group mean | exact | 0.48 | 0.21 | 0.02 | {REASON} |
| ppo | 0.003 | 16 | group mean | fail-open | 0.47 | 0.19 | 0.01 | {REASON} |

## A live panel {{#sec-a-panel}}

{PANEL}

## More reading {{#sec-a-more}}

{PROSE}
"""
KINDS = {"code", "output", "math", "inline", "table", "panel"}
"""The kinds of box the chapter holds, as book.js names their frames."""

CUED = """() => [...document.querySelectorAll('main .scroll-frame')].map(f => ({
  kind: [...f.classList].find(c => ['code', 'output', 'math', 'inline', 'table', 'panel'].includes(c)),
  left: f.classList.contains('more-left'), right: f.classList.contains('more-right')}))"""
"""Every frame on the page: its kind and the edges it shades."""


@pytest.fixture(scope="module")
def origin(tmp_path_factory):
    """The chapter rendered as a site, its code cell with the output it prints, served on 127.0.0.1."""
    printed = nbformat.v4.new_output("stream", name="stdout", text="y" * 78 + "\n")
    site = fixture_site(tmp_path_factory.mktemp("book"), {"01-a": CHAPTER}, {("01-a", 0): [printed]})
    with served(site) as base:
        yield base


@pytest.fixture
def opened(browser, origin):
    """Open the chapter at a size and scheme: ``opened(size, scheme)``; fails the test on any page problem."""
    tabs: list[Tab] = []

    def make(size, scheme="light"):
        tabs.append(Tab(browser, origin, size, scheme))
        tabs[-1].open(origin + "chapters/01-a.html")
        tabs[-1].page.wait_for_selector(".rw-scroll table")  # the live panel, built after the page loaded
        tabs[-1].page.evaluate(SCROLL_CUES)  # waits for the page to lay out and frame its boxes
        return tabs[-1].page

    yield make
    problems = [p for t in tabs for p in t.problems]
    for t in tabs:
        t.close()
    assert not problems, problems


def _frame(page, kind: str):
    return page.locator(f"main .scroll-frame.{kind}").first


def _settle(page) -> None:
    page.evaluate("new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_on_a_phone_every_wide_box_scrolls_in_its_own_box_and_shows_a_cue_on_its_cut_edge(opened, scheme):
    page = opened(PHONE, scheme)
    assert page.evaluate(SCROLL_CUES) == []
    frames = page.evaluate(CUED)
    assert {f["kind"] for f in frames} == KINDS, frames
    assert all(f["right"] and not f["left"] for f in frames), frames
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE[0]


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_the_cue_is_drawn_where_the_box_is_cut(opened, scheme, kind):
    from PIL import Image, ImageChops, ImageStat

    page = opened(PHONE, scheme)
    frame = _frame(page, kind)
    frame.scroll_into_view_if_needed()
    box = frame.bounding_box()
    edge = {"x": box["x"] + box["width"] - 30, "y": box["y"], "width": 30, "height": min(box["height"], 200)}
    cued = Image.open(io.BytesIO(page.screenshot(clip=edge))).convert("L")
    frame.evaluate("f => f.classList.remove('more-right')")
    plain = Image.open(io.BytesIO(page.screenshot(clip=edge))).convert("L")
    assert ImageStat.Stat(ImageChops.difference(cued, plain)).mean[0] > 2, f"no cue to be seen on the {kind}"


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_scrolled_to_its_end_a_box_shades_the_edge_where_it_began(opened, kind):
    page = opened(PHONE)
    frame = _frame(page, kind)
    frame.evaluate("f => { const box = f.firstElementChild; box.scrollLeft = box.scrollWidth; }")
    _settle(page)
    assert frame.evaluate("f => [f.classList.contains('more-left'), f.classList.contains('more-right')]") == [
        True,
        False,
    ]
    if kind == "table":  # its first column stays in view, with the shadow on its right edge
        shadow = frame.evaluate("f => getComputedStyle(f.querySelector('tr > :first-child')).boxShadow")
        assert shadow != "none", shadow
    else:
        assert frame.evaluate("f => getComputedStyle(f, '::before').opacity") == "1"


def test_a_box_that_scrolls_takes_the_keyboard(opened):
    page = opened(PHONE)
    box = _frame(page, "code").locator("pre")
    assert box.get_attribute("tabindex") == "0"
    box.focus()
    page.keyboard.press("ArrowRight")
    page.wait_for_function("() => document.activeElement.scrollLeft > 0", timeout=5_000)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_on_a_wide_screen_everything_fits_and_no_cue_shows(opened, scheme):
    page = opened(WIDE, scheme)
    assert page.evaluate(SCROLL_CUES) == []
    assert not [f for f in page.evaluate(CUED) if f["left"] or f["right"]]


def test_a_phone_turned_wide_drops_the_cues_and_turned_back_shows_them(opened):
    page = opened(PHONE)
    assert {f["kind"] for f in page.evaluate(CUED) if f["right"]} == KINDS
    page.set_viewport_size({"width": WIDE[0], "height": WIDE[1]})
    _settle(page)
    assert not [f for f in page.evaluate(CUED) if f["left"] or f["right"]]
    page.set_viewport_size({"width": PHONE[0], "height": PHONE[1]})
    _settle(page)
    assert {f["kind"] for f in page.evaluate(CUED) if f["right"]} == KINDS


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_on_a_phone_an_inline_formula_is_cut_neither_at_its_top_nor_at_its_bottom(opened, scheme):
    from PIL import Image, ImageChops

    page = opened(PHONE, scheme)
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE[0]
    assert page.evaluate(INLINE_MATH_CUT) == []
    # Drawn as it is and drawn with nothing clipped, each short formula looks the same, its T's bar included.
    formulas = page.locator("#sec-a-inline ~ p math")
    assert formulas.count() == 4
    for k in range(3):
        math = formulas.nth(k)
        math.scroll_into_view_if_needed()
        box = math.bounding_box()
        around = {"x": box["x"] - 2, "y": box["y"] - 10, "width": box["width"] + 4, "height": box["height"] + 20}
        drawn = Image.open(io.BytesIO(page.screenshot(clip=around))).convert("L")
        math.evaluate("m => { m.style.overflow = 'visible'; }")
        whole = Image.open(io.BytesIO(page.screenshot(clip=around))).convert("L")
        math.evaluate("m => { m.style.overflow = ''; }")
        assert ImageChops.difference(drawn, whole).getbbox() is None, f"formula {k + 1} is cut"
    # The long one scrolls in its box: the page does not widen, and its frame shows the cue.
    assert formulas.nth(3).evaluate("m => m.scrollWidth > m.clientWidth && m.parentElement.matches('.more-right')")


def test_a_live_panel_built_after_the_page_loaded_shows_its_cue_and_follows_its_table(opened):
    page = opened(PHONE)
    frame = _frame(page, "panel")
    assert frame.evaluate("f => [f.classList.contains('more-left'), f.classList.contains('more-right')]") == [
        False,
        True,
    ]
    assert frame.locator(".rw-scroll").get_attribute("tabindex") == "0"
    page.evaluate("widenPanel()")  # the reader types: the panel rebuilds its table, wider
    page.wait_for_function(
        "() => { const b = document.querySelector('.rw-scroll'); return b.scrollWidth > 2 * b.clientWidth; }"
    )
    frame.evaluate("f => { const box = f.firstElementChild; box.scrollLeft = box.scrollWidth; }")
    _settle(page)
    assert frame.evaluate("f => [f.classList.contains('more-left'), f.classList.contains('more-right')]") == [
        True,
        False,
    ]


def test_on_a_phone_a_table_that_scrolls_anyway_gives_its_long_text_a_readable_column(opened):
    page = opened(PHONE)
    cells = page.locator("#sec-a-table ~ .table-float td.long-text, #sec-a-table ~ div td.long-text")
    assert cells.count() == 2  # the two reasons, and no short cell
    width, em, height, line = cells.first.evaluate(
        "c => [c.getBoundingClientRect().width, parseFloat(getComputedStyle(c).fontSize),"
        " c.parentElement.getBoundingClientRect().height, parseFloat(getComputedStyle(c).lineHeight)]"
    )
    assert width >= 13 * em - 1 and height <= 3 * line  # squeezed to its longest word, it took five lines
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE[0]
    numbers = page.locator("#sec-a-table ~ div td, #sec-a-table ~ .table-float td").filter(has_text="0.003").first
    assert numbers.evaluate("c => c.getBoundingClientRect().width") < 8 * em  # a short column keeps its width
