"""The whole book's pandoc site in headless Chromium: the site that ``make book`` builds, built once per session.

The book is built with ``rlbook build`` (pandoc backend) from a copy of the
repository's pages, with the run cache of the repository (``RLBOOK_CACHE``, or
its ``.rlbook-cache``), and served over HTTP on 127.0.0.1 as a reader would
serve it, since search fetches its index. Every request that does not go to
that server is refused and counts as a failure. A screenshot of the top of
every page, at 1280 and 390 px wide and in both colour schemes, is written to
``_build/test-output/screenshots/`` in the repository (``RLBOOK_SCREENSHOTS``
moves it), where ``.ci/run`` says it keeps them.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from browser.sitekit import PHONE, SCREENSHOTS, WIDE, Tab, shot_name

from rlbook.publish.holes import site_holes
from rlbook.publish.reading import MINUTES_PER_CHAPTER, reading_minutes


def test_the_published_site_has_no_hole(site):
    assert site_holes(site) == []


def test_every_chapter_reads_in_35_minutes_or_less_outside_its_boxes_and_exercises(site, pages):
    chapters = [name for name in pages if re.fullmatch(r"chapters/(\d\d-.*|appendix-.*)\.html", name)]
    assert len(chapters) >= 9
    minutes = {name: round(reading_minutes((site / name).read_text(encoding="utf-8")), 1) for name in chapters}
    assert max(minutes.values()) <= MINUTES_PER_CHAPTER, minutes


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("size", [WIDE, PHONE], ids=["1280", "390"])
def test_every_page_loads_without_error_and_a_screenshot_of_it_is_kept(tab, server, pages, size, scheme):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    t = tab(size, scheme)
    for name in pages:
        t.open(server + name)
        t.page.wait_for_timeout(150)
        t.page.screenshot(path=str(SCREENSHOTS / shot_name(name, size, scheme)))
    assert len(list(SCREENSHOTS.glob(f"*-{size[0]}-{scheme}.png"))) >= len(pages)


def test_pages_opened_from_file_load_without_error_and_say_how_to_search(browser, site, pages):
    t = Tab(browser, "file://", WIDE)
    try:
        for name in pages:
            t.open((site / name).as_uri())
        assert "python -m http.server" in t.page.inner_text("#search")
    finally:
        t.close()
    assert not t.problems, t.problems


def test_a_search_result_opens_its_section(tab, server):
    t = tab()
    t.open(server + "index.html")
    t.page.fill(".search-input", "CISPO")
    t.page.wait_for_selector(".search-result-link", timeout=20_000)
    links = t.page.eval_on_selector_all(".search-result a[href]", "as => as.map(a => a.href)")
    sections = [url for url in links if urlsplit(url).fragment.startswith("sec-")]
    assert sections, links
    t.open(sections[0])
    anchor = urlsplit(sections[0]).fragment
    assert t.page.evaluate("id => !!document.getElementById(id)", anchor)
    assert t.page.evaluate("id => document.getElementById(id).getBoundingClientRect().top", anchor) < 200


def test_no_page_scrolls_sideways_on_a_phone(tab, server, pages):
    t = tab(PHONE)
    wide = {}
    for name in pages:
        t.open(server + name)
        width = t.page.evaluate("document.documentElement.scrollWidth")
        if width > PHONE[0]:
            wide[name] = (width, t.page.evaluate(WIDEST))
    assert not wide, wide


WIDEST = """() => [...document.querySelectorAll('main *')]
  .filter(e => e.getBoundingClientRect().right > innerWidth + 1)
  .slice(0, 3).map(e => e.tagName + '.' + e.className)"""


def test_on_a_phone_the_chapter_list_is_a_menu(tab, server):
    t = tab(PHONE)
    t.open(server + "chapters/02-outcome-process-rewards.html")
    assert not t.page.is_visible("#sidebar")
    t.page.click(".menu-toggle")
    assert t.page.is_visible("#sidebar") and t.page.get_attribute(".menu-toggle", "aria-expanded") == "true"
    following = t.page.eval_on_selector(
        "#sidebar a.current", "a => a.closest('li').nextElementSibling.querySelector('a').getAttribute('href')"
    )
    t.page.click(f"#sidebar a[href='{following}']")
    t.page.wait_for_url(f"**/chapters/{following}")


def test_on_a_wide_screen_the_contents_stay_in_view_and_mark_the_section_being_read(tab, server):
    t = tab(WIDE)
    t.open(server + "chapters/01-rl-loop.html")
    links = t.page.eval_on_selector_all("#TOC a[href^='#']", "as => as.map(a => a.hash.slice(1))")
    target = links[len(links) // 2]
    t.page.evaluate("id => document.getElementById(id).scrollIntoView()", target)
    t.page.wait_for_timeout(300)
    box = t.page.eval_on_selector("#TOC", "e => { const r = e.getBoundingClientRect(); return [r.top, r.bottom]; }")
    assert box[0] >= 0 and box[0] < 100, box
    assert t.page.eval_on_selector_all("#TOC a.active", "as => as.map(a => a.hash.slice(1))") == [target]


def test_every_code_block_has_a_copy_button_that_copies_its_code(tab, server):
    t = tab(WIDE, permissions=["clipboard-read", "clipboard-write"])
    t.open(server + "chapters/01-rl-loop.html")
    blocks = t.page.evaluate("""() => [...document.querySelectorAll('main pre > code')]
        .filter(c => !c.parentElement.closest('.cell-output') && !c.parentElement.classList.contains('cell-output'))
        .map(c => !!c.closest('.code-block').querySelector(':scope > .copy-button'))""")
    assert blocks and all(blocks)
    first = t.page.locator(".code-block").filter(visible=True).first  # one a reader sees without opening a fold
    first.locator(".copy-button").click()
    assert t.page.evaluate("navigator.clipboard.readText()") == first.locator("code").inner_text().rstrip("\n")
    assert first.locator(".copy-button").inner_text() == "Copied"


CONTRAST = """() => {
  const rgb = s => (s.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => {
    const f = c => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const background = e => {
    const layers = [];
    for (let n = e; n; n = n.parentElement) {
      const c = rgb(getComputedStyle(n).backgroundColor);
      if (c.length === 4 && c[3] === 0) continue;
      layers.push(c);
      if (c.length === 3 || c[3] === 1) break;
    }
    let out = [255, 255, 255];
    for (const c of layers.reverse()) {
      const a = c.length === 4 ? c[3] : 1;
      out = out.map((v, i) => c[i] * a + v * (1 - a));
    }
    return out;
  };
  const worst = [];
  for (const e of document.querySelectorAll('body *')) {
    if (e.closest('svg, math, .rlbook-workshop') || !e.getClientRects().length) continue;
    const own = [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
    if (!own || getComputedStyle(e).visibility === 'hidden') continue;
    const fg = lum(rgb(getComputedStyle(e).color)), bg = lum(background(e));
    const ratio = (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
    if (ratio < 4.5) worst.push([e.tagName + '.' + e.className, e.textContent.trim().slice(0, 30), ratio.toFixed(2)]);
  }
  return {body: lum(background(document.body)), worst: worst.slice(0, 8)};
}"""


@pytest.mark.parametrize("scheme", ["dark", "light"])
def test_text_contrast_is_at_least_4_5_to_1_and_the_dark_scheme_is_dark(tab, server, pages, scheme):
    t = tab(WIDE, scheme)
    for name in pages:
        t.open(server + name)
        result = t.page.evaluate(CONTRAST)
        assert (result["body"] < 0.05) if scheme == "dark" else (result["body"] > 0.9), (name, result)
        assert not result["worst"], (name, result["worst"])


class _Ids(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list) -> None:
        for key, value in attrs:
            if key in ("id", "name") and value:
                self.ids.add(value)


def test_every_internal_link_and_anchor_resolves(tab, server, site, pages):
    t = tab(WIDE)
    ids: dict[Path, set[str]] = {}
    broken = []
    for name in pages:
        t.open(server + name)
        for url in t.page.eval_on_selector_all("a[href]", "as => as.map(a => a.href)"):
            if not url.startswith(server):
                continue
            parts = urlsplit(url)
            target = site / unquote(parts.path[len(urlsplit(server).path) :])
            if target.is_dir():
                target = target / "index.html"
            if not target.is_file():
                broken.append(f"{name}: {url} (no such file)")
                continue
            if parts.fragment and target.suffix == ".html":
                if target not in ids:
                    parser = _Ids()
                    parser.feed(target.read_text(encoding="utf-8"))
                    ids[target] = parser.ids
                if unquote(parts.fragment) not in ids[target]:
                    broken.append(f"{name}: {url} (no such anchor)")
    assert not broken, broken[:10]
    assert re.search(r"notebooks/01-rl-loop\.ipynb", (site / "chapters" / "01-rl-loop.html").read_text())
