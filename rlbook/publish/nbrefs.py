"""Cross-references and citations as text a reader of a Jupyter notebook can read: "Figure 1.2", "(Sutton and Barto 2018)".

Used by :mod:`rlbook.publish.jupyter`, which writes the notebooks of
``_build/notebooks/``. JupyterLab knows nothing of Quarto's ``@fig-x`` or
pandoc's ``[@key]``, so the notebooks carry them resolved: every label of
the book is numbered here from the ``.qmd`` sources as the website numbers
it (chapters 1, 2, ..., appendices A, ...; sections 3.2; figures and tables
per chapter, 3.1), and citations are rendered by pandoc's citeproc with the
book's bibliography, in the same author-date style as the website.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import cast

from rlbook.publish.config import Page, heading_number
from rlbook.publish.lint import AT_KEY, CROSSREF_KINDS, INLINE_CODE, crossref_kind, normalise_ref
from rlbook.publish.qmd import FENCE, HEADING, split_qmd

CALLOUT_OPEN = re.compile(r"^\s*(:{3,})\s*\{([^}]*)\}\s*$")
DIV_CLOSE = re.compile(r"^\s*:{3,}\s*$")
BRACKETED = re.compile(r"\[([^\[\]]*@[^\[\]]*)\](?![(\[{])")
MD_LABEL = re.compile(r"\{#((?:fig|tbl)-[\w-]+)[^}]*\}")


def numbered_headings(page: Page, lines: list[str]):
    """Each heading line of a page's prose that the book numbers or labels: (index, level, text, attrs, number).

    Headings in fenced code and the first heading of a callout (its title) are skipped, as on the website.
    """
    counters = [0] * 7
    fence = None
    title_next = False
    for index, line in enumerate(lines):
        opening = FENCE.match(line)
        if fence is not None:
            if (
                opening
                and opening.group(2)[0] == fence[0]
                and len(opening.group(2)) >= len(fence)
                and not opening.group(3).strip()
            ):
                fence = None
            continue
        if opening:
            fence = opening.group(2)
            continue
        if CALLOUT_OPEN.match(line):
            title_next = "callout-" in line and "title=" not in line
            continue
        if not line.strip():
            continue
        match = HEADING.match(line)
        if match and not title_next:
            attrs = (match.group(3) or "").split()
            number = (
                "" if ".unnumbered" in attrs or "-" in attrs else heading_number(page, len(match.group(1)), counters)
            )
            yield index, len(match.group(1)), match.group(2), attrs, number
        title_next = False


def page_labels(page: Page, text: str) -> dict[str, str]:
    """Every label of one page (a ``.qmd`` text) with how a reference to it reads: "Section 1.3", "Figure 1.2"."""
    labels: dict[str, str] = {}
    prose: list[str] = []
    counts = {"fig": 0, "tbl": 0}

    def floating(label: str) -> None:
        kind = label.split("-", 1)[0]
        counts[kind] += 1
        number = f"{page.number}.{counts[kind]}" if page.number else str(counts[kind])
        labels[label] = f"{CROSSREF_KINDS[kind]} {number}"

    for block in split_qmd(text):
        if block.kind == "code" and str(block.options.get("label", "")).startswith(("fig-", "tbl-")):
            floating(str(block.options["label"]))
        elif block.kind == "markdown":
            prose += block.text.split("\n")
            for match in MD_LABEL.finditer(block.text):
                floating(match.group(1))
    for _, level, title, attrs, number in numbered_headings(page, prose):
        for label in (a[1:] for a in attrs if a.startswith("#sec-")):
            word = "Chapter" if page.part == "main" else "Appendix"
            labels[label] = f"{word} {number}" if level == 1 and number else (f"Section {number}" if number else title)
    return labels


def book_labels(root: Path, pages: list[Page]) -> dict[str, str]:
    """The labels of every page of the book, as :func:`page_labels` reads them."""
    labels: dict[str, str] = {}
    for page in pages:
        labels.update(page_labels(page, (Path(root) / page.source).read_text(encoding="utf-8")))
    return labels


def prose_spans(markdown: str) -> list[tuple[int, int]]:
    """The (start, end) spans of ``markdown`` outside fenced code blocks and inline code."""
    code: list[tuple[int, int]] = []
    offset, fence, start = 0, None, 0
    for line in markdown.split("\n"):
        opening = FENCE.match(line)
        if fence is None and opening:
            fence, start = opening.group(2), offset
        elif fence is not None and opening and opening.group(2)[0] == fence[0] and not opening.group(3).strip():
            code.append((start, offset + len(line)))
            fence = None
        offset += len(line) + 1
    if fence is not None:
        code.append((start, len(markdown)))
    spans, at = [], 0
    for a, b in code + [(len(markdown), len(markdown))]:
        piece = markdown[at:a]
        inner = 0
        for m in INLINE_CODE.finditer(piece):
            spans.append((at + inner, at + m.start()))
            inner = m.end()
        spans.append((at + inner, a))
        at = b
    return [(a, b) for a, b in spans if b > a]


def _map_prose(markdown: str, rewrite) -> str:
    pieces, at = [], 0
    for a, b in prose_spans(markdown):
        pieces += [markdown[at:a], rewrite(markdown[a:b])]
        at = b
    return "".join(pieces + [markdown[at:]])


def resolve_crossrefs(markdown: str, labels: dict[str, str]) -> str:
    """``@fig-x``, ``[@sec-x]``, ``[see @tbl-x]`` and ``[-@fig-x]`` (the number alone) as their text.

    A label that is not in ``labels`` reads "??label", as on the website.
    """

    def text(minus: str, key: str) -> str:
        found = labels.get(normalise_ref(key), f"??{normalise_ref(key)}")
        return found.rsplit(" ", 1)[-1] if minus and " " in found else found

    def group(match: re.Match) -> str:
        items = [AT_KEY.search(item) for item in match.group(1).split(";")]
        if not all(item and crossref_kind(item.group(2)) for item in items):
            return match.group(0)
        found = cast(list[re.Match], items)  # all() above saw no None among them
        return "; ".join(AT_KEY.sub(lambda m: text(m.group(1), m.group(2)), item.string).strip() for item in found)

    def bare(match: re.Match) -> str:
        return text(match.group(1), match.group(2)) if crossref_kind(match.group(2)) else match.group(0)

    return _map_prose(markdown, lambda prose: AT_KEY.sub(bare, BRACKETED.sub(group, prose)))


def citations(markdown: str, keys: set[str]) -> list[str]:
    """The citations of works in ``markdown``, as written: ``[@a; @b, ch. 3]`` groups and bare ``@a``."""
    found: list[str] = []
    for a, b in prose_spans(markdown):
        prose = markdown[a:b]
        for match in BRACKETED.finditer(prose):
            if any(m.group(2) in keys for m in AT_KEY.finditer(match.group(1))):
                found.append(match.group(0))
        for match in AT_KEY.finditer(BRACKETED.sub(lambda m: " " * len(m.group(0)), prose)):
            if match.group(2) in keys:
                found.append(match.group(0))
    return found


class Bibliography:
    """Citations rendered by pandoc's citeproc from the book's ``.bib`` file, and the list of the works cited."""

    def __init__(self, bib: Path, pandoc: str):
        self.bib, self.pandoc = Path(bib), pandoc
        self.keys = set(
            re.findall(r"^\s*@\w+\s*\{\s*([^,\s]+)\s*,", self.bib.read_text(encoding="utf-8"), re.MULTILINE)
        )

    def render(self, cited: list[str], listed: list[str]) -> tuple[dict[str, str], list[str]]:
        """Each citation of ``cited`` as text ("(Sutton and Barto 2018, ch. 3)"), and the entries of the works
        named in ``listed`` (citation keys), in the style's order, as markdown paragraphs."""
        unique = list(dict.fromkeys(cited))
        body = "".join(f"RLBOOKCITE{i}: {c}\n\n" for i, c in enumerate(unique))
        nocite = ", ".join(f"@{key}" for key in listed)
        source = f"---\nnocite: |\n  {nocite}\n---\n\n{body}RLBOOKREFS\n\n::: {{#refs}}\n:::\n"
        done = subprocess.run(
            [
                self.pandoc,
                "-f",
                "markdown",
                "-t",
                "gfm-raw_html",
                "--wrap=none",
                "--citeproc",
                "--bibliography",
                str(self.bib),
            ],
            input=source,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode:
            raise RuntimeError(f"pandoc could not render the notebook's citations: {done.stderr.strip()}")
        head, _, refs = done.stdout.partition("RLBOOKREFS")
        rendered = dict(re.findall(r"^RLBOOKCITE(\d+): (.*)$", head, re.MULTILINE))
        texts = {c: rendered[str(i)] for i, c in enumerate(unique)}
        return texts, [entry.strip() for entry in refs.split("\n\n") if entry.strip()]


def resolve_citations(markdown: str, texts: dict[str, str]) -> str:
    """``markdown`` with each citation of ``texts`` (as :func:`citations` found it) replaced by its text."""

    def rewrite(prose: str) -> str:
        prose = BRACKETED.sub(lambda m: texts.get(m.group(0), m.group(0)), prose)
        return AT_KEY.sub(lambda m: texts.get(m.group(0), m.group(0)), prose)

    return _map_prose(markdown, rewrite)
