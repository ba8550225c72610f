"""The Quarto project without Quarto (CI has none): ``_quarto.yml``'s settings, and its pre-render step run by itself.

Quarto runs ``rlbook/publish/prerender.py`` with its Python before it
renders, in the project's folder, with ``QUARTO_PROJECT_OUTPUT_DIR`` and
``QUARTO_PROJECT_INPUT_FILES`` (or ``QUARTO_PROJECT_RENDER_ALL``) set; these
tests run it the same way on a tiny book, then run the notebook-link filter
with pandoc and a stand-in for Quarto's Lua API on what it wrote.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import yaml

from rlbook.publish.render import pandoc_path
from rlbook.publish.site import ASSETS
from rlbook.publish.wheel import requirement_cell, wheel_name

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "rlbook" / "publish" / "prerender.py"

QUARTO_YML = """\
project:
  type: book
  pre-render: rlbook/publish/prerender.py
book:
  title: "Tiny Book"
  chapters:
    - index.qmd
    - chapters/01-first.qmd
    - chapters/02-second.qmd
"""
FIRST = "# First {#sec-first}\n\n```{python}\nanswer = 21 * 2\nanswer\n```\n\nThe answer is `{python} answer`.\n"
SECOND = "# Second {#sec-second}\n\n```{python}\nprint('second')\n```\n"
FILTER_STUB = """quarto = {{
  doc = {{ is_format = function(name) return name == "html" end, input_file = "{root}/chapters/{stem}.qmd" }},
  project = {{ directory = "{root}", output_directory = "{root}/_book" }},
}}
dofile("{filter}")
"""


def tiny_book(root: Path, extra: bool = False) -> Path:
    (root / "chapters").mkdir(parents=True)
    (root / "_quarto.yml").write_text(QUARTO_YML)
    (root / "index.qmd").write_text("# Preface {.unnumbered}\n\nProse only.\n")
    needs = "---\nrlbook-needs:\n  extra: ghost\n  packages: [no_such_package_here]\n---\n\n" if extra else ""
    (root / "chapters" / "01-first.qmd").write_text(needs + FIRST)
    (root / "chapters" / "02-second.qmd").write_text(SECOND)
    return root


def prerender(root: Path, **env: str) -> subprocess.CompletedProcess:
    """The pre-render step as Quarto runs it: the file, with this Python, in the project's folder."""
    environ = {**os.environ, "QUARTO_PROJECT_OUTPUT_DIR": str(root / "_book"), **env}
    return subprocess.run(
        [sys.executable, str(SCRIPT)], cwd=root, env=environ, capture_output=True, text=True, timeout=600, check=False
    )


def linked(root: Path, stem: str) -> bool:
    """Whether the notebook-link filter links page ``stem`` to its notebook, given what is in ``root/_book``."""
    stub = root / f"stub-{stem}.lua"
    stub.write_text(FILTER_STUB.format(root=root, stem=stem, filter=ASSETS / "notebook-link.lua"))
    done = subprocess.run(
        [pandoc_path(), "-f", "markdown", "-t", "html", "--lua-filter", str(stub)],
        input="# A page\n\n::: {.cell}\n```python\nx = 1\n```\n:::\n",
        capture_output=True,
        text=True,
        check=True,
    )
    return f'href="../notebooks/{stem}.ipynb"' in done.stdout


def test_the_book_config_runs_the_pre_render_step_and_asks_for_an_offline_light_and_dark_site():
    config = yaml.safe_load((REPO / "_quarto.yml").read_text())
    assert (REPO / config["project"]["pre-render"]).resolve() == SCRIPT
    html = config["format"]["html"]
    assert set(html["theme"]) == {"light", "dark"} and html["respect-user-color-scheme"] is True
    assert html["html-math-method"] == "mathml"  # formulas without MathJax from a CDN
    for layers in html["theme"].values():
        scss = [REPO / layer for layer in layers if layer.endswith(".scss")]
        assert len(scss) == 1 and scss[0].is_file()
        text = scss[0].read_text()
        assert "/*-- scss:defaults --*/" in text and "$web-font-path: false;" in text  # no fonts from outside
        assert "overflow-wrap: anywhere" in text  # long DOI links wrap at 390 px
        assert 'p:has(> math[display="block"])' in text  # a wide formula scrolls in its own box
    assert all((REPO / f).is_file() for f in config["filters"])
    assert "resources" not in config["project"]  # the pre-render step writes into the output folder itself
    assert html["include-in-header"]["text"] == '<link rel="icon" href="data:,">'  # no favicon.ico request


def test_a_plain_render_gets_every_pages_notebook_and_the_wheel_and_links_only_to_them(tmp_path):
    root = tiny_book(tmp_path / "book")
    pages = "index.qmd\nchapters/01-first.qmd\nchapters/02-second.qmd"
    done = prerender(root, QUARTO_PROJECT_INPUT_FILES=pages)
    assert done.returncode == 0, done.stdout + done.stderr
    site = root / "_book" / "notebooks"
    assert sorted(p.name for p in site.iterdir()) == sorted(
        ["index.ipynb", "01-first.ipynb", "02-second.ipynb", wheel_name(REPO)]
    )
    first = nbformat.read(site / "01-first.ipynb", as_version=4)
    code = [c for c in first.cells if c.cell_type == "code"]
    assert code[0].source == requirement_cell(wheel_name(REPO)) and code[1].outputs  # executed, as rlbook build does
    assert "The answer is 42." in "\n".join(c.source for c in first.cells if c.cell_type == "markdown")
    assert done.stdout.strip().splitlines()[-1].startswith("rlbook pre-render: 3 notebooks, the book's wheel written")
    assert linked(root, "01-first") and linked(root, "02-second")
    (site / "02-second.ipynb").unlink()  # a notebook missing from the site is never linked
    assert not linked(root, "02-second")


def test_rendering_one_page_executes_that_page_alone(tmp_path):
    root = tiny_book(tmp_path / "book")
    done = prerender(root, QUARTO_PROJECT_INPUT_FILES="chapters/02-second.qmd")
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(p.name for p in (root / "_build" / "executed").iterdir()) == ["02-second.ipynb"]


def test_after_rlbook_build_the_step_only_copies(tmp_path):
    root = tiny_book(tmp_path / "book")
    (root / "_build" / "notebooks").mkdir(parents=True)
    nbformat.write(nbformat.v4.new_notebook(), root / "_build" / "notebooks" / "01-first.ipynb")
    done = prerender(root, RLBOOK_PAGES_EXECUTED="1", QUARTO_PROJECT_RENDER_ALL="1")
    assert done.returncode == 0, done.stdout + done.stderr
    assert not (root / "_build" / "executed").exists()  # nothing executed, no runs trained
    assert linked(root, "01-first") and not linked(root, "02-second")


def test_a_page_whose_extra_is_missing_stops_the_render_in_one_line(tmp_path):
    root = tiny_book(tmp_path / "book", extra=True)
    done = prerender(root, QUARTO_PROJECT_RENDER_ALL="1")
    assert done.returncode == 1 and not (root / "_book").exists()
    assert done.stdout.strip().splitlines() == [
        (
            "rlbook pre-render: chapters/01-first.qmd needs the 'ghost' extra, and no_such_package_here is not "
            'installed (pip install -e ".[ghost]", see the README)'
        )
    ]


def test_input_files_come_from_the_variable_or_from_the_file_quarto_names(tmp_path):
    from rlbook.publish.prerender import input_files

    assert input_files({"QUARTO_PROJECT_INPUT_FILES": "a.qmd\nchapters/b.qmd\n"}) == ["a.qmd", "chapters/b.qmd"]
    listed = tmp_path / "files.txt"
    listed.write_text("chapters/c.qmd\n")
    assert input_files({"QUARTO_USE_FILE_FOR_PROJECT_INPUT_FILES": str(listed)}) == ["chapters/c.qmd"]
    assert json.dumps(input_files({})) == "[]"


def test_a_whole_book_render_in_a_fresh_clone_trains_the_missing_runs_first(tmp_path, monkeypatch):
    """No _build/ yet (issue 43's plain quarto render on a fresh clone): the prefetch runs, then the pages."""
    from rlbook.publish import runs_ahead
    from rlbook.publish.prerender import prerender as step

    root = tiny_book(tmp_path / "book")
    monkeypatch.setattr(runs_ahead, "prefetch_command", lambda jobs: [sys.executable, "-c", "print('runs trained')"])
    lines: list[str] = []
    environ = {"QUARTO_PROJECT_RENDER_ALL": "1", "QUARTO_PROJECT_OUTPUT_DIR": str(root / "_book")}
    assert step(root, environ, lines.append) == 0, "\n".join(lines)
    assert lines[0] == "runs trained" and (root / "_build" / "prefetch-done").is_file()
    assert (root / "_book" / "notebooks" / "01-first.ipynb").is_file()
