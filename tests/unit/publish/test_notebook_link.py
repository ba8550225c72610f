"""The Quarto filter assets/notebook-link.lua, run by pandoc with a stand-in for Quarto's Lua API.

Quarto is not installed here; pandoc runs the filter after a small preamble
defines the parts of ``quarto.doc`` and ``quarto.project`` it calls. The link
must carry ``data-noresolveinput`` so that Quarto leaves it unresolved (the
notebook is copied into the site after the render).
"""
from __future__ import annotations

import subprocess

from rlbook.publish.build import pandoc_path
from rlbook.publish.site import ASSETS

PREAMBLE = """quarto = {{
  doc = {{ is_format = function(name) return name == "html" end, input_file = "{project}/chapters/01-x.qmd" }},
  project = {{ directory = "{project}" }},
}}
dofile("{filter}")
"""


def _render(tmp_path, markdown: str) -> str:
    (tmp_path / "_build" / "notebooks").mkdir(parents=True)
    (tmp_path / "_build" / "notebooks" / "01-x.ipynb").write_text("{}")
    wrapper = tmp_path / "wrapper.lua"
    wrapper.write_text(PREAMBLE.format(project=tmp_path, filter=ASSETS / "notebook-link.lua"))
    done = subprocess.run([pandoc_path(), "-f", "markdown", "-t", "html", "--wrap=none", "--lua-filter", str(wrapper)],
                          input=markdown, capture_output=True, text=True, check=True)
    return done.stdout


def test_a_page_with_code_cells_links_its_notebook_and_tells_quarto_not_to_resolve_the_link(tmp_path):
    html = _render(tmp_path, "# One {#sec-one}\n\n::: {.cell}\n```python\nx = 1\n```\n:::\n")
    first, link, *_ = html.split("\n")
    assert first.startswith("<h1")
    assert link == ('<p><a href="../notebooks/01-x.ipynb" class="notebook-download" download=""'
                    ' data-noresolveinput="">Download this chapter as a notebook</a></p>')


def test_a_page_without_code_cells_gets_no_link(tmp_path):
    assert "notebook" not in _render(tmp_path, "# One\n\nProse only.\n")
