"""rlbook.publish.quarto_site: Quarto's figures given their dark variant, and its search index rid of TeX.

``fixtures/quarto-search/`` is the section "Why keep the old probabilities?" of chapter 4 and its entry in the
search index, as Quarto 1.10.16 wrote them (``../shared/quarto-output/``, issue 54): each of its nine formulas
reads twice in the entry, as shown and as TeX ("ρt\\rho_t"). ``fixtures/quarto-search-code/`` is the section
"PPO and CISPO" of the same page and its entry, which holds two code listings, each under its fold's "Code"
label, and one printed output. ``fixtures/quarto-kept/`` holds a figure Quarto's kernel drew.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import nbformat

from rlbook.publish.quarto_site import (
    THEMED,
    clean_search,
    page_code,
    page_formulas,
    theme_figures,
    without_code,
    without_tex,
)

FIXTURES = Path(__file__).parent / "fixtures"
SEARCH = FIXTURES / "quarto-search"
CODE = FIXTURES / "quarto-search-code"
X = (
    '<math display="inline" xmlns="http://www.w3.org/1998/Math/MathML"><semantics><mi>x</mi>'
    '<annotation encoding="application/x-tex">x</annotation></semantics></math>'
)
"""A one-letter formula as Quarto writes it (chapter 1's prompt x)."""


def test_each_formula_is_left_as_shown_and_its_tex_is_gone(tmp_path):
    shutil.copytree(SEARCH, tmp_path, dirs_exist_ok=True)
    before = json.loads((SEARCH / "search.json").read_text())[0]["text"]
    assert clean_search(tmp_path) == 1
    after = json.loads((tmp_path / "search.json").read_text())[0]["text"]
    formulas, _ = page_formulas((SEARCH / "chapters" / "04-update-choices.html").read_text())
    assert len(formulas) == 9 and "ρt\\rho_t" in before and "\\" not in after
    stored = lambda text: text.replace("<", "&lt;").replace(">", "&gt;")  # as Quarto's index stores it
    assert len(before) - len(after) == sum(len(stored(f.read)) - len(stored(f.shown)) for f in formulas)
    assert "such rollouts are stale (the stale run of chapter 6 learns from them)" in after
    assert "The importance ratio of a token compares the policy being trained, πθ, with" in after
    assert clean_search(tmp_path) == 0  # cleaned once is clean


def test_code_listings_printed_outputs_and_fold_labels_leave_the_index_and_the_prose_stays(tmp_path):
    shutil.copytree(CODE, tmp_path, dirs_exist_ok=True)
    before = json.loads((CODE / "search.json").read_text())[0]["text"]
    code = page_code((CODE / "chapters" / "04-update-choices.html").read_text())
    assert [(piece.split()[:3], piece.split()[-2:]) for piece in code] == [  # a listing and its output are one run
        (["Code", "ratio", "="], ["1.3,", "4.0]"]),
        (["Code", "drift", "="], ["F.eps,", "F.cap);"]),
    ]
    assert clean_search(tmp_path) == 1
    after = json.loads((tmp_path / "search.json").read_text())[0]["text"]
    assert "ratio = torch.tensor" in before and "PPO: [0.5" in before and "drift = F.drift" in before
    for gone in ("torch", "losses.ppo_clip_loss", "PPO: [0.5", "CISPO: [0.5", "drift = F.drift", "\nCode\n"):
        assert gone not in after
    assert "(a token with no gradient gets 0):\n\n\nInside PPO’s region both losses weight a token" in after


def test_a_word_of_prose_that_a_listing_also_holds_stays_where_the_prose_has_it():
    page = "<main><p>Code runs here.</p><details class='code-fold'><summary>Code</summary>\n<pre>x = 1</pre></details></main>"
    assert page_code(page) == ["Code\nx = 1"]
    assert (
        without_code("Code runs here.\n\n\nCode\nx = 1\n\nThe end.", page_code(page)) == "Code runs here.\n\n\nThe end."
    )


def test_a_one_letter_formula_is_cleaned_where_it_stands_and_nowhere_else():
    page = f"<main><section><h2>Prompts</h2><p>The prompt written as {X} is a sum; expect x.</p></section></main>"
    formulas, _ = page_formulas(page)
    assert without_tex("Prompts\nThe prompt written as xx is a sum; expect x.", formulas) == (
        "Prompts\nThe prompt written as x is a sum; expect x."
    )


def test_a_heading_with_a_formula_names_its_section_as_shown(tmp_path):
    (tmp_path / "a.html").write_text(f"<main><section id='s'><h2>The prompt {X}</h2><p>Prose.</p></section></main>")
    entry = {"objectID": "a.html#s", "href": "a.html#s", "title": "A", "section": "The prompt xx", "text": "x"}
    (tmp_path / "search.json").write_text(json.dumps([entry]))
    assert clean_search(tmp_path) == 1
    assert json.loads((tmp_path / "search.json").read_text())[0]["section"] == "The prompt x"


def test_every_figure_quarto_drew_gets_its_dark_variant_once(tmp_path):
    kept = nbformat.read(FIXTURES / "quarto-kept" / "01-kept.executed.ipynb", as_version=4)
    svg = next(o.data["image/svg+xml"] for c in kept.cells if c.cell_type == "code" for o in c.outputs if "data" in o)
    figures = tmp_path / "chapters" / "01-kept_files" / "figure-html"
    figures.mkdir(parents=True)
    (figures / "fig-panels-output-1.svg").write_text(svg)
    (tmp_path / "logo.svg").write_text(svg)  # not a figure of a page
    assert THEMED not in svg
    assert theme_figures(tmp_path) == 1
    themed = (figures / "fig-panels-output-1.svg").read_text()
    assert THEMED in themed and "var(--rlbook-ffffff)" in themed
    assert theme_figures(tmp_path) == 0 and (figures / "fig-panels-output-1.svg").read_text() == themed
    assert (tmp_path / "logo.svg").read_text() == svg
