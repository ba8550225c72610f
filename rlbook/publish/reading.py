"""How long a chapter's main text takes to read: the words a reader meets before the exercises.

The expert reader who reviewed the book read at about 98 words a minute, and
asked that each chapter take 35 minutes or less at that pace. What counts is the
prose a reader cannot skip: text outside collapsed boxes (``<details>``, where
the "for the referee" callouts and solutions live), code, math, figures, tables
and the page's navigation, up to the chapter's "Exercises" heading. The site
tests hold every chapter of the built book to the limit; during the build,
:mod:`rlbook.publish.prose` applies the same pace and limit to the executed
notebooks, before any page is rendered.
"""

from __future__ import annotations

from html.parser import HTMLParser

WORDS_PER_MINUTE = 98
"""The reviewer's reading pace, in words a minute."""

MINUTES_PER_CHAPTER = 35.0
"""The longest a chapter's main text may take to read, in minutes."""

SKIPPED = frozenset(
    {"details", "pre", "code", "math", "figure", "table", "script", "style", "nav", "svg", "button", "aside"}
)
"""Elements whose text a reader skips or reads as something other than prose."""

VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"})
"""Elements that never hold text and have no end tag."""


class _MainText(HTMLParser):
    """Collects the words of ``<main>`` outside :data:`SKIPPED` elements, up to an "Exercises" heading."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.open: list[str] = []
        self.in_main = False
        self.done = False
        self.heading: list[str] | None = None
        self.words: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in VOID or self.done:
            return
        if tag == "main":
            self.in_main = True
        if tag == "h2" and self.in_main:
            self.heading = []
        self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID or self.done or tag not in self.open:
            return
        while self.open and self.open.pop() != tag:
            pass
        if tag == "h2" and self.heading is not None:
            if "Exercises" in " ".join(self.heading):
                self.done = True
            else:
                self.words.extend(self.heading)
            self.heading = None
        if tag == "main":
            self.done = True

    def handle_data(self, data: str) -> None:
        if self.done or not self.in_main or SKIPPED.intersection(self.open):
            return
        (self.heading if self.heading is not None else self.words).extend(data.split())


def main_text_words(html: str) -> int:
    """The number of words in a built page's main text, as this module defines it (every chapter page); a
    word holds a letter or a digit, so the punctuation left beside a formula or a code span is not one."""
    parser = _MainText()
    parser.feed(html)
    parser.close()
    return sum(any(c.isalnum() for c in word) for word in parser.words)


def reading_minutes(html: str) -> float:
    """Minutes a reader at :data:`WORDS_PER_MINUTE` takes over a built page's main text."""
    return main_text_words(html) / WORDS_PER_MINUTE
