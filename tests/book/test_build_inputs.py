"""The book build (rlbook.publish.build) on bad inputs: each fails with one line, and the previous ``_book/`` stays.

The fixture book has no code cells, so no kernel starts and each build is
only pandoc's work. A good build writes ``_book/`` first; every bad input
then has to end with a non-zero exit, one line naming the file or the
chapter (no traceback, no pandoc command line), the same ``_book/`` byte
for byte, and nothing written outside the book's folder.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from rlbook.publish.build import build_book

QUARTO_YML = """\
project:
  type: book
book:
  title: "Hostile Book"
  chapters:
    - index.qmd
    - chapters/01-first.qmd
    - chapters/references.qmd
bibliography: references.bib
"""
BIB = """\
@book{sutton2018reinforcement,
  title = {Reinforcement Learning: An Introduction},
  author = {Sutton, Richard S. and Barto, Andrew G.},
  year = {2018}, publisher = {MIT Press}
}
"""
FIRST = """\
# The first chapter {#sec-first}

Rewards follow @sutton2018reinforcement, as [@sutton2018reinforcement] shows.

![A diagram.](diagram.png){fig-alt="A small diagram."}
"""


def write_book(root: Path) -> Path:
    (root / "chapters").mkdir(parents=True)
    (root / "_quarto.yml").write_text(QUARTO_YML)
    (root / "references.bib").write_text(BIB)
    (root / "index.qmd").write_text("# Preface {.unnumbered}\n\nOne chapter: @sec-first.\n")
    (root / "chapters" / "01-first.qmd").write_text(FIRST)
    (root / "chapters" / "diagram.png").write_bytes(b"\x89PNG\r\n\x1a\n not really a picture")
    (root / "chapters" / "references.qmd").write_text("# References {.unnumbered}\n\n::: {#refs}\n:::\n")
    return root


def snapshot(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` with the SHA-256 of its bytes."""
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """The fixture book with its good ``_book/`` (built once)."""
    root = write_book(tmp_path_factory.mktemp("good") / "a" / "b" / "c" / "book")
    lines: list[str] = []
    assert build_book(root, backend="pandoc", out=lines.append) == 0, "\n".join(lines)
    assert {"index.html", "chapters/01-first.html", "chapters/diagram.png"} <= set(snapshot(root / "_book"))
    return root


@pytest.fixture
def book(built, tmp_path) -> Path:
    """A copy of the built book (with its ``_book/``) at the same depth, for one test to damage."""
    root = tmp_path / "a" / "b" / "c" / "book"
    shutil.copytree(built, root)
    return root


def fails_keeping_the_book(root: Path, fragment: str) -> str:
    """Build ``root``; assert a non-zero exit with one short error line holding ``fragment`` and ``_book/`` unchanged."""
    before = snapshot(root / "_book")
    lines: list[str] = []
    code = build_book(root, backend="pandoc", out=lines.append)
    text = "\n".join(lines)
    assert code != 0, text
    assert "Traceback" not in text and "book written" not in text, text
    errors = [line for line in lines if line.startswith("rlbook build:")]
    assert len(errors) == 1 and fragment in errors[0], text
    assert "\n" not in errors[0] and len(errors[0]) < 400, errors[0]
    assert lines[-1] == errors[0] or lines[-1].startswith("The previous _book/"), text
    assert snapshot(root / "_book") == before, "the previous _book/ was changed"
    return errors[0]


# ---------------------------------------------------------------- point 1: the configuration

BAD_CONFIGS = [
    ("empty", "", "_quarto.yml lists no pages"),
    ("only-a-comment", "# nothing here\n", "_quarto.yml lists no pages"),
    ("no-chapters", "book:\n  title: x\n", "_quarto.yml lists no pages"),
    ("numbers-as-chapters", "book:\n  chapters: [1, 2]\n", "_quarto.yml: book.chapters[0] is 1"),
    ("null-chapter", "book:\n  chapters:\n    - index.qmd\n    -\n", "_quarto.yml: book.chapters[1] is None"),
    ("book-is-a-number", "book: 5\n", "_quarto.yml: book is 5, not a mapping"),
    ("chapters-is-a-string", "book:\n  chapters: index.qmd\n", "_quarto.yml: book.chapters is 'index.qmd', not a list"),
    ("top-level-list", "- index.qmd\n", "_quarto.yml: holds a list, not a mapping"),
    ("invalid-yaml", "book:\n  chapters: [index.qmd\n", "_quarto.yml: not valid YAML (line"),
    ("tab-indented", "book:\n\tchapters: []\n", "_quarto.yml: not valid YAML (line 2"),
    (
        "part-without-list",
        "book:\n  chapters:\n    - part: One\n      chapters: 3\n",
        "_quarto.yml: book.chapters[0].chapters is 3, not a list",
    ),
]


@pytest.mark.parametrize("text, fragment", [(t, f) for _, t, f in BAD_CONFIGS], ids=[n for n, _, _ in BAD_CONFIGS])
def test_a_bad_configuration_fails_in_one_line_and_keeps_the_book(book, text, fragment):
    (book / "_quarto.yml").write_text(text)
    fails_keeping_the_book(book, fragment)


def test_a_configuration_that_is_not_text_fails_in_one_line(book):
    (book / "_quarto.yml").write_bytes(b"\xff\xfe\x00book")
    fails_keeping_the_book(book, "_quarto.yml: not a UTF-8 text file")


def test_a_configuration_that_is_a_fifo_or_a_device_fails_in_one_line(book):
    import os

    (book / "_quarto.yml").unlink()
    os.mkfifo(book / "_quarto.yml")  # reading it would wait for a writer forever
    fails_keeping_the_book(book, "_quarto.yml: not a regular file")
    (book / "_quarto.yml").unlink()
    (book / "_quarto.yml").symlink_to("/dev/zero")  # reading it would fill the memory
    fails_keeping_the_book(book, "_quarto.yml: not a regular file")


def test_a_missing_configuration_fails_in_one_line(book):
    (book / "_quarto.yml").unlink()
    fails_keeping_the_book(book, "_quarto.yml: missing")


def test_a_page_that_is_a_folder_or_not_text_fails_in_one_line(book):
    (book / "chapters" / "01-first.qmd").unlink()
    (book / "chapters" / "01-first.qmd").mkdir()
    fails_keeping_the_book(book, "chapters/01-first.qmd: cannot be read")
    (book / "chapters" / "01-first.qmd").rmdir()
    (book / "chapters" / "01-first.qmd").write_bytes(b"# Title\n\xff\xfe")
    fails_keeping_the_book(book, "chapters/01-first.qmd: not a UTF-8 text file")


def test_a_page_with_bad_front_matter_fails_in_one_line(book):
    (book / "chapters" / "01-first.qmd").write_text("---\ntitle: [unclosed\n---\n\nText.\n")
    fails_keeping_the_book(book, "chapters/01-first.qmd: front matter is not valid YAML")


def test_a_build_with_no_page_never_replaces_the_book(book, monkeypatch):
    """Whatever the reason, a site without its pages is never swapped in for the previous one."""
    from rlbook.publish import render

    monkeypatch.setattr(render, "render_site", lambda *args, **kwargs: [])  # writes no page at all
    fails_keeping_the_book(book, "the new site lacks index.html")


# ---------------------------------------------------------------- point 5: the bibliography


def test_a_missing_citation_key_fails_naming_the_chapter(book):
    text = (book / "chapters" / "01-first.qmd").read_text()
    (book / "chapters" / "01-first.qmd").write_text(text + "\nAs @nonexistent2099 claims.\n")
    fails_keeping_the_book(book, "chapters/01-first.qmd:7: citation @nonexistent2099 is not in references.bib")


def test_a_deleted_bibliography_fails_naming_the_file(book):
    (book / "references.bib").unlink()
    fails_keeping_the_book(book, "references.bib: missing")


MALFORMED_BIBS = [
    ("unclosed-brace", b"@book{broken,\n  title = {Unclosed\n", "references.bib: not a valid BibTeX file (line"),
    (
        "unclosed-entry",
        b"@book{a, title = {x}\n@book{b, title = {y}}\n",
        "references.bib: not a valid BibTeX file (line 2, column 1: unexpected '@')",
    ),
    ("missing-comma", b"@book{a title = {x}}\n", "references.bib: not a valid BibTeX file (line 1, column 9"),
    ("not-utf8", b"\xff\xfe\x00\x01 binary", "references.bib: not a UTF-8 text file"),
    ("no-entries", b"just words, no entry\n", "citation @sutton2018reinforcement is not in references.bib"),
]


@pytest.mark.parametrize(
    "data, fragment", [(d, f) for _, d, f in MALFORMED_BIBS], ids=[n for n, _, _ in MALFORMED_BIBS]
)
def test_a_malformed_bibliography_fails_in_one_line_naming_the_file(book, data, fragment):
    (book / "references.bib").write_bytes(data)
    error = fails_keeping_the_book(book, fragment)
    assert "--citeproc" not in error and "--template" not in error  # no pandoc command line


def test_a_bibliography_that_is_a_folder_fails_in_one_line(book):
    (book / "references.bib").unlink()
    (book / "references.bib").mkdir()
    fails_keeping_the_book(book, "references.bib: not a regular file")


def test_a_bibliography_outside_the_book_is_refused(book):
    (book / "_quarto.yml").write_text(QUARTO_YML.replace("bibliography: references.bib", "bibliography: /etc/passwd"))
    fails_keeping_the_book(book, "_quarto.yml: bibliography '/etc/passwd' must be a path inside the book")


# ---------------------------------------------------------------- point 6: paths outside the book


def test_an_absolute_page_path_is_refused_and_nothing_is_written_outside(book, tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "evil.qmd").write_text("# Evil\n\nText.\n")
    (book / "_quarto.yml").write_text(
        QUARTO_YML.replace(
            "    - chapters/references.qmd", f"    - chapters/references.qmd\n    - {outside / 'evil.qmd'}"
        )
    )
    fails_keeping_the_book(book, f"_quarto.yml: page path '{outside / 'evil.qmd'}' must be a path inside the book")
    assert sorted(p.name for p in outside.iterdir()) == ["evil.qmd"]


def test_a_page_path_that_climbs_out_is_refused(book):
    (book.parent / "evil.qmd").write_text("# Evil\n\nText.\n")
    (book / "_quarto.yml").write_text(
        QUARTO_YML.replace("    - chapters/references.qmd", "    - chapters/references.qmd\n    - ../evil.qmd")
    )
    fails_keeping_the_book(book, "_quarto.yml: page path '../evil.qmd' must be a path inside the book")
    assert not (book.parent / "evil.html").exists()


def test_an_image_path_that_climbs_out_is_refused_and_nothing_is_copied_outside(book):
    # From chapters/, four steps up reach the folder three above the book: the old copy read the
    # image there and wrote it two levels lower (the site is staged two folders deep), outside the book.
    source = book.parents[2] / "x" / "pic.png"
    source.parent.mkdir()
    source.write_bytes(b"\x89PNG not a picture")
    text = (book / "chapters" / "01-first.qmd").read_text()
    (book / "chapters" / "01-first.qmd").write_text(text + '\n![Out.](../../../../x/pic.png){fig-alt="Out."}\n')
    fails_keeping_the_book(book, "chapters/01-first.qmd: image '../../../../x/pic.png' lies outside the book")
    assert not (book.parent / "x").exists()


def test_an_image_inside_the_book_reached_through_dot_dot_is_copied(book):
    (book / "figures").mkdir()
    (book / "figures" / "shared.png").write_bytes(b"\x89PNG shared")
    text = (book / "chapters" / "01-first.qmd").read_text()
    (book / "chapters" / "01-first.qmd").write_text(text + '\n![Shared.](../figures/shared.png){fig-alt="S."}\n')
    lines: list[str] = []
    assert build_book(book, backend="pandoc", out=lines.append) == 0, "\n".join(lines)
    assert (book / "_book" / "figures" / "shared.png").read_bytes() == b"\x89PNG shared"
