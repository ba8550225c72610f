"""Book lint: checking the book's sources for what a reader would trip over.

Used for the whole book (every chapter): ``tests/book/test_lint.py`` runs
:func:`lint_book` on the real repository, and the build checks citations
through :func:`scan_source`. The pages are read with
:mod:`rlbook.publish.config` (the page list) and :mod:`rlbook.publish.qmd`
(a page's cells). The checks are the ones the design asks for: every
``@fig-``/``@sec-``/``@tbl-`` reference resolves to a label, labels are
unique, every figure cell has a caption and alt text, every citation key is
in ``references.bib``, the chapter list in ``_quarto.yml`` matches the files
in ``chapters/``, no placeholder words are left in the text, no inline value
opens a line where its number could become a list marker, no straight
apostrophe follows inline code (pandoc may read it as an opening quote), and no run of
words is shared with the source texts. (What the reader sees, cell by cell,
is checked by :mod:`rlbook.publish.reader`.)

Labels are ``{#sec-...}`` attributes in the prose or ``#| label:`` options in
cells; citations are pandoc's ``[@key]`` and ``@key``.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from rlbook.publish.config import ConfigError, listed_files, read_config
from rlbook.publish.qmd import Block, line_of, split_qmd

CROSSREF_KINDS = {"fig": "Figure", "sec": "Section", "tbl": "Table"}
"""The cross-reference kinds this book uses, with the word a reference renders as."""

OTHER_QUARTO_PREFIXES = ("eq", "lst", "thm", "lem", "cor", "prp", "cnj", "def", "exm", "exr", "sol", "rem")
"""Quarto reserves these prefixes for cross-references that the pandoc build does not number."""

PLACEHOLDER = re.compile(r"\b(illustrative|TODO|FIXME|lorem)\b", re.IGNORECASE)
INLINE_CODE = re.compile(r"(`+)(.+?)\1", re.DOTALL)
LINK_TARGET = re.compile(r"\]\([^)\s]*(?:\s+\"[^\"]*\")?\)|<https?://[^>]*>|https?://\S+")
LEADING_VALUE = re.compile(r"^[ \t]{2,}\(?`\{python\}", re.MULTILINE)
"""An inline value that opens an indented line (a list item's continuation), alone or after
"(": once the value is a number, pandoc can read ``(21)`` or ``7.`` there as a nested list."""
APOSTROPHE_AFTER_CODE = re.compile(r"`'(?=\w)")
"""A straight apostrophe right after inline code (`` `base`'s ``): pandoc's smart quotes can read it as an
opening quote, closed by the next apostrophe of the paragraph, and print ‘s; the book writes ’ there."""
AT_KEY = re.compile(r"(?<![\w@\\])(-?)@(\w+(?:[:.#$%&+?<>~/-]\w+)*)")
ATTR_ID = re.compile(r"\{#([\w-]+)([^}]*)\}")
MD_FIGURE = re.compile(r"!\[[^\]]*\]\([^)]*\)\{#(fig-[\w-]+)([^}]*)\}")
BIB_KEY = re.compile(r"^\s*@\w+\s*\{\s*([^,\s]+)\s*,", re.MULTILINE)


@dataclass(frozen=True)
class Mention:
    """A label, reference or citation key found in a file, with where it was found."""

    key: str
    where: str  # "path:line"


def prose_for_scanning(markdown: str, keep_links: bool = False) -> str:
    """Prose with inline code spans (and, unless ``keep_links``, link targets) blanked, so that an
    ``@`` in them is not read as a reference. Lengths and line breaks are kept, so offsets still map to lines.
    """
    without_code = INLINE_CODE.sub(_blank, markdown)
    return without_code if keep_links else LINK_TARGET.sub(_blank, without_code)


def _blank(match: re.Match) -> str:
    return re.sub(r"[^\n]", " ", match.group(0))


def at_mentions(text: str) -> Iterator[tuple[str, int]]:
    """Every ``@key`` in prose (citations and cross-references alike), with its offset."""
    for match in AT_KEY.finditer(text):
        yield match.group(2), match.start()


def crossref_kind(key: str) -> str | None:
    """``"fig"``, ``"sec"`` or ``"tbl"`` for a cross-reference key (``@Fig-x`` too), ``"other"`` for
    Quarto's other reserved prefixes, and None for a citation key."""
    prefix = key.split("-", 1)[0]
    if "-" in key and prefix.lower() in CROSSREF_KINDS and prefix[1:].islower():
        return prefix.lower()
    if "-" in key and prefix in OTHER_QUARTO_PREFIXES:
        return "other"
    return None


def normalise_ref(key: str) -> str:
    """The label a reference points at: ``Fig-x`` and ``fig-x`` both point at ``fig-x``."""
    return key[0].lower() + key[1:]


def bib_keys(bib_text: str) -> set[str]:
    """The entry keys of a BibTeX file."""
    return set(BIB_KEY.findall(bib_text))


@dataclass
class SourceFacts:
    """What one ``.qmd`` file defines and mentions (see :func:`scan_source`)."""

    labels: list[Mention] = field(default_factory=list)
    refs: list[Mention] = field(default_factory=list)
    citations: list[Mention] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def scan_source(path: str, text: str) -> SourceFacts:
    """Labels, cross-references and citations of one ``.qmd`` file, and the problems seen on the way.

    Problems found here: invalid cell options, figure cells without
    ``fig-cap`` or ``fig-alt``, table cells without ``tbl-cap``, markdown
    figures without ``fig-alt``, and cross-references of kinds the book does
    not number.
    """
    facts = SourceFacts()
    try:
        blocks = split_qmd(text)
    except ValueError as err:
        facts.problems.append(f"{path}: {err}")
        return facts
    for block in blocks:
        if block.kind == "code":
            _scan_cell(path, block, facts)
        elif block.kind == "markdown":
            _scan_prose(path, block.text, block.line, facts)
    return facts


def _scan_cell(path: str, block: Block, facts: SourceFacts) -> None:
    where = f"{path}:{block.line}"
    label = block.options.get("label")
    if isinstance(label, str):
        facts.labels.append(Mention(label, where))
        if label.startswith("fig-"):
            for option in ("fig-cap", "fig-alt"):
                if not str(block.options.get(option) or "").strip():
                    facts.problems.append(f"{where}: figure cell {label} has no {option}")
        if label.startswith("tbl-") and not str(block.options.get("tbl-cap") or "").strip():
            facts.problems.append(f"{where}: table cell {label} has no tbl-cap")
    for option in ("fig-cap", "tbl-cap"):
        if isinstance(block.options.get(option), str):
            _scan_prose(path, block.options[option], block.line, facts)


def _scan_prose(path: str, markdown: str, first_line: int, facts: SourceFacts) -> None:
    prose = prose_for_scanning(markdown)

    def where(offset: int) -> str:
        return f"{path}:{first_line + line_of(prose, offset) - 1}"

    for match in ATTR_ID.finditer(prose):
        if crossref_kind(match.group(1)) in CROSSREF_KINDS:
            facts.labels.append(Mention(match.group(1), where(match.start())))
    for match in MD_FIGURE.finditer(prose_for_scanning(markdown, keep_links=True)):
        if "fig-alt=" not in match.group(2):
            facts.problems.append(f"{where(match.start())}: figure {match.group(1)} has no fig-alt")
    for match in LEADING_VALUE.finditer(markdown):
        facts.problems.append(
            f"{path}:{first_line + line_of(markdown, match.start()) - 1}: an inline value opens "
            "the line; a number there can become a list marker, so move it into the line"
        )
    for match in APOSTROPHE_AFTER_CODE.finditer(markdown):
        facts.problems.append(
            f"{path}:{first_line + line_of(markdown, match.start()) - 1}: a straight apostrophe after inline code "
            "can print as an opening quote; write ’ instead"
        )
    for key, offset in at_mentions(prose):
        kind = crossref_kind(key)
        if kind == "other":
            facts.problems.append(f"{where(offset)}: @{key}: the book numbers only fig-, sec- and tbl- references")
        elif kind:
            facts.refs.append(Mention(normalise_ref(key), where(offset)))
        else:
            facts.citations.append(Mention(key, where(offset)))


def overlap_tool_path(root: Path) -> Path:
    """Where the shared source-overlap tool lives: ``shared/tools`` beside the repository."""
    return Path(root).resolve().parent / "shared" / "tools" / "source_overlap.py"


def lint_book(root: Path, out: Callable[[str], None] = print, overlap_tool: Path | None = None) -> list[str]:
    """Every problem found in the book at ``root``, as ``"path:line: message"`` strings (empty when clean).

    Checks, in order: ``_quarto.yml`` lists files that exist and every
    ``chapters/*.qmd`` is listed; cell options parse; figure and table cells
    have captions (and figures alt text); labels are unique; every
    ``@fig-``/``@sec-``/``@tbl-`` reference resolves; every citation key is in
    ``references.bib``; no "illustrative", "TODO", "FIXME" or "lorem" is left
    in the pages; and no prose is shared with the source texts (the shared
    tool, skipped with a note through ``out`` when it is absent).
    """
    root = Path(root).resolve()
    problems: list[str] = []
    try:
        listed = [source for source, _ in listed_files(read_config(root))]
    except ConfigError as err:
        return [str(err)]
    problems += _check_listing(root, listed)
    pages = [source for source in listed if (root / source).is_file()]

    facts = SourceFacts()
    for source in pages:
        text = (root / source).read_text(encoding="utf-8")
        found = scan_source(source, text)
        for name in ("labels", "refs", "citations", "problems"):
            getattr(facts, name).extend(getattr(found, name))
        problems += _placeholders(source, text)
    problems += facts.problems
    problems += _check_labels(facts)
    problems += _check_citations(root, facts)
    problems += _check_overlap(root, pages, out, overlap_tool or overlap_tool_path(root))
    return problems


def _check_listing(root: Path, listed: list[str]) -> list[str]:
    problems = [
        f"_quarto.yml: lists {source}, which does not exist" for source in listed if not (root / source).is_file()
    ]
    if "index.qmd" not in listed:
        problems.append("_quarto.yml: index.qmd must be the first page of the book")
    for path in sorted((root / "chapters").glob("*.qmd")):
        source = path.relative_to(root).as_posix()
        if source not in listed:
            problems.append(f"{source}: not listed in _quarto.yml")
    stems = [Path(source).stem for source in listed]
    twice = sorted({stem for stem in stems if stems.count(stem) > 1})
    problems += [f"_quarto.yml: two pages are named {stem}" for stem in twice]
    return problems


def _placeholders(source: str, text: str) -> list[str]:
    return [f"{source}:{line_of(text, m.start())}: placeholder word {m.group(0)!r}" for m in PLACEHOLDER.finditer(text)]


def _check_labels(facts: SourceFacts) -> list[str]:
    problems = []
    first: dict[str, str] = {}
    for label in facts.labels:
        if label.key in first:
            problems.append(f"{label.where}: label {label.key} is already defined at {first[label.key]}")
        else:
            first[label.key] = label.where
    for ref in facts.refs:
        if ref.key not in first:
            problems.append(f"{ref.where}: @{ref.key} refers to no label in the book")
    return problems


def _check_citations(root: Path, facts: SourceFacts) -> list[str]:
    bib = root / "references.bib"
    if not bib.is_file():
        return ["references.bib: missing"] if facts.citations else []
    known = bib_keys(bib.read_text(encoding="utf-8"))
    return [f"{c.where}: citation @{c.key} is not in references.bib" for c in facts.citations if c.key not in known]


def _check_overlap(root: Path, pages: list[str], out: Callable[[str], None], tool: Path) -> list[str]:
    if not tool.is_file():
        out(f"lint: source-overlap check skipped: {tool} not found (it lives in shared/tools beside the repository)")
        return []
    targets = [str(root / p) for p in pages] + [str(root / p) for p in ("README.md", "rlbook") if (root / p).exists()]
    if not targets:
        return []
    done = subprocess.run([sys.executable, str(tool), *targets], capture_output=True, text=True, check=False)
    if done.returncode == 0:
        return []
    shared = [line for line in done.stdout.splitlines() if ": shares " in line]
    if done.returncode == 1 and shared:
        return [f"{line.replace(str(root) + '/', '')} (prose shared with a source text)" for line in shared]
    return [f"source-overlap tool failed (exit {done.returncode}): {done.stderr.strip() or done.stdout.strip()}"]
