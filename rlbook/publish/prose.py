"""What a reader reads: the prose of the built book, checked for degenerate sentences and measured.

Used by ``rlbook build`` on every executed chapter, after its inline values
are filled in, and by the book's tests. Two things are checked
(ARCHITECTURE.md, section 6):

- **Say what happened.** No sentence offers a degenerate quantity as
  evidence: a count of zero ("0 of them", "0 nonetheless gained"), "at least
  100 %", a change of +0.0000, a list whose items are all the same ("seed 0:
  '#'; seed 1: '#'"), a value compared with itself ("from 0.55 ... to its
  lowest, 0.55", "is 10 (the right one is 10)"), a range whose ends agree
  ("between 0.00 and 0.00"), a list of equal values ("0.062 / 0.062 /
  0.062", "(seeds 0: 0.00, 1: 0.00, 2: 0.00)"), a direction claimed over a
  range that crosses zero ("higher ... by margins from -0.020 to +0.011"),
  a count hedged to survive any draw ("3 of them (seeds 0, 1, 2)"), a
  comparative of a count of zero ("fewer seeds ... on none of the three"), a
  bound of zero offered as evidence ("never again rose above 0.00"), or a
  partition whose parts do not add up to the whole ("Of the 40, 13 ..., 8
  ... and 9 ...").
- **One sitting per chapter.** Prose words (without code, tables, captions,
  math, collapsed boxes and the exercises), the reading time at the pace and
  limit of :mod:`rlbook.publish.reading` (which the site's tests apply to the
  built pages), and the numbers per hundred prose words, each with its limit.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from rlbook.publish.reading import MINUTES_PER_CHAPTER, WORDS_PER_MINUTE

MAX_NUMBERS_PER_100 = 4.0
DENSITY_FROM_WORDS = 500
"""A chapter's numbers are counted against its words from this many words on: a page of a few lines has no density."""

FENCED = re.compile(r"^(`{3,}|~{3,}).*?^\1\s*$", re.MULTILINE | re.DOTALL)
DISPLAY_MATH = re.compile(r"\$\$.*?\$\$", re.DOTALL)
INLINE_MATH = re.compile(r"(?<![\\$])\$(?!\s)[^$\n]+?(?<!\s)\$")
CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.DOTALL)
HTML = re.compile(r"<[^>\n]+>")
TABLE_ROW = re.compile(r"^\s*\|.*$", re.MULTILINE)
DIV_FENCE = re.compile(r"^\s*:{3,}.*$", re.MULTILINE)
ATTRIBUTES = re.compile(r"\{[#.][^}\n]*\}")
CITATION = re.compile(r"\[[^\]]*@[\w:.-]+[^\]]*\]|(?<![\w@])@(?:sec|fig|tbl)-[\w-]+|(?<![\w@])@[\w:.-]+")
LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*$", re.MULTILINE)
WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")
NUMBER = re.compile(r"(?<![\w.])[+−-]?\d[\d,]*(?:\.\d+)?\s?%?")
LABELS = re.compile(
    r"\b(?:[Cc]hapters?|Figures?|Tables?|Sections?|Exercises?|§|seeds?|[Aa]ppendix)\s+"
    r"[A-Z]?\d+(?:\.\d+)*(?:(?:,\s*|\s+(?:and|or|to)\s+)[A-Z]?\d+(?:\.\d+)*)*"
)
"""Numbers that name rather than measure: chapter 3, Figure 1.2, Exercise 4.1, seeds 0 and 2."""

DEGENERATE = [
    (
        re.compile(
            r"\(0 of (?:them|the)\b[^)]*\)|(?<![\w.,])0 (?:of|out of|nonetheless|still|here|gained|lost|"
            r"moved|were|was|did|had|times)\b"
        ),
        "a count of zero offered as evidence: say what did happen, or leave the case out",
    ),
    (re.compile(r"\bat (?:least|most) (?:100|0)\s?%"), "a bound that says nothing (at least 100 %, at most 0 %)"),
    (re.compile(r"(?<![\w.])[+−-]0\.0+(?![\d])|\bby 0\.0+\b"), "a change of zero offered as a change"),
    (
        re.compile(r"\b\d+ of them \(seeds? [\d, and]+\)"),
        "a count hedged to survive any draw: say 'every seed' or name the seeds (rlbook.book.phrasing)",
    ),
    (
        re.compile(
            r"(?i)\bfewer (?:seeds|runs)\b.{0,120}?\b(?:none|no seeds?)\b|\b(?:none|no) (?:of the \w+ )?(?:seeds|runs)\b.{0,120}?\bfewer\b"
        ),
        "a comparative of a count of zero ('fewer' ... 'none'): say 'none', against what the other did",
    ),
    (
        re.compile(
            r"\b(?:never|not|no)\b[^.]{0,60}?\b(?:above|over|exceed\w*|higher than|more than|beyond)\s+0\.0+(?!\d)"
            r"|\bat most 0\.0+(?!\d)"
        ),
        "a bound of zero offered as evidence (never above 0.00): say when it reached zero and that it stayed there",
    ),
]


@dataclass(frozen=True)
class Problem:
    """One degenerate sentence: where (page and sentence), what it says, and why it fails."""

    page: str
    sentence: str
    why: str

    def __str__(self) -> str:
        return f"{self.page}: {self.why}: “{self.sentence.strip()}”"


def prose_text(markdown: str) -> str:
    """The words a reader reads in a markdown cell: code, math, tables, HTML, fences and citations removed."""
    text = FENCED.sub(" ", markdown)
    text = DISPLAY_MATH.sub(" ", text)
    text = INLINE_MATH.sub(" x ", text)
    text = TABLE_ROW.sub(" ", text)
    text = DIV_FENCE.sub(" ", text)
    text = HTML.sub(" ", text)
    text = ATTRIBUTES.sub(" ", text)
    text = LINK.sub(r"\1", text)
    text = CITATION.sub(" ", text)
    text = CODE_SPAN.sub(lambda m: m.group(2) if _is_value(m.group(2)) else " code ", text)
    return text


def _is_value(span: str) -> bool:
    """A code span that holds a number or a short answer (a sum's answer is printed as code): counted as prose."""
    return bool(re.fullmatch(r"[+−-]?[\d.,%]+", span.strip()))


def sentences(text: str) -> list[str]:
    """``text`` split into sentences (at . ! ? or : followed by a space and a capital, and at blank lines)."""
    flat = re.sub(r"\s+", " ", text)
    return [s for s in re.split(r"(?<=[.!?])\s+(?=[A-Z“(])|\n\s*\n", flat) if s.strip()]


def degenerate(text: str, page: str = "") -> list[Problem]:
    """Every sentence of ``text`` (prose) that offers a degenerate quantity as evidence."""
    found = []
    previous = ""
    for sentence in sentences(text):
        for pattern, why in DEGENERATE:
            if pattern.search(sentence):
                found.append(Problem(page, sentence, why))
        found += [Problem(page, sentence, why) for why in _self_comparisons(sentence)]
        found += [Problem(page, sentence, why) for why in _hedges(sentence, previous)]
        previous = sentence
    return found


RANGE_TO_RANGE = re.compile(
    r"(?<![\w.])\d+[–-]\d+ of (?:the )?\d[\d,]*\b[^.]*?(?<![\w.])\d+[–-]\d+ of (?:them|those)\b"
)
"""A range of counts set against a range of counts ("never solved 2–5 of the 40 sums; ... solved 2–5 of them"),
which hides which seed did what."""
EITHER_WAY = (
    re.compile(r"\bat least as (?:large|much|many|high|good|often)\b"),
    re.compile(r"\b(?:smaller|less|fewer|lower|worse)\b[^.]{0,80}?\bthan\b"),
)
"""The two halves of a comparison worded to hold whichever way it came out ("a smaller edge than X on seed 2 and
an edge at least as large as X on seeds 0 and 1")."""


def _hedges(sentence: str, previous: str = "") -> Iterable[str]:
    """Wording that survives any outcome: a range of counts against a range of counts, a comparison said both ways,
    or "the other N" after a sentence that counted none of the N (so that "the other N" means all of them)."""
    if RANGE_TO_RANGE.search(sentence):
        yield "a range of counts set against a range of counts: give each seed's count and the total"
    if all(p.search(sentence) for p in EITHER_WAY):
        yield "a comparison worded to hold whichever way it came out: give the values, seed by seed or as a mean"
    for m in re.finditer(r"\b(?:[Nn]one|0) of the (\d[\d,]*)\b", f"{previous} {sentence}"):
        if re.search(rf"\b[Tt]he other {m.group(1)}\b", sentence):
            yield f"'the other {m.group(1)}' after none of the {m.group(1)}: it means all of them, so say 'all'"


def _self_comparisons(sentence: str) -> Iterable[str]:
    """A value compared with itself, a labelled list whose values are all the same, or a partition that does not
    add up."""
    yield from _partitions(sentence)
    for m in re.finditer(
        r"\bfrom ([+−-]?\d[\d.,]*%?)\b(.{0,80}?)\bto\b(.{0,40}?)(?<![\w.])([+−-]?\d[\d.,]*%?)", sentence
    ):
        if m.group(1).rstrip(".,") == m.group(4).rstrip(".,"):
            yield f"a value compared with itself (from {m.group(1)} to {m.group(4)})"
    for m in re.finditer(r"(\S+) \([^()]*\bis (\S+?)\)", sentence):
        if m.group(1).strip("`'\".,") == m.group(2).strip("`'\".,"):
            yield f"a value compared with itself ({m.group(1)} … is {m.group(2)})"
    items = re.findall(r"\b\w+ \d+: ([^;,]+?)(?=;|,|$)", sentence)
    if len(items) >= 2 and len({i.strip().rstrip(".") for i in items}) == 1:
        yield "a list whose items are all the same"
    for m in re.finditer(r"\(seeds? ((?:\d+: [^,;()]+(?:, |; |(?=\))))+)\)", sentence):
        values = re.findall(r"\d+: ([^,;()]+)", m.group(1))
        if len(values) >= 2 and len({v.strip() for v in values}) == 1:
            yield f"a list of seeds whose values are all the same ({m.group(0)})"
    for m in re.finditer(rf"\bbetween ({VALUE}) and ({VALUE})", sentence):
        if m.group(1) == m.group(2):
            yield f"a range whose ends agree (between {m.group(1)} and {m.group(2)})"
    for m in re.finditer(rf"(?<![\w.])({VALUE})(?: / ({VALUE}))+(?![\w.])", sentence):
        values = re.findall(VALUE, m.group(0))
        if len(values) >= 2 and len(set(values)) == 1:
            yield f"a list whose items are all the same ({m.group(0)})"
    for m in re.finditer(
        rf"\b(?:higher|lower|above|below|better|worse|more|less)\b.{{0,80}}?\bfrom ({VALUE}) to ({VALUE})", sentence
    ):
        low, high = (_number(v) for v in m.groups())
        if low is not None and high is not None and low < 0 < high:
            yield f"a direction claimed over a range that crosses zero (from {m.group(1)} to {m.group(2)})"


def _partitions(sentence: str) -> Iterable[str]:
    """A whole split into three or more counted parts ("Of the 40, 13 are ..., 8 ... and 9 ...") whose counts do
    not add up to it: a partition with a part left unnamed."""
    for m in re.finditer(r"\bOf the (\d[\d,]*)\b[^,.;:]*, (.+?)(?=[.;:]\s|[.;:]?$)", sentence):
        parts = [p.strip() for p in re.split(r",\s*(?:and\s+)?|\s+and\s+", m.group(2))]
        counts = [re.match(r"(\d[\d,]*) ", p) for p in parts]
        if len(parts) >= 3 and all(counts):
            total = sum(int(c.group(1).replace(",", "")) for c in counts if c)
            whole = int(m.group(1).replace(",", ""))
            if total != whole:
                yield f"a partition whose parts add up to {total}, not to the whole, {whole}: name every part"


VALUE = r"[+−-]?\d[\d,]*(?:\.\d+)?%?"
"""A number as the prose prints it: "0.62", "+0.011", "−0.020", "45%", "1,024"."""


def _number(text: str) -> float | None:
    try:
        return float(text.replace("−", "-").replace(",", "").rstrip("%"))
    except ValueError:
        return None


@dataclass(frozen=True)
class Counts:
    """How long a chapter is to read: its prose words, minutes at :data:`WORDS_PER_MINUTE`, numbers per 100 words."""

    page: str
    words: int
    numbers: int

    @property
    def minutes(self) -> float:
        return self.words / WORDS_PER_MINUTE

    @property
    def numbers_per_100(self) -> float:
        return 100 * self.numbers / self.words if self.words else 0.0

    def problems(self) -> list[str]:
        """What breaks the one-sitting rule: over :data:`rlbook.publish.reading.MINUTES_PER_CHAPTER`, or over
        :data:`MAX_NUMBERS_PER_100`."""
        found = []
        if self.minutes > MINUTES_PER_CHAPTER:
            found.append(
                f"{self.page}: {self.minutes:.0f} minutes of reading ({self.words:,} prose words), over "
                f"{MINUTES_PER_CHAPTER:g}: move depth into a collapsed 'For the referee' box or an appendix"
            )
        if self.words >= DENSITY_FROM_WORDS and self.numbers_per_100 > MAX_NUMBERS_PER_100:
            found.append(
                f"{self.page}: {self.numbers_per_100:.1f} numbers per 100 prose words, over "
                f"{MAX_NUMBERS_PER_100:g}: keep the numbers that carry the lesson, move the rest to tables"
            )
        return found


COLLAPSED = re.compile(r"^\s*:{3,}\s*\{[^}\n]*collapse=\"?true")
"""The opening fence of a collapsed box, whose text a reader opens only if they want it."""


def unfolded(markdown: str) -> str:
    """``markdown`` without its collapsed boxes (fenced divs with ``collapse="true"``, nested divs and all)."""
    kept, depth, skipping = [], 0, 0
    for line in markdown.splitlines():
        if re.fullmatch(r"\s*:{3,}\s*\S.*", line):  # an opening fence names a class or attributes
            depth += 1
            skipping = skipping or (depth if COLLAPSED.match(line) else 0)
        elif re.fullmatch(r"\s*:{3,}\s*", line):  # a closing fence is bare
            depth, closed = max(0, depth - 1), depth
            if skipping == closed:
                skipping = 0
                continue
        if not skipping:
            kept.append(line)
    return "\n".join(kept)


def reading_text(markdown_cells: Iterable[str]) -> str:
    """The prose of a chapter up to its exercises (the exercises are done, not read), without its collapsed
    boxes, as one text. A box may hold code cells, so its fences can lie in different markdown cells."""
    parts = []
    for cell in markdown_cells:
        stop = re.search(r"^##\s+Exercises\b", cell, re.MULTILINE)
        parts.append(cell[: stop.start()] if stop else cell)
        if stop:
            break
    return prose_text(unfolded("\n\n".join(parts)))


def count(page: str, text: str) -> Counts:
    """The :class:`Counts` of one chapter's reading text."""
    words = len(WORD.findall(HEADING.sub(r"\1", text)))
    numbers = len(NUMBER.findall(LABELS.sub(" ", text)))
    return Counts(page, words, numbers)


def table(counts: Iterable[Counts]) -> str:
    """The counts of every chapter as a plain-text table, as ``rlbook build`` prints it."""
    lines = [f"{'page':<48} {'words':>6} {'minutes':>7} {'numbers/100':>11}"]
    lines += [f"{c.page:<48} {c.words:>6,} {c.minutes:>7.0f} {c.numbers_per_100:>11.1f}" for c in counts]
    return "\n".join(lines)


def chapter_problems(chapters: Iterable[tuple[str, dict]], out: Callable[[str], None] = print) -> list[str]:
    """Every degenerate sentence and broken length rule of executed chapters ``(page, notebook)``.

    Prints the reading table of the chapters through ``out`` (``rlbook
    build`` does this for every chapter it executes), and returns one line
    per problem; an empty list means the chapters may be published.
    """
    problems, counted = [], []
    for page, nb in chapters:
        cells = [
            "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
            for c in nb["cells"]
            if c["cell_type"] == "markdown"
        ]
        problems += [str(p) for p in degenerate("\n\n".join(prose_text(cell) for cell in cells), page)]
        counted.append(count(page, reading_text(cells)))
        problems += counted[-1].problems()
    if counted:
        out(table(counted))
    return problems
