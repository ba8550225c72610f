"""rlbook.publish.holes: the placeholders, empty tables and empty figures that stop a build from publishing."""
from __future__ import annotations

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
        "fig-trl-audit has no image"]
    assert page_holes('<figure><svg viewBox="0 0 1 1"></svg></figure>') == []


def test_site_holes_names_the_page_of_each_hole(tmp_path):
    (tmp_path / "chapters").mkdir()
    (tmp_path / "index.html").write_text(FULL)
    (tmp_path / "chapters" / "appendix.html").write_text("<p>(needs TRL)</p>")
    assert site_holes(tmp_path) == ["chapters/appendix.html: shows the placeholder '(needs TRL)'"]
