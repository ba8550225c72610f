"""The book's inputs checked before a build spends time on them: the bibliography, the citations, the paths.

``rlbook build`` (:mod:`rlbook.publish.build`) calls :func:`check_sources`
before it executes a page, so that a citation of a key the bibliography
lacks, a missing or malformed ``references.bib``, or a path that leads out
of the book fails at once, in one line naming the chapter or the file, and
the previous ``_book/`` stays as it was. :func:`confined` is what the site
writer uses to keep every file it writes inside the output folder.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from rlbook.publish.config import ConfigError, Page, book_path, read_source
from rlbook.publish.lint import scan_source

DEFAULT_BIBLIOGRAPHY = "references.bib"
PANDOC_TIMEOUT_S = 120
_PANDOC_PLACE = re.compile(r"\(line (\d+), column (\d+)\):\s*\n([^\n]*)")


def within(base: Path, path: Path) -> bool:
    """Whether ``path``, once every ``..`` and symbolic link is resolved, lies inside the folder ``base``."""
    return Path(path).resolve().is_relative_to(Path(base).resolve())


def confined(base: Path, relative: str | Path, what: str) -> Path:
    """``base / relative``, or a ValueError saying that ``what`` lies outside the book when that path leaves ``base``."""
    target = Path(base) / relative
    if Path(relative).is_absolute() or not within(base, target):
        raise ValueError(f"{what} lies outside the book")
    return target


def bibliography_files(root: Path, config: dict) -> list[str]:
    """The bibliography files of the book: ``_quarto.yml``'s ``bibliography`` (a name or a list), else
    ``references.bib`` when it exists; each must be a path inside the book (:class:`ConfigError`)."""
    named = config.get("bibliography")
    if named is None:
        return [DEFAULT_BIBLIOGRAPHY] if (Path(root) / DEFAULT_BIBLIOGRAPHY).exists() else []
    names = [named] if isinstance(named, str) else named
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        raise ConfigError(f"_quarto.yml: bibliography is {named!r:.60}, not a file name or a list of them")
    return [book_path(name, "bibliography") for name in names]


def bibliography_keys(root: Path, names: list[str], pandoc: str) -> set[str]:
    """The entry keys of the bibliography files ``names``, read by pandoc's own BibTeX reader.

    A file that is missing, not a regular file, not UTF-8 text, or that
    pandoc cannot read raises :class:`ConfigError` naming the file (and the
    line pandoc stopped at).
    """
    keys: set[str] = set()
    for name in names:
        path = Path(root) / name
        if not path.exists():
            raise ConfigError(f"{name}: missing (_quarto.yml names it as the bibliography)")
        if not path.is_file():
            raise ConfigError(f"{name}: not a regular file")
        read_source(Path(root), name)  # not UTF-8, unreadable: a ConfigError of its own
        try:
            done = subprocess.run(
                [pandoc, "-f", "bibtex", "-t", "csljson", str(path)],
                capture_output=True,
                text=True,
                timeout=PANDOC_TIMEOUT_S,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise ConfigError(f"{name}: pandoc took over {PANDOC_TIMEOUT_S} s to read it") from None
        if done.returncode:
            place = _PANDOC_PLACE.search(done.stderr)
            why = (
                f"line {place.group(1)}, column {place.group(2)}: {place.group(3).strip()}"
                if place
                else " ".join(done.stderr.split())[:160]
            )
            raise ConfigError(f"{name}: not a valid BibTeX file ({why})")
        keys |= {str(entry.get("id")) for entry in json.loads(done.stdout or "[]") if isinstance(entry, dict)}
    return keys


def check_citations(root: Path, pages: list[Page], names: list[str], keys: set[str]) -> None:
    """Raise :class:`ConfigError` at the first citation of ``pages`` whose key is not in ``keys``,
    naming the page and its line (``chapters/02-x.qmd:41: citation @key is not in references.bib``)."""
    for page in pages:
        for citation in scan_source(page.source, read_source(Path(root), page.source)).citations:
            if citation.key in keys:
                continue
            if not names:
                raise ConfigError(
                    f"{citation.where}: citation @{citation.key}, but the book has no bibliography "
                    f"({DEFAULT_BIBLIOGRAPHY} is missing)"
                )
            raise ConfigError(f"{citation.where}: citation @{citation.key} is not in {', '.join(names)}")


def check_sources(root: Path, config: dict, pages: list[Page], pandoc: str) -> None:
    """Everything a build checks before it executes a page: the bibliography is readable and every
    citation of every page is in it (:class:`ConfigError` otherwise). The pages' paths were checked
    when ``_quarto.yml`` was read (:func:`rlbook.publish.lint.listed_files`)."""
    names = bibliography_files(root, config)
    check_citations(root, pages, names, bibliography_keys(root, names, pandoc))
