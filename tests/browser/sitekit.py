"""The built site opened in Chromium, and what a reader sees of a page, measured there.

Shared by the site's browser tests (``test_site.py``, ``test_site_layout.py``;
their fixtures ``server``, ``pages`` and ``tab`` are in ``conftest.py``): a
tab that records every problem, the sizes a page is read at, and the
measurements, each a script run in the page that returns every violation it
finds with the page's element named, so a failing test lists them all at once.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
WIDE, PHONE = (1280, 900), (390, 844)
SIZES = {"1280": WIDE, "390": PHONE}
SCREENSHOTS = Path(os.environ.get("RLBOOK_SCREENSHOTS") or REPO / "_build" / "test-output" / "screenshots")
"""Where the screenshots go: a CI artefact (``.ci/run`` says so)."""
MIN_TEXT_PX = 9
"""The smallest text a figure may show, in CSS pixels at the size it is drawn (ARCHITECTURE.md, section 6)."""


class Tab:
    """A page in a fresh browser context that records console errors, failed requests and refused requests."""

    def __init__(self, browser, origin: str, size: tuple[int, int], scheme: str = "light", **context) -> None:
        self.context = browser.new_context(
            viewport={"width": size[0], "height": size[1]}, color_scheme=scheme, **context
        )
        self.problems: list[str] = []

        def route(r):
            if r.request.url.startswith(origin):
                r.continue_()
            else:
                self.problems.append(f"refused request for {r.request.url}")
                r.abort()

        self.context.route("**/*", route)
        self.page = self.context.new_page()
        self.page.on("console", lambda m: m.type == "error" and self.problems.append(f"console error: {m.text}"))
        self.page.on("pageerror", lambda e: self.problems.append(f"uncaught: {e}"))
        self.page.on("requestfailed", lambda r: self.problems.append(f"failed request: {r.url}"))
        self.page.on("response", lambda r: r.status >= 400 and self.problems.append(f"HTTP {r.status}: {r.url}"))

    def open(self, url: str) -> None:
        self.page.goto(url, wait_until="load")

    def close(self) -> None:
        self.context.close()


class QuietHandler(SimpleHTTPRequestHandler):
    """A static file server that keeps its access log to itself."""

    def log_message(self, *args) -> None:  # the server's access log would flood the test output
        pass


@contextlib.contextmanager
def served(site: Path) -> Iterator[str]:
    """``site`` served over HTTP on 127.0.0.1 (a free port) while the block runs; yields its base URL."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(site)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    finally:
        httpd.shutdown()
        httpd.server_close()


def fixture_site(root: Path, chapters: dict[str, str], outputs: dict[tuple[str, int], list] | None = None) -> Path:
    """A small book rendered by the pandoc backend from ``chapters`` (stem: ``.qmd`` text), executed by nobody.

    The pages are an index and the chapters, numbered 1, 2, ... in order;
    ``outputs`` gives the outputs of a chapter's ``n``-th code cell, as a
    kernel would have. Returns the site's folder.
    """
    from rlbook.publish.config import Page
    from rlbook.publish.execute import qmd_to_notebook
    from rlbook.publish.render import pandoc_path
    from rlbook.publish.site import render_site

    pages = [Page("index.qmd", "front", None, "Preface")]
    pages += [Page(f"chapters/{stem}.qmd", "main", str(n), stem) for n, stem in enumerate(chapters, start=1)]
    texts = {"index": "# Preface {.unnumbered}\n\nA small book.\n", **chapters}
    notebooks = {}
    for page in pages:
        (root / page.source).parent.mkdir(parents=True, exist_ok=True)
        (root / page.source).write_text(texts[page.stem], encoding="utf-8")
        notebooks[page.stem] = qmd_to_notebook(texts[page.stem])
    for (stem, n), cell_outputs in (outputs or {}).items():
        [c for c in notebooks[stem].cells if c.cell_type == "code"][n].outputs = cell_outputs
    site = root / "_book"
    missing = render_site(root, pages, notebooks, site, {"book": {"title": "Fixture"}}, pandoc_path(), lambda _: None)
    assert missing == [], missing
    return site


def shot_name(page: str, size: tuple[int, int], scheme: str, element: str = "") -> str:
    """A screenshot's file name: the page's path with ``_`` for ``/``, the element (if any), the width, the scheme."""
    stem = page.replace("/", "_").removesuffix(".html")
    return f"{stem}{'-' + element if element else ''}-{size[0]}-{scheme}.png"


# ---------------------------------------------------------------- measurements run in the page

NAME = r"""
  // How a report names an element: its float ("Figure 3.5", "Table 3.3"), else the nearest labelled cell or
  // section, and the first words of its text.
  window.rlbookName = (e) => {
    const float = e.closest('figure[id], .table-float[id]');
    const number = float && float.querySelector('.float-number');
    if (number) return number.textContent.replace(/:$/, '').replace(/\u00a0/g, ' ') + ' (#' + float.id + ')';
    const cell = e.closest('.cell[id]');
    let section = e.closest('section[id]');
    let heading = null;
    for (let n = e; n && !heading; n = n.previousElementSibling || n.parentElement) {
      if (/^H[1-6]$/.test(n.tagName) && n.id) heading = n;
    }
    const where = cell ? '#' + cell.id : heading ? 'after #' + heading.id : section ? 'in #' + section.id : '';
    const text = (e.innerText || e.textContent || '').trim().split('\n')[0].slice(0, 60);
    return (where ? where + ': ' : '') + JSON.stringify(text);
  };
"""

OPEN_ALL_CODE = r"""() => {
  document.querySelectorAll('main details').forEach((d) => { d.open = true; });
  return document.querySelectorAll('main details').length;
}"""
"""Open every fold of the page, folded cells and closed boxes (an exercise's solution) alike, so that what a
reader can open is laid out and can be measured (a block in a closed box has no width to measure)."""

CODE_WIDTH = (
    NAME
    + r"""
(() => {
  // Every code block (a cell's code or its printed output) whose content is wider than its box.
  const found = [];
  for (const pre of document.querySelectorAll('main pre')) {
    if (!pre.getClientRects().length) continue;
    const over = pre.scrollWidth - pre.clientWidth;
    if (over > 1) {
      const cell = pre.closest('.cell[id]');
      const kind = pre.matches('.cell-output, .cell-output pre') || pre.closest('.cell-output') ? 'output' : 'code';
      found.push({name: rlbookName(pre), kind, over, cell: cell ? cell.id : '',
                  longest: Math.max(...pre.innerText.split('\n').map((l) => l.length))});
    }
  }
  return found;
})()
"""
)

COPY_OVERLAP = (
    NAME
    + r"""
(() => {
  // Every copy button that covers a character of the code it copies.
  const found = [];
  for (const button of document.querySelectorAll('.copy-button')) {
    const b = button.getBoundingClientRect();
    if (!b.width) continue;
    const code = button.closest('.code-block').querySelector('pre code, pre');
    const box = code.closest('pre').getBoundingClientRect();
    const walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
    let hit = null;
    for (let node = walker.nextNode(); node && !hit; node = walker.nextNode()) {
      const range = document.createRange();
      for (let i = 0; i < node.length && !hit; i++) {
        if (!node.data[i].trim()) continue;
        range.setStart(node, i);
        range.setEnd(node, i + 1);
        const r = range.getBoundingClientRect();
        if (r.right <= box.left || r.left >= box.right) continue;  // scrolled out of the box: not seen
        if (r.left < b.right && r.right > b.left && r.top < b.bottom && r.bottom > b.top) hit = node.data[i];
      }
    }
    if (hit) found.push({name: rlbookName(code), covered: hit});
  }
  return found;
})()
"""
)

SCROLL_CUES = (
    NAME
    + r"""
(async () => {
  // Every box that scrolls sideways (a code block, a table's box, a formula, the table of a live panel) and
  // shows no cue at its cut edge: book.js frames it (.scroll-frame), and the frame paints a shaded edge on the
  // right while more is hidden there. Measured once the page has laid out what was just opened (a frame is
  // added as a box is measured).
  await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
  const found = [];
  for (const box of document.querySelectorAll('main pre, main .table-scroll, main .display-math, main math, main .rw-scroll')) {
    if (!box.getClientRects().length || (box.closest('.rlbook-workshop') && !box.matches('.rw-scroll'))) continue;
    if (!/auto|scroll/.test(getComputedStyle(box).overflowX) || box.scrollWidth <= box.clientWidth + 1) continue;
    const frame = box.parentElement.classList.contains('scroll-frame') ? box.parentElement : null;
    const cue = frame && getComputedStyle(frame, '::after');
    const shown = cue && cue.content !== 'none' && cue.display !== 'none' && +cue.opacity > 0.5 && parseFloat(cue.width) > 8;
    if (!shown) found.push({name: rlbookName(box), over: box.scrollWidth - box.clientWidth});
  }
  return found;
})()
"""
)
"""At 1280 px as on a phone, a box that scrolls sideways says so (issue 57): its cue is painted on the cut edge."""

INLINE_MATH_CUT = (
    NAME
    + r"""
(() => {
  // Every inline formula whose box clips what it holds at its top or bottom: on a phone each is a box of its own
  // that scrolls sideways, and such a box clips vertically too (issue 57: the top of every italic T was cut).
  const found = [];
  for (const math of document.querySelectorAll('main math')) {
    if (!math.getClientRects().length || math.closest('.display-math') || math.getAttribute('display') === 'block') continue;
    if (getComputedStyle(math).overflowY === 'visible') continue;
    const over = math.scrollHeight - math.clientHeight;
    if (over > 0) found.push({name: rlbookName(math), formula: math.textContent.slice(0, 40), over});
  }
  return found;
})()
"""
)
"""On a phone an inline formula scrolls sideways in its own box, which must leave room for its glyphs above and
below: nothing it holds overflows its height."""

TABLE_WIDTH = (
    NAME
    + r"""
(() => {
  // Every table wider than the column it sits in (its scrolling box, which is as wide as the text).
  const found = [];
  for (const table of document.querySelectorAll('main table')) {
    if (!table.getClientRects().length) continue;
    const box = table.closest('.table-scroll') || table.parentElement;
    const over = table.getBoundingClientRect().width - box.clientWidth;
    if (over > 1) found.push({name: rlbookName(table), over: Math.round(over)});
  }
  return found;
})()
"""
)

TABLE_SCROLL = (
    NAME
    + r"""
(() => {
  // On a narrow screen: every table box that pushes past the screen, and every table whose first column
  // does not stay in view when its box is scrolled to the far right.
  const found = [];
  for (const box of document.querySelectorAll('main .table-scroll')) {
    const r = box.getBoundingClientRect();
    const table = box.querySelector('table');
    if (!r.width || !table) continue;
    if (r.right > innerWidth + 1) found.push({name: rlbookName(table), problem: 'box wider than the screen'});
    if (box.scrollWidth <= box.clientWidth + 1) continue;
    box.scrollLeft = box.scrollWidth;
    const first = table.querySelector('tr > :first-child');
    const f = first && first.getBoundingClientRect();
    if (f && (f.left < r.left - 1 || f.right > r.right + 1)) {
      found.push({name: rlbookName(table), problem: 'first column scrolls out of view'});
    }
    box.scrollLeft = 0;
  }
  return found;
})()
"""
)

BROKEN_WORDS = (
    NAME
    + r"""
(() => {
  // Every word of the text (prose, tables, captions; not code listings, math or figures) that the browser
  // broke across two lines between two letters or digits: inside a word or a name, not at a "_", "-" or ".".
  const found = [];
  const walker = document.createTreeWalker(document.querySelector('main'), NodeFilter.SHOW_TEXT, {
    acceptNode: (n) => n.parentElement.closest('pre, math, svg, script, style, .rlbook-workshop')
      ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT});
  const range = document.createRange();
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!node.parentElement.getClientRects().length) continue;
    for (const m of node.data.matchAll(/\S{2,}/g)) {
      if (/^(https?:|doi:)/.test(m[0])) continue;  // an address may break anywhere
      range.setStart(node, m.index);
      range.setEnd(node, m.index + m[0].length);
      const rects = [...range.getClientRects()].filter((r) => r.width > 0);
      if (rects.length < 2 || rects.every((r) => Math.abs(r.top - rects[0].top) < 2)) continue;
      let top = null;
      for (let i = 0; i < m[0].length; i++) {
        range.setStart(node, m.index + i);
        range.setEnd(node, m.index + i + 1);
        const r = range.getBoundingClientRect();
        if (top === null) top = r.top;
        else if (r.top > top + 2) {
          if (/[A-Za-z0-9]/.test(m[0][i - 1]) && /[A-Za-z0-9]/.test(m[0][i])) {
            found.push({name: rlbookName(node.parentElement), word: m[0].slice(0, i) + '/' + m[0].slice(i)});
          }
          break;
        }
      }
    }
  }
  return found;
})()
"""
)

FIGURE_TEXT = (
    NAME
    + r"""
(async () => {
  // The smallest text of every figure image at the size it is drawn: each SVG's text sizes (in its own
  // units, inherited as the browser would) times the image's drawn width over the SVG's viewBox width.
  const sizeOf = (e) => {
    for (let n = e; n && n.nodeType === 1; n = n.parentElement) {
      const style = n.getAttribute('style') || '';
      const m = style.match(/font-size:\s*([\d.]+)px/) || style.match(/font:[^;]*?([\d.]+)px/);
      if (m) return parseFloat(m[1]);
      if (n.getAttribute('font-size')) return parseFloat(n.getAttribute('font-size'));
    }
    return 16;
  };
  const found = [];
  for (const img of document.querySelectorAll('main figure img, main .cell img')) {
    const drawn = img.getBoundingClientRect().width;
    const entry = {name: rlbookName(img), src: img.getAttribute('src'), drawn: Math.round(drawn)};
    if (!/\.svg$/.test(img.src)) { found.push({...entry, problem: 'not an SVG: its text cannot be measured'}); continue; }
    const doc = new DOMParser().parseFromString(await (await fetch(img.src)).text(), 'image/svg+xml');
    const svg = doc.documentElement;
    const box = (svg.getAttribute('viewBox') || '').split(/[\s,]+/).map(Number);
    const width = box.length === 4 ? box[2] : parseFloat(svg.getAttribute('width'));
    const texts = [...svg.querySelectorAll('text, tspan')].filter((t) => t.textContent.trim());
    // Text drawn as glyph outlines (matplotlib's svg.fonttype "path"): a group per text whose glyphs are
    // scaled by its size over 100.
    const glyphs = [...svg.querySelectorAll('g[id^="text_"] g[transform*="scale("]')].map((g) =>
      100 * Math.abs(parseFloat(g.getAttribute('transform').match(/scale\(([-\d.e]+)/)[1])));
    const sizes = texts.map(sizeOf).concat(glyphs);
    if (!sizes.length) { found.push({...entry, smallest: null}); continue; }
    const smallest = Math.min(...sizes);
    const tiny = texts.filter((t) => sizeOf(t) === smallest).slice(0, 3).map((t) => t.textContent.trim());
    found.push({...entry, smallest: +(smallest * drawn / width).toFixed(1), tiny});
  }
  return found;
})()
"""
)
