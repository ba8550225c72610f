"""The book's configuration: ``_quarto.yml``, the pages it lists, and how Quarto numbers them.

Used for the whole book: ``rlbook build``, the lints and the exercise list
read the page list through :func:`book_pages`. A configuration or page that a
build cannot use raises :class:`ConfigError` with one line naming it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import yaml

from rlbook.publish.qmd import HEADING, front_matter, split_qmd, yaml_problem


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
        raise ConfigError(f"_quarto.yml: not valid YAML ({yaml_problem(err)})") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"_quarto.yml: holds a {_kind(data)}, not a mapping of settings")
    return data


MAX_SOURCE_BYTES = 20_000_000
"""The largest source file of the book that is read: far above any page, far below a reader's memory."""


def read_source(root: Path, source: str) -> str:
    """The text of the book's file ``source`` (relative to ``root``); :class:`ConfigError` says why it cannot be read."""
    path = root / source
    try:
        if path.exists() and not path.is_file() and not path.is_dir():  # a FIFO would hang the build
            raise ConfigError(f"{source}: not a regular file")
        if path.is_file() and path.stat().st_size > MAX_SOURCE_BYTES:
            raise ConfigError(f"{source}: larger than {MAX_SOURCE_BYTES // 1_000_000} MB, not a page of the book")
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{source}: missing") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{source}: not a UTF-8 text file") from None
    except OSError as err:
        raise ConfigError(f"{source}: cannot be read ({err.strerror or err})") from None


def _kind(value: object) -> str:
    names: dict[type, str] = {dict: "mapping", list: "list", str: "string"}
    return names.get(type(value), type(value).__name__)


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


def heading_number(page: Page, level: int, counters: list[int]) -> str:
    """The number of the next heading of ``level`` on ``page`` ("3", "3.1", "3.1.1"), "" on an unnumbered page.

    ``counters`` (seven zeros to start a page) keeps the count between calls; as in Quarto books.
    """
    if page.number is None:
        return ""
    if level == 1:
        counters[1:] = [0] * 6
        return page.number
    counters[level - 1] += 1
    counters[level:] = [0] * (7 - level)
    return ".".join([page.number, *(str(c) for c in counters[1:level])])
