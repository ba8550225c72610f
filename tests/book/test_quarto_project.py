"""The Quarto project without Quarto (CI has none): ``_quarto.yml``'s settings, its pre- and post-render steps.

Quarto runs ``rlbook/publish/prerender.py`` with its Python before it
renders, in the project's folder, with ``QUARTO_PROJECT_OUTPUT_DIR`` and
``QUARTO_PROJECT_INPUT_FILES`` (or ``QUARTO_PROJECT_RENDER_ALL``) set, then
executes each page once in its own kernel and keeps the notebook it executed
it in (``<page>.quarto_ipynb``), then runs ``rlbook/publish/postrender.py``
with ``QUARTO_PROJECT_OUTPUT_FILES`` set. These tests run both steps the same
way on a tiny book whose first chapter is the page of
``tests/unit/publish/fixtures/quarto-kept/``, with the notebook Quarto 1.10.16
kept for it put where Quarto keeps it, and run the notebook-link filter with
pandoc and a stand-in for Quarto's Lua API on what they wrote.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import yaml

from rlbook.publish.execute import execute_notebook, qmd_to_notebook
from rlbook.publish.notebooks import executed_by_quarto
from rlbook.publish.render import pandoc_path
from rlbook.publish.site import ASSETS
from rlbook.publish.wheel import requirement_cell, wheel_name

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "rlbook" / "publish" / "prerender.py"
AFTER = REPO / "rlbook" / "publish" / "postrender.py"
KEPT = REPO / "tests" / "unit" / "publish" / "fixtures" / "quarto-kept"

QUARTO_YML = """\
project:
  type: book
  pre-render: rlbook/publish/prerender.py
book:
  title: "Tiny Book"
  chapters:
    - index.qmd
    - chapters/01-kept.qmd
    - chapters/02-second.qmd
"""
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
    (root / "chapters" / "01-kept.qmd").write_text(needs + (KEPT / "01-kept.qmd").read_text())
    (root / "chapters" / "02-second.qmd").write_text(SECOND)
    return root


def quarto_executes(root: Path, stem: str = "01-kept") -> None:
    """What Quarto leaves beside a page it has executed (``keep-ipynb``): here the notebook Quarto kept for the
    fixture page; for another page, that page read as a notebook, as if it printed nothing."""
    kept = root / "chapters" / f"{stem}.quarto_ipynb"
    if stem == "01-kept":
        shutil.copy(KEPT / "01-kept.executed.ipynb", kept)
    else:
        nbformat.write(qmd_to_notebook((root / "chapters" / f"{stem}.qmd").read_text()), kept)


def prerender(root: Path, script: Path = SCRIPT, **env: str) -> subprocess.CompletedProcess:
    """The pre-render step (or ``script``) as Quarto runs it: the file, with this Python, in the project's folder."""
    environ = {**os.environ, "QUARTO_PROJECT_OUTPUT_DIR": str(root / "_book"), **env}
    return subprocess.run(
        [sys.executable, str(script)], cwd=root, env=environ, capture_output=True, text=True, timeout=600, check=False
    )


def postrender(root: Path, *pages: str, **env: str) -> subprocess.CompletedProcess:
    """The post-render step as Quarto runs it after rendering ``pages`` (their HTML listed as its output files)."""
    written = "\n".join(f"_book/{page}" for page in pages)
    return prerender(root, AFTER, QUARTO_PROJECT_OUTPUT_FILES=written, **env)


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


def test_the_book_config_runs_both_steps_keeps_the_executed_notebooks_and_asks_for_an_offline_light_and_dark_site():
    config = yaml.safe_load((REPO / "_quarto.yml").read_text())
    assert (REPO / config["project"]["pre-render"]).resolve() == SCRIPT
    assert (REPO / config["project"]["post-render"]).resolve() == AFTER
    assert config["execute"]["keep-ipynb"] is True and config["execute"]["freeze"] is False
    assert "RLBOOK_BUILDING=1" in (REPO / "_environment").read_text().splitlines()  # Quarto's kernels, as rlbook's
    html = config["format"]["html"]
    assert set(html["theme"]) == {"light", "dark"} and html["respect-user-color-scheme"] is True
    assert html["html-math-method"] == "mathml"  # formulas without MathJax from a CDN
    for scheme, layers in html["theme"].items():
        scss = [REPO / layer for layer in layers if layer.endswith(".scss")]
        assert [p.name for p in scss] == ["quarto.scss", f"quarto-{scheme}.scss"] and all(p.is_file() for p in scss)
        text = scss[0].read_text()
        assert "/*-- scss:defaults --*/" in text and "$web-font-path: false;" in text  # no fonts from outside
        assert "overflow-wrap: anywhere" in text  # long DOI links wrap at 390 px
        assert 'p:has(> math[display="block"])' in text  # a wide formula scrolls in its own box
        assert ".rlbook-panels {" in text and ".rlbook-workshop legend {" in text
        own = scss[1].read_text()
        assert f"color-scheme: {scheme};" in own and "$body-secondary:" in own  # figures follow; captions at 4.5:1
    filters = {
        (f if isinstance(f, str) else f["path"]): (None if isinstance(f, str) else f["at"]) for f in config["filters"]
    }
    assert all((REPO / f).is_file() for f in filters)
    assert filters["rlbook/publish/assets/figure-panels.lua"] == "pre-ast"  # before Quarto makes sub-figures
    assert "resources" not in config["project"]  # the steps write into the output folder themselves
    assert html["include-in-header"]["text"] == '<link rel="icon" href="data:,">'  # no favicon.ico request


def test_a_plain_render_executes_each_page_once_and_gets_every_pages_notebook_and_the_wheel(tmp_path):
    root = tiny_book(tmp_path / "book")
    pages = "index.qmd\nchapters/01-kept.qmd\nchapters/02-second.qmd"
    done = prerender(root, QUARTO_PROJECT_INPUT_FILES=pages)  # not all: the book's runs are not trained here
    assert done.returncode == 0, done.stdout + done.stderr
    assert not (root / "_build" / "executed").exists()  # Quarto executes the pages, not the pre-render step
    assert not linked(root, "01-kept")  # nothing executed yet, no notebook in the site
    quarto_executes(root, "01-kept")
    quarto_executes(root, "02-second")
    assert linked(root, "01-kept") and linked(root, "02-second")  # the post-render step will write them
    done = postrender(root, "index.html", "chapters/01-kept.html", "chapters/02-second.html")
    assert done.returncode == 0, done.stdout + done.stderr
    site = root / "_book" / "notebooks"
    assert sorted(p.name for p in site.iterdir()) == sorted(
        ["index.ipynb", "01-kept.ipynb", "02-second.ipynb", wheel_name(REPO)]
    )
    first = nbformat.read(site / "01-kept.ipynb", as_version=4)
    code = [c for c in first.cells if c.cell_type == "code"]
    assert code[0].source == requirement_cell(wheel_name(REPO)) and code[2].outputs  # Quarto's outputs
    assert "The answer is 42, the share 45.7%" in "\n".join(c.source for c in first.cells if c.cell_type == "markdown")
    assert done.stdout.strip().splitlines()[-1].startswith("rlbook post-render: 3 notebooks written")
    assert not list((root / "chapters").glob("*.quarto_ipynb*"))  # the kept notebooks are gone
    assert linked(root, "01-kept") and linked(root, "02-second")  # now from the site's notebooks
    (site / "02-second.ipynb").unlink()  # a notebook missing from the site is never linked
    assert not linked(root, "02-second")


def test_quartos_execution_gives_the_notebook_rlbooks_own_execution_gives(tmp_path):
    text = (KEPT / "01-kept.qmd").read_text()
    ours = execute_notebook(qmd_to_notebook(text), tmp_path, "01-kept.qmd", text, figures="svg")  # fig-format
    quartos = executed_by_quarto(text, nbformat.read(KEPT / "01-kept.executed.ipynb", as_version=4), "01-kept.qmd")
    assert [c.source for c in quartos.cells] == [c.source for c in ours.cells]
    for mine, theirs in zip(ours.cells, quartos.cells, strict=True):
        if mine.cell_type == "code":
            assert (mine.execution_count is None) == (theirs.execution_count is None)
            assert [(o.output_type, sorted(o.get("data", {})), o.get("text")) for o in mine.outputs] == [
                (o.output_type, sorted(o.get("data", {})), o.get("text")) for o in theirs.outputs
            ]


def test_rendering_one_page_writes_that_pages_notebook_alone(tmp_path):
    root = tiny_book(tmp_path / "book")
    quarto_executes(root, "02-second")
    done = postrender(root, "chapters/02-second.html")
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(p.name for p in (root / "_build" / "executed").iterdir()) == ["02-second.ipynb"]
    assert sorted(p.name for p in (root / "_book" / "notebooks").iterdir()) == ["02-second.ipynb", wheel_name(REPO)]


def test_a_page_with_code_that_quarto_kept_no_notebook_for_stops_the_render(tmp_path):
    root = tiny_book(tmp_path / "book")
    done = postrender(root, "chapters/02-second.html")
    assert done.returncode == 1
    assert done.stdout.strip() == (
        "rlbook post-render: the notebooks for Jupyter: chapters/02-second.qmd: Quarto kept no executed notebook "
        "(keep-ipynb in _quarto.yml)"
    )


STAND_IN = """#!{python}
# A stand-in for `quarto render --output-dir DIR`: what Quarto does for rlbook, logged in quarto.log.
import os, shutil, subprocess, sys
from pathlib import Path
sys.path.insert(0, {tests!r})
from test_quarto_project import AFTER, SCRIPT, quarto_executes
root, out = Path.cwd(), sys.argv[sys.argv.index("--output-dir") + 1]
env = {{**os.environ, "QUARTO_PROJECT_OUTPUT_DIR": str(root / out), "QUARTO_PROJECT_RENDER_ALL": "1"}}
subprocess.run([sys.executable, str(SCRIPT)], cwd=root, env=env, check=True)
pages = {{"index": "index.html", "01-kept": "chapters/01-kept.html", "02-second": "chapters/02-second.html"}}
for stem, html in pages.items():
    if stem != "index":
        quarto_executes(root, stem)
        with open(root / "quarto.log", "a") as log:
            log.write(stem + "\\n")
    (root / out / html).parent.mkdir(parents=True, exist_ok=True)
    (root / out / html).write_text("<html><body><main><p>A page.</p></main></body></html>")
env["QUARTO_PROJECT_OUTPUT_FILES"] = "\\n".join(f"{{out}}/{{html}}" for html in pages.values())
subprocess.run([sys.executable, str(AFTER)], cwd=root, env=env, check=True)
"""


def test_rlbook_build_with_quarto_executes_each_page_once_in_quartos_kernels(tmp_path, monkeypatch):
    from rlbook.publish.build import build_book

    root = tiny_book(tmp_path / "book")
    (tmp_path / "bin").mkdir()
    quarto = tmp_path / "bin" / "quarto"
    quarto.write_text(STAND_IN.format(python=sys.executable, tests=str(Path(__file__).parent)))
    quarto.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    lines: list[str] = []
    assert build_book(root, backend="quarto", out=lines.append) == 0, "\n".join(lines)
    assert (root / "quarto.log").read_text().split() == ["01-kept", "02-second"]  # once each, by Quarto alone
    executed = sorted(p.name for p in (root / "_build" / "executed").iterdir())
    assert executed == ["01-kept.ipynb", "02-second.ipynb", "index.ipynb"]  # what the build's checks read
    assert (root / "_book" / "notebooks" / "01-kept.ipynb").is_file()
    assert lines[-1].startswith(f"book written to {root / '_book' / 'index.html'} (quarto)")


def test_a_render_that_stopped_leaves_no_kept_notebook_for_the_next(tmp_path):
    root = tiny_book(tmp_path / "book")
    quarto_executes(root, "01-kept")
    shutil.copy(root / "chapters" / "01-kept.quarto_ipynb", root / "chapters" / "01-kept.quarto_ipynb_1")
    done = prerender(root, QUARTO_PROJECT_INPUT_FILES="chapters/02-second.qmd")
    assert done.returncode == 0, done.stdout + done.stderr
    assert not list((root / "chapters").glob("*.quarto_ipynb*")) and not linked(root, "01-kept")


def test_a_page_whose_extra_is_missing_stops_the_render_in_one_line(tmp_path):
    root = tiny_book(tmp_path / "book", extra=True)
    done = prerender(root, QUARTO_PROJECT_RENDER_ALL="1")
    assert done.returncode == 1 and not (root / "_book").exists()
    assert done.stdout.strip().splitlines() == [
        (
            "rlbook pre-render: chapters/01-kept.qmd needs the 'ghost' extra, and no_such_package_here is not "
            'installed (pip install -e ".[ghost]", see the README)'
        )
    ]


def test_output_files_come_from_the_variable_or_from_the_file_quarto_names(tmp_path):
    from rlbook.publish.postrender import output_files

    assert output_files({"QUARTO_PROJECT_OUTPUT_FILES": "_book/a.html\n_book/c/b.html\n"}) == [
        "_book/a.html",
        "_book/c/b.html",
    ]
    listed = tmp_path / "files.txt"
    listed.write_text("_book/c/c.html\n")
    assert output_files({"QUARTO_USE_FILE_FOR_PROJECT_OUTPUT_FILES": str(listed)}) == ["_book/c/c.html"]
    assert json.dumps(output_files({})) == "[]"


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
    assert (root / "_book" / "notebooks" / wheel_name(REPO)).is_file()
