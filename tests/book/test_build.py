"""The book build without Quarto: a tiny fixture book executed in fresh kernels and rendered with pandoc.

The fixture has an index, two chapters and a references page. Chapter 1 has
a matplotlib figure cell, a table cell, a callout and a collapsed callout,
citations, cross-references within and across chapters, hidden cells and
inline ``{python}`` values; chapter 2 refers back to chapter 1.
"""

from __future__ import annotations

import json
import os
import re
import sys
from html.parser import HTMLParser
from pathlib import Path

import psutil
import pytest

from rlbook.publish import runs_ahead
from rlbook.publish.build import build_book, choose_backend, select_pages
from rlbook.publish.config import Page
from rlbook.publish.notebooks import longest_first
from rlbook.publish.page import relative_href
from rlbook.publish.render import swap_in

QUARTO_YML = """\
project:
  type: book
book:
  title: "Tiny Book"
  subtitle: "A fixture"
  author: "Tester"
  chapters:
    - index.qmd
    - chapters/01-first.qmd
    - chapters/02-second.qmd
    - chapters/03-extra.qmd
    - chapters/references.qmd
bibliography: references.bib
format:
  html:
    code-fold: show
    fig-format: svg
"""
BIB = """\
@book{sutton2018reinforcement,
  title = {Reinforcement Learning: An Introduction},
  author = {Sutton, Richard S. and Barto, Andrew G.},
  edition = {2}, year = {2018}, publisher = {MIT Press}
}
@article{williams1992simple,
  title = {Simple Statistical Gradient-Following Algorithms for Connectionist Reinforcement Learning},
  author = {Williams, Ronald J.}, journal = {Machine Learning}, volume = {8}, year = {1992}
}
@book{uncited2000, title = {Never Cited}, author = {Nobody, A.}, year = {2000}}
"""
FIRST = """\
# The first chapter {#sec-first}

```{python}
answer = 21
```

Rewards follow @sutton2018reinforcement. The answer is `{python} answer` and twice that is `{python} answer * 2`.
See @fig-line, @tbl-small and [-@fig-line] alone; later, @sec-later.

## A section {#sec-later}

::: {.callout-note}
## Remember
Callouts are boxes.
:::

::: {.callout-tip collapse="true"}
## Solution
Hidden until opened.
:::

```{python}
#| label: fig-line
#| fig-cap: "A line that goes up, as in [@williams1992simple]."
#| fig-alt: "A straight line rising from left to right."
import matplotlib.pyplot as plt
plt.plot([0, 1, 2], [0, 1, 2]);
```

```{python}
#| label: tbl-small
#| tbl-cap: "A small table."
from IPython.display import Markdown
Markdown("| a | b |\\n|---|---|\\n| 1 | 2 |")
```

```{python}
#| echo: false
print("only the output")
```

```{python}
#| include: false
secret_value = 1
```
"""
SECOND = """\
# The second chapter {#sec-second}

As @fig-line in @sec-first showed, and as [@williams1992simple] argued.

```{python}
print(40 + 2)
```
"""
FAILING = """\
# The second chapter {#sec-second}

```{python}
x = 1
```

```{python}
y = x + 1
raise ValueError("this cell is broken on purpose")
```
"""

CLAIMED = """\
# The second chapter {#sec-second}

```{python}
rate = 0.25
```

Right on `{python} rate` of the sums, which is less than a half.

```{python}
#| include: false
assert rate < 0.5, "claim: the rate is less than a half"
```
"""

LAWFUL = """\
# The second chapter {#sec-second}

```{python}
#| include: false
from rlbook.book.claims import Claim, check
from rlbook.book.facts import freeze

LOW = Claim("rate-low", "the rate is under a half", lambda F: F.rate < 0.5, lambda F: F.rate, kind="law")
F = check("doctored", "chapters/02-second.qmd", [LOW], freeze({"rate": 0.25}))
```

Right on `{python} F.rate` of the sums, which is less than a half.`{python} F.law("rate-low")`
"""


EXTRA = """---
rlbook-needs:
  extra: ghost
  packages: [no_such_package_here]
---

# A chapter that needs an extra {#sec-extra}
"""


def write_book(root: Path, second: str = SECOND) -> Path:
    (root / "chapters").mkdir(parents=True)
    (root / "_quarto.yml").write_text(QUARTO_YML)
    (root / "references.bib").write_text(BIB)
    (root / "index.qmd").write_text("# Preface {.unnumbered}\n\nTwo chapters: @sec-first and @sec-second.\n")
    (root / "chapters" / "01-first.qmd").write_text(FIRST)
    (root / "chapters" / "02-second.qmd").write_text(second)
    (root / "chapters" / "03-extra.qmd").write_text(EXTRA)
    (root / "chapters" / "references.qmd").write_text("# References {.unnumbered}\n\n::: {#refs}\n:::\n")
    return root


class Tags(HTMLParser):
    """The img tags of a page, each with its alt text and whether it sits in a <figure>."""

    def __init__(self) -> None:
        super().__init__()
        self.depth = 0
        self.images: list[tuple[str, bool]] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag == "figure":
            self.depth += 1
        if tag == "img":
            self.images.append((dict(attrs).get("alt") or "", self.depth > 0))

    def handle_endtag(self, tag: str) -> None:
        if tag == "figure":
            self.depth -= 1


@pytest.fixture(scope="module")
def book(tmp_path_factory) -> tuple[Path, list[str]]:
    root = write_book(tmp_path_factory.mktemp("book"))
    lines: list[str] = []
    assert build_book(root, backend="pandoc", out=lines.append) == 0, "\n".join(lines)
    return root, lines


def page(root: Path, name: str) -> str:
    return (root / "_book" / name).read_text(encoding="utf-8")


def test_every_page_is_written_and_progress_is_reported(book):
    root, lines = book
    for name in ("index.html", "chapters/01-first.html", "chapters/02-second.html", "chapters/references.html"):
        assert (root / "_book" / name).is_file()
    assert any(re.match(r"\[2/4\] chapters/01-first\.qmd: executed in \d+\.\d s", line) for line in lines)


def test_no_reference_is_left_raw(book):
    root, _ = book
    for html_file in (root / "_book").rglob("*.html"):
        text = html_file.read_text(encoding="utf-8")
        for raw in ("@fig-", "@sec-", "@tbl-", "?@", "[@", "??"):
            assert raw not in text, f"{raw} left in {html_file.name}"


def test_figures_are_numbered_images_with_alt_text(book):
    root, _ = book
    text = page(root, "chapters/01-first.html")
    tags = Tags()
    tags.feed(text)
    assert tags.images == [("A straight line rising from left to right.", True)]
    figure = re.search(r'<figure id="fig-line">(.*?)</figure>', text, re.DOTALL).group(1)
    assert re.search(r"Figure\xa01\.1:</span> A line that\s+goes up", figure)
    image = re.search(r'<img src="([^"]+)"', figure).group(1)
    assert (root / "_book" / "chapters" / image).is_file()


def test_cross_references_are_numbered_links_within_and_across_pages(book):
    root, _ = book
    first = page(root, "chapters/01-first.html")
    assert re.search(r'<a\s+href="#fig-line"\s+class="quarto-xref">Figure\xa01\.1</a>', first)
    assert re.search(r'<a\s+href="#tbl-small"\s+class="quarto-xref">Table\xa01\.1</a>', first)
    assert re.search(r'<a\s+href="#fig-line"\s+class="quarto-xref">1\.1</a>\s+alone', first)
    assert re.search(r'<a\s+href="#sec-later"\s+class="quarto-xref">Section\s+1\.1</a>', first)
    second = page(root, "chapters/02-second.html")
    assert re.search(r'<a\s+href="01-first.html#fig-line"\s+class="quarto-xref">Figure\xa01.1</a>', second)
    assert re.search(r'<a\s+href="01-first.html#sec-first"\s+class="quarto-xref">Chapter\s+1</a>', second)
    assert re.search(
        r'href="chapters/02-second.html#sec-second"\s+class="quarto-xref">Chapter\s+2</a>', page(root, "index.html")
    )


def test_sections_and_tables_are_numbered(book):
    root, _ = book
    first = page(root, "chapters/01-first.html")
    assert re.search(r'<h2 id="sec-later"><span class="header-section-number">1\.1</span>', first)
    assert re.search(
        r'<div id="tbl-small" class="table-float">\s*<div class="table-caption">\s*'
        r'<span class="float-number">Table\xa01\.1:</span> A small table\.',
        first,
    )
    assert "<td>2</td>" in first


def test_citations_are_rendered_and_the_references_page_lists_cited_works_only(book):
    root, _ = book
    first = page(root, "chapters/01-first.html")
    assert re.search(r"Sutton and Barto \(<a\s+href=\"#ref-sutton2018reinforcement\"", first)
    refs = page(root, "chapters/references.html")
    assert 'id="ref-sutton2018reinforcement"' in refs and 'id="ref-williams1992simple"' in refs
    assert "uncited2000" not in refs


def test_callouts_are_boxes_and_collapsed_ones_are_details(book):
    root, _ = book
    first = page(root, "chapters/01-first.html")
    assert re.search(r'<div class="callout callout-note">\s*<div class="callout-title">\s*Remember', first)
    assert re.search(r'<details class="callout callout-tip">\s*<summary class="callout-title">\s*Solution', first)
    assert "## Solution" not in first


def test_inline_values_and_hidden_cells(book):
    root, _ = book
    first = page(root, "chapters/01-first.html")
    assert re.search(r"The answer is 21 and twice that\s+is 42\.", first)
    assert "only the output" in first and "print(" not in first.split("only the output")[0].rsplit("<div", 1)[-1]
    assert "secret_value" not in first and "#|" not in first


def test_each_chapter_links_its_executed_notebook(book):
    root, _ = book
    assert '<a href="../notebooks/01-first.ipynb" download>Download this chapter as a notebook</a>' in page(
        root, "chapters/01-first.html"
    )
    notebook = json.loads(page(root, "notebooks/01-first.ipynb"))
    outputs = [o for c in notebook["cells"] if c["cell_type"] == "code" for o in c["outputs"]]
    assert any("image/svg+xml" in o.get("data", {}) for o in outputs)
    assert (root / "_build" / "notebooks" / "02-second.ipynb").is_file()
    assert (root / "_build" / "executed" / "02-second.ipynb").is_file()


def test_the_downloaded_notebook_is_the_one_for_jupyter(book):
    root, _ = book
    assert page(root, "notebooks/01-first.ipynb") == (root / "_build" / "notebooks" / "01-first.ipynb").read_text()
    notebook = json.loads(page(root, "notebooks/01-first.ipynb"))
    prose = "\n".join("".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "markdown")
    assert "# 1 The first chapter\n" in prose and "{#sec" not in prose and ":::" not in prose
    assert "Figure 1.1, Table 1.1 and 1.1 alone; later, Section 1.1." in prose
    assert "Rewards follow Sutton and Barto (2018)." in prose and "## References" in prose
    assert "<details><summary><strong>Solution</strong></summary>" in prose
    assert notebook["metadata"]["kernelspec"]["display_name"] == "Python 3 (ipykernel)"
    refs = json.loads((root / "_build" / "notebooks" / "references.ipynb").read_text())
    assert "Williams, Ronald J. 1992" in "".join(refs["cells"][-1]["source"])
    assert "Download this chapter" not in page(root, "chapters/references.html")


def test_navigation_lists_every_page_and_links_neighbours(book):
    root, _ = book
    second = page(root, "chapters/02-second.html")
    assert '<a href="01-first.html">1 The first chapter</a>' in second
    assert 'class="current" aria-current="page">2 The second chapter</a>' in second
    assert 'rel="prev" href="01-first.html"' in second and 'rel="next" href="references.html"' in second
    assert '<link rel="stylesheet" href="../book.css" />' in second and (root / "_book" / "book.css").is_file()


def test_only_executes_one_chapter_and_reuses_the_other_notebooks(book):
    root, _ = book
    lines: list[str] = []
    assert build_book(root, backend="pandoc", only="02-second", out=lines.append, fresh=True) == 0
    assert [line for line in lines if "executed in" in line] and all("01-first" not in line for line in lines)
    assert "A straight line rising" in page(root, "chapters/01-first.html")


def executed(lines: list[str]) -> list[str]:
    """The pages a build's progress lines say it executed, by source."""
    return [line.split("] ")[1].split(":")[0] for line in lines if ": executed in " in line]


def test_a_page_is_executed_again_only_when_something_it_reads_has_changed(tmp_path, monkeypatch):
    root = write_book(tmp_path)
    built: list[str] = []
    assert build_book(root, backend="pandoc", out=built.append) == 0
    pages = sorted(executed(built))
    assert "chapters/01-first.qmd" in pages and len(pages) == 4  # the extra chapter's needs are not met here
    again: list[str] = []
    assert build_book(root, backend="pandoc", out=again.append) == 0
    assert executed(again) == [] and sum("reused, nothing it reads has changed" in line for line in again) == 4
    first = root / "chapters" / "01-first.qmd"
    first.write_text(first.read_text().replace("The answer is", "Here, the answer is"))
    edited: list[str] = []
    assert build_book(root, backend="pandoc", out=edited.append) == 0
    assert executed(edited) == ["chapters/01-first.qmd"]
    assert "Here, the answer is 21" in page(root, "chapters/01-first.html")
    monkeypatch.setenv("RLBOOK_NUMERICS", "native")  # another draw: every page reads other runs
    redrawn: list[str] = []
    assert build_book(root, backend="pandoc", out=redrawn.append) == 0
    assert sorted(executed(redrawn)) == pages
    fresh: list[str] = []
    assert build_book(root, backend="pandoc", out=fresh.append, fresh=True) == 0
    assert sorted(executed(fresh)) == pages


def test_a_failing_cell_names_page_and_cell_and_keeps_the_previous_book(tmp_path):
    root = write_book(tmp_path, second=FAILING)
    (root / "_book").mkdir()
    (root / "_book" / "index.html").write_text("the previous book")
    lines: list[str] = []
    assert build_book(root, backend="pandoc", only="02-second", out=lines.append) == 1
    report = "\n".join(lines)
    assert "FAILED chapters/02-second.qmd: cell 2 (line 8 of the page)" in report
    assert "y = x + 1" in report and "ValueError: this cell is broken on purpose" in report
    assert (root / "_book" / "index.html").read_text() == "the previous book"


def test_a_hidden_claim_that_holds_stays_off_the_page_and_one_that_breaks_fails_the_build_naming_it(tmp_path):
    root = write_book(tmp_path / "holds", second=CLAIMED)
    assert build_book(root, backend="pandoc", only="02-second", out=[].append) == 0
    text = page(root, "chapters/02-second.html")
    assert "Right on 0.25 of the sums" in text and "claim:" not in text and "assert" not in text
    broken = write_book(tmp_path / "breaks", second=CLAIMED.replace("rate = 0.25", "rate = 0.75"))
    lines: list[str] = []
    assert build_book(broken, backend="pandoc", only="02-second", out=lines.append) == 1
    report = "\n".join(lines)
    assert "FAILED chapters/02-second.qmd: cell 3 (line 10 of the page)" in report
    assert "AssertionError: claim: the rate is less than a half" in report
    assert not (broken / "_book").exists()


def test_a_law_that_fails_on_doctored_facts_is_published_with_a_notice_and_fails_a_strict_build(tmp_path, monkeypatch):
    monkeypatch.delenv("RLBOOK_STRICT", raising=False)
    root = write_book(tmp_path / "holds", second=LAWFUL)
    assert build_book(root, backend="pandoc", only="02-second", out=[].append) == 0
    assert "law-notice" not in page(root, "chapters/02-second.html")
    doctored = write_book(tmp_path / "doctored", second=LAWFUL.replace("0.25}", "0.75}"))
    lines: list[str] = []
    assert build_book(doctored, backend="pandoc", only="02-second", out=lines.append) == 0, "\n".join(lines)
    text = " ".join(page(doctored, "chapters/02-second.html").split())
    assert '<span class="law-notice" data-law="rate-low">On this machine’s runs this did not hold (saw 0.75)' in text
    report = "\n".join(lines)
    assert "1 law(s) of the book did not hold on this machine's runs" in report
    assert "chapters/02-second.qmd: rate-low: On this machine's runs this did not hold (saw 0.75)" in report
    strict: list[str] = []
    assert build_book(doctored, backend="pandoc", only="02-second", out=strict.append, strict=True) == 1
    assert "law 'rate-low' does not hold: the rate is under a half; saw 0.75" in "\n".join(strict)


def test_a_page_leaves_no_kernel_running_whether_it_passes_or_fails(tmp_path):
    # Each page's kernel holds a Python with torch loaded; one left running per page added up to
    # gigabytes in a build of the real book.
    before = {child.pid for child in psutil.Process().children(recursive=True)}
    root = write_book(tmp_path, second=FAILING)
    assert build_book(root, backend="pandoc", out=[].append, jobs=1) == 1
    assert (root / "_build" / "executed" / "01-first.ipynb").is_file()  # the first chapter passed, the second failed
    assert {child.pid for child in psutil.Process().children(recursive=True)} <= before


def test_one_page_at_a_time_writes_the_same_book(book, tmp_path):
    root, _ = book
    serial = write_book(tmp_path / "serial")
    assert build_book(serial, backend="pandoc", out=[].append, jobs=1) == 0
    for name in ("index.html", "chapters/01-first.html", "chapters/02-second.html", "chapters/references.html"):
        assert page(serial, name) == page(root, name)


SLOW = "# A slow chapter {#sec-slow}\n\n" + "".join(
    "```{python}\nimport time; time.sleep(0.2)\n```\n\n" for _ in range(30)
)


def test_a_failing_page_stops_the_page_running_beside_it(tmp_path):
    root = write_book(tmp_path, second=FAILING)
    (root / "chapters" / "01-first.qmd").write_text(SLOW)
    lines: list[str] = []
    assert build_book(root, backend="pandoc", out=lines.append, jobs=2) == 1
    assert "FAILED chapters/02-second.qmd" in "\n".join(lines)
    assert not (root / "_build" / "executed" / "01-first.ipynb").exists()  # stopped before its last cell


def fake_prefetch(monkeypatch, code: str) -> None:
    """Make the build's prefetch run ``code`` instead of training the real book's runs."""
    monkeypatch.setattr(runs_ahead, "prefetch_command", lambda jobs: [sys.executable, "-c", code])


def test_the_prefetch_runs_before_the_pages_and_is_skipped_once_it_has_succeeded(tmp_path, monkeypatch):
    fake_prefetch(monkeypatch, "print('[1/1] base seed 0: 1.0 s'); print('trained 1 runs in 1.0 s, 2 at a time')")
    root = write_book(tmp_path)
    lines: list[str] = []
    assert build_book(root, backend="pandoc", out=lines.append, prefetch=True) == 0
    assert lines[1:3] == ["[1/1] base seed 0: 1.0 s", "trained 1 runs in 1.0 s, 2 at a time"]  # after the left-out page
    assert (root / "_build" / "prefetch-done").read_text() == runs_ahead.prefetch_fingerprint()
    fake_prefetch(monkeypatch, "raise SystemExit('must not run')")
    lines.clear()
    assert build_book(root, backend="pandoc", out=lines.append, prefetch=True) == 0
    assert not any("must not run" in line or "failed" in line for line in lines)


def test_the_fingerprint_follows_the_cache_setting(monkeypatch):
    monkeypatch.setenv("RLBOOK_CACHE", "/one")
    first = runs_ahead.prefetch_fingerprint()
    assert re.fullmatch(r"[0-9a-f]{16}", first) and runs_ahead.prefetch_fingerprint() == first
    monkeypatch.setenv("RLBOOK_CACHE", "/two")
    assert runs_ahead.prefetch_fingerprint() != first


def test_a_failed_prefetch_is_reported_and_the_pages_still_run(tmp_path, monkeypatch):
    fake_prefetch(monkeypatch, "raise SystemExit(3)")
    root = write_book(tmp_path)
    lines: list[str] = []
    assert build_book(root, backend="pandoc", out=lines.append, prefetch=True) == 0
    assert any("exit 3" in line for line in lines)
    assert not (root / "_build" / "prefetch-done").exists()


def test_one_page_or_no_prefetch_runs_no_prefetch(tmp_path, monkeypatch):
    fake_prefetch(monkeypatch, "raise SystemExit(3)")
    root = write_book(tmp_path)
    lines: list[str] = []
    assert build_book(root, backend="pandoc", only="02-second", out=lines.append, prefetch=True) == 0
    assert build_book(root, backend="pandoc", out=lines.append) == 0
    assert not any("exit 3" in line for line in lines)


def test_unknown_page_or_backend_is_a_usage_error(tmp_path):
    root = write_book(tmp_path)
    lines: list[str] = []
    assert build_book(root, backend="pandoc", only="99-nothing", out=lines.append) == 2
    assert "names no page" in lines[-1]
    assert build_book(root, backend="latex", out=lines.append) == 2
    assert build_book(root, backend="pandoc", out=lines.append, jobs=0) == 2
    assert lines[-1] == "rlbook build: --jobs must be at least 1, got 0"


def test_select_pages_by_stem_path_or_number():
    pages = [Page("index.qmd", "front", None, "P"), Page("chapters/03-credit.qmd", "main", "3", "C")]
    assert select_pages(pages, None) == pages
    for name in ("03-credit", "chapters/03-credit.qmd", "03-credit.qmd", "3", "03"):
        assert select_pages(pages, name) == pages[1:]


def test_choose_backend_takes_pandoc_without_quarto(monkeypatch):
    monkeypatch.setattr("shutil.which", lambda name: None)
    assert choose_backend("auto") == "pandoc"
    with pytest.raises(ValueError, match="quarto command is not on PATH"):
        choose_backend("quarto")


def test_relative_href_between_output_pages():
    assert relative_href("chapters/01-a.html", "index.html") == "../index.html"
    assert relative_href("index.html", "chapters/01-a.html") == "chapters/01-a.html"
    assert relative_href("chapters/01-a.html", "chapters/02-b.html") == "02-b.html"


def test_swap_in_replaces_the_folder_whole(tmp_path):
    (tmp_path / "new").mkdir()
    (tmp_path / "new" / "a").write_text("new")
    (tmp_path / "final").mkdir()
    (tmp_path / "final" / "b").write_text("old")
    swap_in(tmp_path / "new", tmp_path / "final")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["final"]
    assert [p.name for p in (tmp_path / "final").iterdir()] == ["a"]


def test_swap_in_keeps_a_link_to_the_site_and_makes_it_readable_by_others(tmp_path):
    import tempfile

    real = tmp_path / "www" / "book"
    real.mkdir(parents=True)
    (real / "b").write_text("old")
    (tmp_path / "_book").symlink_to(real)
    for round_ in ("first", "second"):
        staging = Path(tempfile.mkdtemp(dir=tmp_path))  # 0700, as the build's staging folder is
        (staging / "a").write_text(round_)
        swap_in(staging, tmp_path / "_book")
        assert (tmp_path / "_book").is_symlink() and (real / "a").read_text() == round_
    assert not (real / "b").exists()
    umask = os.umask(0)
    os.umask(umask)
    assert real.stat().st_mode & 0o777 == 0o777 & ~umask  # not the 0o700 of a temporary folder


def test_swap_in_crosses_filesystems(tmp_path, monkeypatch):
    real_stat = Path.stat
    new = tmp_path / "new"
    new.mkdir()
    (new / "a").write_text("new")

    class OtherDevice:
        def __init__(self, result):
            self._result = result

        def __getattr__(self, name):
            return getattr(self._result, name)

        @property
        def st_dev(self):
            return -1

    monkeypatch.setattr(
        Path, "stat", lambda self, **kw: OtherDevice(real_stat(self, **kw)) if self == new else real_stat(self, **kw)
    )
    swap_in(new, tmp_path / "final")
    assert (tmp_path / "final" / "a").read_text() == "new" and not new.exists()


def test_pages_start_slowest_first_and_new_pages_before_all():
    pages = [
        Page("index.qmd", "front", None, "P"),
        Page("chapters/01-a.qmd", "main", "1", "A"),
        Page("chapters/02-b.qmd", "main", "2", "B"),
        Page("chapters/03-c.qmd", "main", "3", "C"),
    ]
    seconds = {"index": 0.1, "01-a": 2.0, "02-b": 7.0}
    order = longest_first(pages, pages[1:], seconds)
    assert [(number, page.stem) for number, page in order] == [(4, "03-c"), (3, "02-b"), (2, "01-a")]


def test_the_build_records_each_page_s_seconds(book):
    root, _ = book
    seconds = json.loads((root / "_build" / "page-seconds.json").read_text())
    assert set(seconds) == {"index", "01-first", "02-second", "references"} and all(v > 0 for v in seconds.values())


def test_prefetch_command_passes_jobs_only_when_given():
    assert runs_ahead.prefetch_command(None)[1:] == ["-m", "rlbook.book.prefetch"]
    assert runs_ahead.prefetch_command(3)[1:] == ["-m", "rlbook.book.prefetch", "--jobs", "3"]


def test_figures_are_svg_as_fig_format_asks_and_the_site_has_its_script_and_search(book):
    root, lines = book
    first = page(root, "chapters/01-first.html")
    image = re.search(r'<img src="([^"]+)"', first).group(1)
    assert image.endswith(".svg") and (root / "_book" / "chapters" / image).read_text().lstrip().startswith("<")
    assert '<script src="../book.js"></script>' in first and (root / "_book" / "book.js").is_file()
    assert '<main id="content" class="content" data-pagefind-body>' in first
    assert (root / "_book" / "pagefind" / "pagefind-ui.js").is_file()
    assert "  search: 4 pages indexed" in lines


def test_a_page_whose_extra_is_missing_is_left_out_with_one_line(book):
    root, lines = book
    said = [line for line in lines if "03-extra" in line]
    assert said == [
        (
            "rlbook build: left out of this build: chapters/03-extra.qmd needs the 'ghost' extra, and "
            'no_such_package_here is not installed (pip install -e ".[ghost]", see the README)'
        )
    ]
    assert not (root / "_book" / "chapters" / "03-extra.html").exists()
    assert "03-extra" not in page(root, "chapters/02-second.html")
    out: list[str] = []
    assert build_book(root, backend="pandoc", only="03-extra", out=out.append) == 2
    assert out == ["rlbook build: " + said[0].split(": ", 2)[2]]


def test_a_page_with_a_placeholder_is_not_published_and_the_previous_book_stays(tmp_path):
    (tmp_path / "_quarto.yml").write_text("project:\n  type: book\nbook:\n  title: T\n  chapters:\n    - index.qmd\n")
    (tmp_path / "index.qmd").write_text("# Preface {.unnumbered}\n\nBoth models have (needs TRL) parameters.\n")
    (tmp_path / "_book").mkdir()
    (tmp_path / "_book" / "index.html").write_text("the previous book")
    lines: list[str] = []
    assert build_book(tmp_path, backend="pandoc", out=lines.append) == 1
    assert "  hole: index.html: shows the placeholder '(needs TRL)'" in lines
    assert (tmp_path / "_book" / "index.html").read_text() == "the previous book"
