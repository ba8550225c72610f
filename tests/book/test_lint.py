"""Book lint: the real book is clean, and each broken rule in a small fixture book is caught."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from rlbook.publish.config import book_pages, page_heading
from rlbook.publish.lint import crossref_kind, lint_book, scan_source
from rlbook.publish.qmd import cell_options, split_qmd
from rlbook.publish.reader import lint_pages

ROOT = Path(__file__).resolve().parents[2]

CONFIG = {
    "project": {"type": "book"},
    "book": {
        "title": "T",
        "chapters": ["index.qmd", "chapters/01-a.qmd", "chapters/references.qmd"],
        "appendices": ["chapters/appendix-b.qmd"],
    },
    "bibliography": "references.bib",
}
BIB = "@book{known2020,\n  title = {Known},\n  author = {Doe, Jane},\n  year = {2020}\n}\n"
GOOD_CHAPTER = """# First chapter {#sec-first}

Text citing [@known2020] and @known2020, showing @fig-plot, @tbl-counts and @sec-part.
Mail me at someone@example.com; `@fig-in-code` and [a link](https://x.org/@handle) are not references.

```{python}
#| label: fig-plot
#| fig-cap: "A plot, after @known2020."
#| fig-alt: "A rising line."
plot()
```

## A part {#sec-part}

```{python}
#| label: tbl-counts
#| tbl-cap: "Counts."
table()
```

```python
# a verbatim block: @fig-nothing is not a reference here
```

![A diagram.](diagram.png){#fig-diagram fig-alt="Boxes and arrows."}
"""


def make_book(root: Path, chapter: str = GOOD_CHAPTER, config: dict | None = None, extra: dict | None = None) -> Path:
    """A small book: index, one chapter, a references page and an appendix."""
    (root / "chapters").mkdir(parents=True)
    (root / "_quarto.yml").write_text(yaml.safe_dump(config or CONFIG))
    (root / "references.bib").write_text(BIB)
    (root / "index.qmd").write_text("# Preface {.unnumbered}\n\nSee @sec-first.\n")
    (root / "chapters" / "01-a.qmd").write_text(chapter)
    (root / "chapters" / "references.qmd").write_text("# References {.unnumbered}\n\n::: {#refs}\n:::\n")
    (root / "chapters" / "appendix-b.qmd").write_text("# Appendix {#sec-appendix}\n\nMore.\n")
    for name, text in (extra or {}).items():
        (root / name).write_text(text)
    return root


def lint(root: Path) -> list[str]:
    return lint_book(root, out=lambda line: None)


def test_the_real_book_is_clean():
    assert lint_book(ROOT) == []


def test_every_page_reads_clean_for_the_reader():
    problems = lint_pages(ROOT)
    assert problems == [], "\n".join(problems)


def test_a_chapter_on_its_facts_is_held_to_the_page_rules(tmp_path):
    facts = '```{python}\n#| include: false\nfrom rlbook import book\nF = book.load("loop")\n```\n\n'
    chapter = GOOD_CHAPTER.replace(
        "## A part", facts + "Rate `{python} F.rate`, then `{python} round(F.rate, 1)`.\n\n## A part"
    )
    rules = [p for p in lint_pages(make_book(tmp_path, chapter)) if "not a reference into the facts" in p]
    assert len(rules) == 1 and "round(F.rate, 1)" in rules[0]


def test_a_good_fixture_book_is_clean(tmp_path):
    assert lint(make_book(tmp_path)) == []


def test_an_unresolved_reference_is_reported_with_its_line(tmp_path):
    root = make_book(tmp_path, GOOD_CHAPTER + "\nSee @fig-missing.\n")
    line = GOOD_CHAPTER.count("\n") + 2
    assert lint(root) == [f"chapters/01-a.qmd:{line}: @fig-missing refers to no label in the book"]


def test_capitalised_references_resolve(tmp_path):
    assert lint(make_book(tmp_path, GOOD_CHAPTER + "\n@Fig-plot and [-@sec-part].\n")) == []


def test_a_duplicate_label_is_reported(tmp_path):
    root = make_book(tmp_path, GOOD_CHAPTER + "\n## Again {#sec-part}\n")
    assert any("label sec-part is already defined at chapters/01-a.qmd:" in p for p in lint(root))


@pytest.mark.parametrize("option", ["fig-cap", "fig-alt"])
def test_a_figure_cell_needs_a_caption_and_alt_text(tmp_path, option):
    chapter = re.sub(rf"#\| {option}: .*\n", "", GOOD_CHAPTER)
    assert lint(make_book(tmp_path, chapter)) == [f"chapters/01-a.qmd:7: figure cell fig-plot has no {option}"]


def test_a_markdown_figure_needs_alt_text(tmp_path):
    chapter = GOOD_CHAPTER.replace(' fig-alt="Boxes and arrows."', "")
    problems = lint(make_book(tmp_path, chapter))
    assert len(problems) == 1 and problems[0].endswith("figure fig-diagram has no fig-alt")


def test_a_table_cell_needs_a_caption(tmp_path):
    chapter = GOOD_CHAPTER.replace('#| tbl-cap: "Counts."\n', "")
    assert lint(make_book(tmp_path, chapter)) == ["chapters/01-a.qmd:16: table cell tbl-counts has no tbl-cap"]


def test_an_unknown_citation_key_is_reported(tmp_path):
    problems = lint(make_book(tmp_path, GOOD_CHAPTER + "\nAs [see @nobody2021, p. 3] said.\n"))
    assert len(problems) == 1 and "citation @nobody2021 is not in references.bib" in problems[0]


def test_a_citation_in_a_figure_caption_is_checked(tmp_path):
    chapter = GOOD_CHAPTER.replace("after @known2020", "after @ghost1999")
    assert any("@ghost1999 is not in references.bib" in p for p in lint(make_book(tmp_path, chapter)))


def test_a_missing_chapter_and_an_unlisted_one_are_reported(tmp_path):
    root = make_book(tmp_path, extra={"chapters/02-stray.qmd": "# Stray\n"})
    (root / "chapters" / "appendix-b.qmd").unlink()
    assert sorted(lint(root)) == [
        "_quarto.yml: lists chapters/appendix-b.qmd, which does not exist",
        "chapters/02-stray.qmd: not listed in _quarto.yml",
    ]


@pytest.mark.parametrize("word", ["illustrative", "TODO", "Lorem"])
def test_placeholder_words_are_reported(tmp_path, word):
    problems = lint(make_book(tmp_path, GOOD_CHAPTER + f"\nThis is {word} text.\n"))
    assert problems == [f"chapters/01-a.qmd:{GOOD_CHAPTER.count(chr(10)) + 2}: placeholder word {word!r}"]


def test_an_inline_value_opening_a_list_items_line_is_reported(tmp_path):
    item = "\n- Sums split into right\n  (`{python} n_right`), and wrong\n  `{python} n_wrong` of them.\n"
    problems = lint(make_book(tmp_path, GOOD_CHAPTER + item))
    first = GOOD_CHAPTER.count("\n") + 3  # a blank line, the item, then its two continuation lines
    assert [p.split(": ")[0] for p in problems] == [f"chapters/01-a.qmd:{first}", f"chapters/01-a.qmd:{first + 1}"]
    assert "list marker" in problems[0]


def test_an_inline_value_inside_a_line_or_opening_a_paragraph_line_is_fine(tmp_path):
    text = "\nRight on\n`{python} share` of sums.\n\n- Sums split into right (`{python} n_right`).\n"
    assert lint(make_book(tmp_path, GOOD_CHAPTER + text)) == []


def test_a_straight_apostrophe_after_inline_code_is_reported_and_a_curly_one_is_fine(tmp_path):
    problems = lint(make_book(tmp_path / "a", GOOD_CHAPTER + "\nPairs of `base`'s answers.\n"))
    assert len(problems) == 1 and "write ’ instead" in problems[0]
    assert lint(make_book(tmp_path / "b", GOOD_CHAPTER + "\nPairs of `base`’s answers; the code `' 7'`.\n")) == []


def test_references_the_pandoc_build_does_not_number_are_reported(tmp_path):
    problems = lint(make_book(tmp_path, GOOD_CHAPTER + "\nBy @eq-loss.\n"))
    assert len(problems) == 1 and "@eq-loss: the book numbers only fig-, sec- and tbl- references" in problems[0]


def test_shared_prose_reported_by_the_overlap_tool_is_a_problem(tmp_path):
    root = make_book(tmp_path / "book")
    tool = tmp_path / "overlap.py"
    tool.write_text(
        "import sys\nprint(sys.argv[1] + ': shares 12 words: \"a b c\"')\nprint('1 shared runs')\nsys.exit(1)\n"
    )
    problems = lint_book(root, out=lambda line: None, overlap_tool=tool)
    assert problems == ['index.qmd: shares 12 words: "a b c" (prose shared with a source text)']


def test_a_missing_overlap_tool_is_skipped_with_a_note(tmp_path):
    notes: list[str] = []
    assert lint_book(make_book(tmp_path), out=notes.append, overlap_tool=tmp_path / "absent.py") == []
    assert len(notes) == 1 and "source-overlap check skipped" in notes[0]


def test_cell_options_are_yaml_and_the_code_follows_them():
    options, code = cell_options('#| label: fig-a\n#| fig-cap: "Two: words"\n#| echo: false\nx = 1\n#| not an option')
    assert options == {"label": "fig-a", "fig-cap": "Two: words", "echo": False}
    assert code == "x = 1\n#| not an option"
    with pytest.raises(ValueError):
        cell_options("#| label: [unclosed\nx = 1")


def test_split_qmd_separates_front_matter_prose_cells_and_verbatim_fences():
    text = (
        "---\ntitle: T\n---\n\nProse.\n\n```{python}\n#| echo: false\nx = 1\n```\n\n````markdown\n```{python}\n````\n"
    )
    kinds = [(b.kind, b.line) for b in split_qmd(text)]
    assert kinds == [("front", 2), ("markdown", 4), ("code", 8), ("markdown", 11), ("verbatim", 12), ("markdown", 15)]
    assert split_qmd(text)[2].options == {"echo": False}


def test_page_heading_reads_title_and_numbering():
    assert page_heading("# References {.unnumbered}\n") == ("References", False)
    assert page_heading("# The loop {#sec-loop}\n\n## Part\n") == ("The loop", True)
    assert page_heading("---\ntitle: From YAML\n---\n# Not this\n") == ("From YAML", True)


def test_book_pages_number_chapters_and_letter_appendices(tmp_path):
    pages = book_pages(make_book(tmp_path))
    assert [(p.source, p.part, p.number) for p in pages] == [
        ("index.qmd", "front", None),
        ("chapters/01-a.qmd", "main", "1"),
        ("chapters/references.qmd", "main", None),
        ("chapters/appendix-b.qmd", "appendix", "A"),
    ]


def test_crossref_kind_tells_references_from_citations():
    assert [crossref_kind(k) for k in ("fig-a", "Sec-b", "tbl-c", "eq-d", "smith2020", "van-der-berg")] == [
        "fig",
        "sec",
        "tbl",
        "other",
        None,
        None,
    ]


def test_scan_source_ignores_code_spans_link_targets_and_emails():
    facts = scan_source("x.qmd", "`@fig-a` [t](https://x.org/@fig-b) me@fig-c.org @known2020\n")
    assert facts.refs == [] and [c.key for c in facts.citations] == ["known2020"]


def _dependency_names(requirements: list[str]) -> set[str]:
    return {re.split(r"[<>=!~\[ ;]", r, maxsplit=1)[0].lower().replace("_", "-") for r in requirements}


def test_environment_yml_and_pyproject_name_the_same_packages():
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    conda = [d for d in env["dependencies"] if isinstance(d, str)]
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    conda_to_pypi = {"pytorch": "torch"}
    conda_only = {"python", "pip", "quarto"}  # the toolchain
    pip_only = {"pypandoc-binary", "pagefind"}  # taken from PyPI: the pip step installs them with the package
    from_conda = {conda_to_pypi.get(n, n) for n in _dependency_names(conda)} - conda_only
    wanted = _dependency_names(project["dependencies"] + project["optional-dependencies"]["dev"]) - pip_only
    assert from_conda == wanted
    assert "-e ." in pip
    torch_pin = next(d for d in project["dependencies"] if d.startswith("torch=="))
    conda_torch = next(d for d in conda if d.startswith("pytorch="))
    assert conda_torch.split("=")[1] == torch_pin.split("==")[1], "the two files pin different torch versions"
    assert conda_torch.endswith("=cpu*"), "the conda environment must take the CPU build of pytorch"


def test_quarto_config_lists_the_book():
    config = yaml.safe_load((ROOT / "_quarto.yml").read_text())
    assert config["project"] == {
        "type": "book",
        "output-dir": "_book",
        "pre-render": "rlbook/publish/prerender.py",
        "post-render": "rlbook/publish/postrender.py",
    }
    assert config["book"]["chapters"][0] == "index.qmd" and config["bibliography"] == "references.bib"
    assert config["execute"] == {"freeze": False, "error": False, "keep-ipynb": True}
    for lua in config.get("filters", []):
        assert (ROOT / (lua["path"] if isinstance(lua, dict) else lua)).is_file()


def test_readme_images_exist_and_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    images = re.findall(r"!\[[^\]]+\]\(([^)]+)\)", readme)
    assert images, "the README shows a figure from the book"
    assert all((ROOT / image).is_file() for image in images), images
    assert "make book" in readme and "make test" in readme
    ci = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"^make test$", ci, re.MULTILINE), "CI must run the README's test command"
