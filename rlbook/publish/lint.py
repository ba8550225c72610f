"""Book lint: reading the book's sources and checking what a reader would trip over.

Used for the whole book (every chapter): ``rlbook build`` reads the page list
and the Quarto cell options through this module, and ``tests/test_lint.py``
runs :func:`lint_book` on the real repository. The checks are the ones the
design asks for: every ``@fig-``/``@sec-``/``@tbl-`` reference resolves to a
label, labels are unique, every figure cell has a caption and alt text, every
citation key is in ``references.bib``, the chapter list in ``_quarto.yml``
matches the files in ``chapters/``, no placeholder words are left in the text,
no inline value opens a line where its number could become a list marker,
and no run of words is shared with the source texts.

The syntax is Quarto's: executable cells are fenced as ```` ```{python} ````
and carry their options as leading ``#| key: value`` lines (YAML); labels are
``{#sec-...}`` attributes in the prose or ``#| label:`` options in cells;
citations are pandoc's ``[@key]`` and ``@key``.
"""
from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import yaml

CROSSREF_KINDS = {"fig": "Figure", "sec": "Section", "tbl": "Table"}
"""The cross-reference kinds this book uses, with the word a reference renders as."""

OTHER_QUARTO_PREFIXES = ("eq", "lst", "thm", "lem", "cor", "prp", "cnj", "def", "exm", "exr", "sol", "rem")
"""Quarto reserves these prefixes for cross-references that the pandoc build does not number."""

PLACEHOLDER = re.compile(r"\b(illustrative|TODO|FIXME|lorem)\b", re.IGNORECASE)
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})(.*)$")
EXECUTABLE_INFO = re.compile(r"^\s*\{python\b[^}]*\}\s*$")
INLINE_CODE = re.compile(r"(`+)(.+?)\1", re.DOTALL)
INLINE_PYTHON = re.compile(r"`\{python\}\s+([^`]+?)\s*`")
LINK_TARGET = re.compile(r"\]\([^)\s]*(?:\s+\"[^\"]*\")?\)|<https?://[^>]*>|https?://\S+")
LEADING_VALUE = re.compile(r"^[ \t]{2,}\(?`\{python\}", re.MULTILINE)
"""An inline value that opens an indented line (a list item's continuation), alone or after
"(": once the value is a number, pandoc can read ``(21)`` or ``7.`` there as a nested list."""
AT_KEY = re.compile(r"(?<![\w@\\])(-?)@(\w+(?:[:.#$%&+?<>~/-]\w+)*)")
ATTR_ID = re.compile(r"\{#([\w-]+)([^}]*)\}")
MD_FIGURE = re.compile(r"!\[[^\]]*\]\([^)]*\)\{#(fig-[\w-]+)([^}]*)\}")
BIB_KEY = re.compile(r"^\s*@\w+\s*\{\s*([^,\s]+)\s*,", re.MULTILINE)
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*(?:\{([^}]*)\})?\s*$")


@dataclass
class Block:
    """One piece of a ``.qmd`` file: front matter, prose, an executable cell or a verbatim fence."""

    kind: str  # "front", "markdown", "code" (executable python) or "verbatim"
    text: str  # for "code": the cell source without its fence lines
    line: int  # 1-based line of the first line of ``text`` in the file
    options: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Page:
    """A page of the book as ``_quarto.yml`` lists it.

    ``part`` is "front" for index.qmd, "main" for chapters and "appendix" for
    appendices; ``number`` is the chapter number ("3"), the appendix letter
    ("A") or None for an unnumbered page (the preface, the references).
    """

    source: str
    part: str
    number: str | None
    title: str

    @property
    def stem(self) -> str:
        """The file name without ``.qmd``: names the page's notebook and HTML file."""
        return Path(self.source).stem


@dataclass(frozen=True)
class Mention:
    """A label, reference or citation key found in a file, with where it was found."""

    key: str
    where: str  # "path:line"


def split_qmd(text: str) -> list[Block]:
    """Split a ``.qmd`` text into front matter, prose, executable cells and verbatim fences.

    Executable cells are fenced with ```` ```{python} ````; their ``#|`` option
    lines are parsed into ``Block.options`` (a ValueError names bad YAML).
    """
    lines = text.split("\n")
    blocks: list[Block] = []
    start = 0
    if lines and lines[0].strip() == "---":
        for end in range(1, len(lines)):
            if lines[end].strip() in ("---", "..."):
                blocks.append(Block("front", "\n".join(lines[1:end]), 2))
                start = end + 1
                break
    prose: list[str] = []
    prose_line = start + 1
    i = start
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            prose.append(lines[i])
            i += 1
            continue
        indent, fence, info = opening.groups()
        close = _closing_fence(lines, i + 1, fence)
        if prose:
            blocks.append(Block("markdown", "\n".join(prose), prose_line))
        body = "\n".join(lines[i + 1:close])
        if EXECUTABLE_INFO.match(info) and not indent:
            options, _ = cell_options(body)
            blocks.append(Block("code", body, i + 2, options))
        else:
            blocks.append(Block("verbatim", "\n".join(lines[i:close + 1]), i + 1))
        i = close + 1
        prose, prose_line = [], i + 1
    if prose:
        blocks.append(Block("markdown", "\n".join(prose), prose_line))
    return blocks


def _closing_fence(lines: list[str], start: int, fence: str) -> int:
    """Index of the line closing a fence opened with ``fence`` (or the last line)."""
    for j in range(start, len(lines)):
        stripped = lines[j].strip()
        if stripped and stripped[0] == fence[0] and set(stripped) == {fence[0]} and len(stripped) >= len(fence):
            return j
    return len(lines) - 1


def cell_options(source: str) -> tuple[dict, str]:
    """Quarto's ``#| key: value`` options at the top of a cell, and the code without them.

    >>> cell_options("#| label: fig-a\\n#| echo: false\\nplot()")
    ({'label': 'fig-a', 'echo': False}, 'plot()')
    """
    lines = source.split("\n")
    n = 0
    while n < len(lines) and lines[n].startswith("#|"):
        n += 1
    option_text = "\n".join(line[3:] if line.startswith("#| ") else line[2:] for line in lines[:n])
    try:
        options = yaml.safe_load(option_text) if option_text.strip() else {}
    except yaml.YAMLError as err:
        raise ValueError(f"cell options are not valid YAML: {err}") from None
    if not isinstance(options, dict):
        raise ValueError(f"cell options must be 'key: value' lines, got {option_text!r}")
    return options, "\n".join(lines[n:])


def front_matter(text: str) -> dict:
    """The YAML front matter of a ``.qmd`` text as a dict (empty when there is none); a ValueError says bad YAML."""
    blocks = split_qmd(text)
    if blocks and blocks[0].kind == "front":
        try:
            data = yaml.safe_load(blocks[0].text)
        except yaml.YAMLError as err:
            raise ValueError(f"front matter is not valid YAML ({_yaml_problem(err, blocks[0].line - 1)})") from None
        return data if isinstance(data, dict) else {}
    return {}


def page_heading(text: str) -> tuple[str, bool]:
    """The title of a page and whether Quarto numbers it.

    The title is the front matter's ``title`` or else the first level-1
    heading; ``{.unnumbered}`` (or ``{-}``) on that heading makes the page
    unnumbered, as in Quarto books.
    """
    title = front_matter(text).get("title")
    if isinstance(title, str):
        match = re.match(r"^(.*?)\s*\{([^}]*)\}\s*$", title)
        if match:
            return match.group(1), not _unnumbered(match.group(2))
        return title, True
    for block in split_qmd(text):
        if block.kind != "markdown":
            continue
        for line in block.text.split("\n"):
            match = HEADING.match(line)
            if match and len(match.group(1)) == 1:
                return match.group(2), not _unnumbered(match.group(3) or "")
    return "", True


def _unnumbered(attrs: str) -> bool:
    words = attrs.split()
    return ".unnumbered" in words or "-" in words


class ConfigError(ValueError):
    """A source of the book (``_quarto.yml``, a page, the bibliography) that a build cannot use.

    The message is one line that starts with the file it is about.
    """


def read_config(root: Path) -> dict:
    """``_quarto.yml`` of the book at ``root`` as a dict (empty for an empty file).

    A missing or unreadable file, text that is not UTF-8, invalid YAML or a
    document that is not a mapping raises :class:`ConfigError`.
    """
    text = read_source(Path(root), "_quarto.yml")
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise ConfigError(f"_quarto.yml: not valid YAML ({_yaml_problem(err)})") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"_quarto.yml: holds a {_kind(data)}, not a mapping of settings")
    return data


def read_source(root: Path, source: str) -> str:
    """The text of the book's file ``source`` (relative to ``root``); :class:`ConfigError` says why it cannot be read."""
    try:
        return (root / source).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{source}: missing") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{source}: not a UTF-8 text file") from None
    except OSError as err:
        raise ConfigError(f"{source}: cannot be read ({err.strerror or err})") from None


def _yaml_problem(err: yaml.YAMLError, first_line: int = 0) -> str:
    """Where and what a YAML error is, in a few words (``line 3, column 5: found a tab``)."""
    mark = getattr(err, "problem_mark", None)
    problem = getattr(err, "problem", None) or str(err).splitlines()[0]
    return f"line {mark.line + 1 + first_line}, column {mark.column + 1}: {problem}" if mark else problem


def _kind(value: object) -> str:
    return {dict: "mapping", list: "list", str: "string"}.get(type(value), type(value).__name__)


def listed_files(config: dict) -> list[tuple[str, str]]:
    """The files ``_quarto.yml`` lists, in reading order, with their part ("front", "main", "appendix").

    Entries may be plain paths or Quarto parts (``{part: ..., chapters: [...]}``).
    Anything else, or a path that is absolute or climbs out with ``..``,
    raises :class:`ConfigError` naming the entry (``book.chapters[2]``).
    """
    book = config.get("book")
    if book is None:
        return []
    if not isinstance(book, dict):
        raise ConfigError(f"_quarto.yml: book is {book!r:.60}, not a mapping")
    files: list[tuple[str, str]] = []
    for section, part in (("chapters", "main"), ("appendices", "appendix")):
        for entry in _flatten(book.get(section), f"book.{section}"):
            files.append((entry, "front" if entry == "index.qmd" else part))
    return files


def _flatten(entries: object, where: str) -> Iterator[str]:
    if entries is None:
        return
    if not isinstance(entries, list):
        raise ConfigError(f"_quarto.yml: {where} is {entries!r:.60}, not a list")
    for i, entry in enumerate(entries):
        if isinstance(entry, str):
            yield book_path(entry, "page path")
        elif isinstance(entry, dict) and "chapters" in entry:
            yield from _flatten(entry["chapters"], f"{where}[{i}].chapters")
        else:
            raise ConfigError(f"_quarto.yml: {where}[{i}] is {entry!r:.60}, not a page path or a part with chapters")


def book_path(path: str, what: str) -> str:
    """``path`` when it names a file inside the book: relative, without ``..``; else :class:`ConfigError`."""
    parts = Path(path).parts
    if not path.strip() or Path(path).is_absolute() or ".." in parts or "\\" in path or "\0" in path:
        raise ConfigError(f"_quarto.yml: {what} {path!r} must be a path inside the book (relative, without '..')")
    return path


def book_pages(root: Path) -> list[Page]:
    """Every page of the book in reading order, numbered as Quarto numbers a book.

    Numbered chapters get 1, 2, ...; numbered appendices get A, B, ...; the
    index and pages marked ``{.unnumbered}`` get None. A book that lists no
    page, a listed file that is missing or unreadable, or one whose front
    matter or cell options are bad, raises :class:`ConfigError` naming it.
    """
    root = Path(root)
    pages = []
    chapter, appendix = 0, 0
    listed = listed_files(read_config(root))
    if not listed:
        raise ConfigError("_quarto.yml lists no pages (book: chapters: is empty or missing)")
    for source, part in listed:
        text = read_source(root, source)
        try:
            title, numbered = page_heading(text)
        except ValueError as err:
            raise ConfigError(f"{source}: {err}") from None
        number = None
        if numbered and part == "main":
            chapter += 1
            number = str(chapter)
        elif numbered and part == "appendix":
            number = chr(ord("A") + appendix)
            appendix += 1
        pages.append(Page(source, part, number, title or Path(source).stem))
    return pages


def prose_for_scanning(markdown: str, keep_links: bool = False) -> str:
    """Prose with inline code spans (and, unless ``keep_links``, link targets) blanked, so that an
    ``@`` in them is not read as a reference. Lengths and line breaks are kept, so offsets still map to lines.
    """
    without_code = INLINE_CODE.sub(_blank, markdown)
    return without_code if keep_links else LINK_TARGET.sub(_blank, without_code)


def _blank(match: re.Match) -> str:
    return re.sub(r"[^\n]", " ", match.group(0))


def line_of(text: str, offset: int) -> int:
    """The 1-based line number of ``offset`` in ``text``."""
    return text.count("\n", 0, offset) + 1


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
        facts.problems.append(f"{path}:{first_line + line_of(markdown, match.start()) - 1}: an inline value opens "
                              "the line; a number there can become a list marker, so move it into the line")
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
    problems = [f"_quarto.yml: lists {source}, which does not exist"
                for source in listed if not (root / source).is_file()]
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
