"""rlbook.publish.holes: the placeholders, empty tables and empty figures that stop a build from publishing.

The fixtures (``fixtures/quarto-floats.html``, ``fixtures/pandoc-floats.html``) hold the same captioned table and
figure as each backend writes them; Quarto's markup is the one quoted in issue 43. ``fixtures/quarto-subfloats.html``
is a multi-panel figure as Quarto 1.10.16 wrote it for chapter 1 (issue 54), and ``fixtures/quarto-panels.html``
the same figure as it writes it with the book's figure-panels filter: one figure, its panels' images in one block.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rlbook.publish.holes import page_holes, site_holes

FULL = """<html><body><main>
<p>Both models have 27,114 parameters.</p>
<table><thead><tr><th>a</th><th>b</th></tr></thead><tbody><tr><td>1</td><td>2</td></tr></tbody></table>
<figure id="fig-x"><img src="x.svg" alt="a line"><figcaption>Figure 1</figcaption></figure>
</main></body></html>"""


def test_a_complete_page_has_no_hole():
    assert page_holes(FULL) == []


def test_each_placeholder_phrase_is_a_hole_even_across_tags_and_line_breaks():
    page = "<p>Both models have <code>(needs\nTRL)</code> parameters.</p><pre>TRL is not installed.</pre>"
    assert page_holes(page) == ["shows the placeholder '(needs TRL)'", "shows the placeholder 'TRL is not installed'"]


def test_a_table_with_a_header_but_no_filled_cell_is_a_hole():
    page = "<table><thead><tr><th>TRL not installed</th></tr></thead><tbody><tr><td> </td></tr></tbody></table>"
    assert page_holes(page) == ["table 1 of the page has no filled cell"]
    assert page_holes(FULL + page) == ["table 2 of the page has no filled cell"]


def test_a_figure_without_a_picture_is_a_hole_named_by_its_id():
    assert page_holes('<figure id="fig-trl-audit"><figcaption>Figure A.2</figcaption></figure>') == [
        "fig-trl-audit has no image"
    ]
    assert page_holes('<figure><svg viewBox="0 0 1 1"></svg></figure>') == []


def test_site_holes_names_the_page_of_each_hole(tmp_path):
    (tmp_path / "chapters").mkdir()
    (tmp_path / "index.html").write_text(FULL)
    (tmp_path / "chapters" / "appendix.html").write_text("<p>(needs TRL)</p>")
    assert site_holes(tmp_path) == ["chapters/appendix.html: shows the placeholder '(needs TRL)'"]


FIXTURES = Path(__file__).parent / "fixtures"
BACKENDS = {"quarto": "quarto-floats.html", "pandoc": "pandoc-floats.html"}


def _page(backend: str) -> str:
    return (FIXTURES / BACKENDS[backend]).read_text()


def _without(page: str, opening: str, closing: str) -> str:
    """``page`` with the first element that starts with ``opening`` cut out, up to its ``closing`` tag."""
    start = page.index(opening)
    return page[:start] + page[page.index(closing, start) + len(closing) :]


@pytest.mark.parametrize("backend", sorted(BACKENDS))
def test_a_captioned_table_and_a_figure_with_its_image_are_no_hole_in_either_backend(backend):
    """Quarto's table float is a <figure> that holds a table: issue 43's 43 false 'figure has no image'."""
    assert page_holes(_page(backend)) == []


@pytest.mark.parametrize("backend", sorted(BACKENDS))
def test_a_figure_whose_image_is_missing_is_a_hole_named_by_its_float_id(backend):
    page = _without(_page(backend), "<img", ">")
    assert page_holes(page) == ["fig-stale has no image"]


def test_a_quarto_table_float_without_its_table_is_a_hole():
    page = _without(_page("quarto"), "<table", "</table>")
    assert page_holes(page) == ["tbl-reward-spec has no table"]


@pytest.mark.parametrize("backend", sorted(BACKENDS))
def test_an_empty_table_inside_a_float_is_a_hole_in_either_backend(backend):
    page = _without(_page(backend), "<tbody>", "</tbody>")
    assert page_holes(page) == ["table 1 of the page has no filled cell"]


def test_a_picture_inside_a_quarto_table_float_does_not_stand_for_its_table():
    opening = '<figure class="quarto-float quarto-float-tbl figure">'
    page = _without(_page("quarto"), "<table", "</table>").replace(
        opening, opening + '<img src="t.png" alt="a table as a picture">'
    )
    assert 'alt="a table as a picture"' in page and page_holes(page) == ["tbl-reward-spec has no table"]


def test_a_quarto_multi_panel_figure_is_no_hole():
    # Quarto writes each panel as a sub-float, a <figure> inside the figure: the images belong to the whole.
    page = (FIXTURES / "quarto-subfloats.html").read_text()
    assert page.count("<figure class") == 5 and page_holes(page) == []


def test_a_quarto_multi_panel_figure_without_its_images_is_a_hole_per_figure():
    page = (FIXTURES / "quarto-subfloats.html").read_text()
    while "<img" in page:
        page = _without(page, "<img", ">")
    panels = [f"fig-workshop-answers-{n} has no image" for n in (1, 2, 3, 4)]
    assert page_holes(page) == [*panels, "fig-workshop-answers has no image"]


def test_a_quarto_panel_without_its_image_is_a_hole_of_its_own_and_not_of_its_figure():
    page = _without((FIXTURES / "quarto-subfloats.html").read_text(), '<img src="01-rl-loop_files', ">")
    assert page_holes(page) == ["fig-workshop-answers-1 has no image"]


def test_a_multi_panel_figure_as_the_figure_panels_filter_leaves_it_is_one_figure_and_no_hole():
    page = (FIXTURES / "quarto-panels.html").read_text()
    assert page.count("<figure") == 1 and page.count("<img") == 4 and page_holes(page) == []
    while "<img" in page:
        page = _without(page, "<img", ">")
    assert page_holes(page) == ["fig-workshop-answers has no image"]
