"""The Quarto filter assets/notebook-link.lua, run by pandoc with a stand-in for Quarto's Lua API.

Quarto is not installed here; pandoc runs the filter after a small preamble
defines the parts of ``quarto.doc`` and ``quarto.project`` it calls. The link
must carry ``data-noresolveinput`` so that Quarto leaves it unresolved (the
pre-render step writes the notebook into the site, not Quarto), and a page is
linked only when its notebook is in the output folder (issue 43: a notebook
left in ``_build/`` by an earlier build gave links that answered 404) or when
Quarto has kept the notebook it executed the page in, from which the
post-render step writes it (issue 54).
"""

from __future__ import annotations

import subprocess

from rlbook.publish.render import pandoc_path
from rlbook.publish.site import ASSETS

PREAMBLE = """quarto = {{
  doc = {{ is_format = function(name) return name == "html" end, input_file = "{project}/chapters/01-x.qmd" }},
  project = {{ directory = "{project}", output_directory = "{project}/_book" }},
}}
dofile("{filter}")
"""


def _render(tmp_path, markdown: str, where: str = "_book/notebooks") -> str:
    (tmp_path / where).mkdir(parents=True, exist_ok=True)
    (tmp_path / where / "01-x.ipynb").write_text("{}")
    wrapper = tmp_path / "wrapper.lua"
    wrapper.write_text(PREAMBLE.format(project=tmp_path, filter=ASSETS / "notebook-link.lua"))
    done = subprocess.run(
        [pandoc_path(), "-f", "markdown", "-t", "html", "--wrap=none", "--lua-filter", str(wrapper)],
        input=markdown,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def test_a_page_with_code_cells_links_its_notebook_and_tells_quarto_not_to_resolve_the_link(tmp_path):
    html = _render(tmp_path, "# One {#sec-one}\n\n::: {.cell}\n```python\nx = 1\n```\n:::\n")
    first, link, *_ = html.split("\n")
    assert first.startswith("<h1")
    assert link == (
        '<p><a href="../notebooks/01-x.ipynb" class="notebook-download" download=""'
        ' data-noresolveinput="">Download this chapter as a notebook</a></p>'
    )


def test_a_page_without_code_cells_gets_no_link(tmp_path):
    assert "notebook" not in _render(tmp_path, "# One\n\nProse only.\n")


def test_a_notebook_left_in_build_but_not_in_the_site_gets_no_link(tmp_path):
    html = _render(tmp_path, "# One\n\n::: {.cell}\n```python\nx = 1\n```\n:::\n", where="_build/notebooks")
    assert "notebook" not in html


def test_a_page_quarto_has_just_executed_links_the_notebook_the_post_render_step_will_write(tmp_path):
    html = _render(tmp_path, "# One\n\n::: {.cell}\n```python\nx = 1\n```\n:::\n", where="chapters")
    assert "notebook" not in html  # chapters/01-x.ipynb is not what Quarto keeps
    (tmp_path / "chapters" / "01-x.quarto_ipynb").write_text("{}")
    html = _render(tmp_path, "# One\n\n::: {.cell}\n```python\nx = 1\n```\n:::\n", where="chapters")
    assert 'href="../notebooks/01-x.ipynb"' in html
