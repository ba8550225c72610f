"""rlbook.publish.search: a Pagefind index of a small site's prose (no code, no outputs), and its failure when
nothing can be indexed. How the index ranks is tested in Chromium (tests/browser/test_search.py)."""

from __future__ import annotations

import asyncio
import gzip
import json
from concurrent.futures import ThreadPoolExecutor

import pytest

from rlbook.publish import search

PAGE = """<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{title}</title></head><body>
<nav>Chapter list, not indexed</nav><main data-pagefind-body><h1 id="sec-{key}">{title}</h1>
<h2 id="sec-{key}-part">A part</h2><p>{text}</p></main></body></html>"""


def test_every_page_is_indexed_with_the_search_interface_beside_the_index(tmp_path):
    (tmp_path / "chapters").mkdir()
    (tmp_path / "index.html").write_text(PAGE.format(title="Preface", key="pre", text="Read this first."))
    (tmp_path / "chapters" / "03.html").write_text(PAGE.format(title="Credit", key="credit", text="CISPO caps ratios."))
    assert search.index_site(tmp_path) == 2
    bundle = tmp_path / search.FOLDER
    for name in ("pagefind.js", "pagefind-ui.js", "pagefind-ui.css", "pagefind-entry.json"):
        assert (bundle / name).stat().st_size > 0
    assert list(bundle.glob("index/*")) and list(bundle.glob("fragment/*"))


def test_a_site_without_pages_fails(tmp_path):
    with pytest.raises(RuntimeError, match="Pagefind indexed no page"):
        search.index_site(tmp_path)


def test_a_site_is_indexed_from_inside_a_running_event_loop(tmp_path):
    # Playwright's sync API and a Jupyter kernel both keep a loop running while the book is built.
    (tmp_path / "index.html").write_text(PAGE.format(title="Preface", key="pre", text="Read this first."))

    async def build_inside_a_loop() -> int:
        return search.index_site(tmp_path)

    # The loop runs on a thread of its own, as this test may itself run where Playwright's loop is running.
    with ThreadPoolExecutor(max_workers=1) as pool:
        assert pool.submit(asyncio.run, build_inside_a_loop()).result() == 1


CHAPTER = """<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Loop</title></head><body>
<main data-pagefind-body><h1 id="sec-loop">The loop</h1><p>The policy writes an answer.</p>
<div class="cell"><details class="code-fold" open><summary>Code</summary>
<div class="sourceCode"><pre><code>PASSK_N = 256  # listing words</code></pre></div></details>
<pre class="cell-output cell-output-stdout"><code>printed words</code></pre></div>
<h2 id="sec-loop-reward">The reward</h2><p>The verifier pays <code>reward_fn</code> for pass@4.</p>
<div class="rlbook-workshop"><button>Sample</button></div></main></body></html>"""


def _fragments(site) -> list[dict]:
    """What Pagefind stored of each page: its text and its anchors (a gzipped, signed JSON per page)."""
    found = []
    for path in (site / search.FOLDER / "fragment").glob("*.pf_fragment"):
        data = gzip.decompress(path.read_bytes())
        assert data.startswith(b"pagefind_dcd")
        found.append(json.loads(data[len(b"pagefind_dcd") :]))
    return found


def test_only_prose_is_indexed_code_outputs_and_the_workshop_are_not(tmp_path):
    (tmp_path / "loop.html").write_text(CHAPTER)
    assert search.index_site(tmp_path) == 1
    (page,) = _fragments(tmp_path)
    text = page["content"]
    assert "The policy writes an answer." in text and "The verifier pays reward_fn for pass@4." in text
    for left_out in ("PASSK_N", "listing words", "printed words", "Code", "Sample"):
        assert left_out not in text
    assert [(a["element"], a["id"]) for a in page["anchors"]] == [("h1", "sec-loop"), ("h2", "sec-loop-reward")]


def test_a_formula_is_indexed_once_as_the_reader_sees_it_not_again_as_its_tex(tmp_path):
    # Pandoc's MathML carries each formula's TeX in an <annotation>: indexed, a snippet shows the formula twice.
    formula = (
        '<math display="inline"><semantics><msub><mi>ρ</mi><mi>t</mi></msub>'
        '<annotation encoding="application/x-tex">\\rho_t</annotation></semantics></math>'
    )
    page = f'<html lang="en"><body><main data-pagefind-body><h1 id="sec-r">Ratio</h1><p>The ratio {formula} moves.</p>'
    (tmp_path / "ratio.html").write_text(page + "</main></body></html>")
    assert search.index_site(tmp_path) == 1
    (fragment,) = _fragments(tmp_path)
    assert "ρ" in fragment["content"] and "rho" not in fragment["content"]
