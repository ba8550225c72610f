"""Pandoc's JSON syntax tree, read and written from Python: walking it, finding elements, building nodes.

Used by the pandoc backend of ``rlbook build`` (:mod:`rlbook.publish.page`
rewrites each page's tree; :mod:`rlbook.publish.site` writes the pages).
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator


def walk(node, fn: Callable[[dict], list | None]):
    """Rewrite a pandoc JSON tree bottom-up: ``fn(element)`` returns a replacement list, or None to keep it."""
    if isinstance(node, list):
        result = []
        for item in node:
            item = walk(item, fn)
            replacement = fn(item) if isinstance(item, dict) and "t" in item else None
            result.extend([item] if replacement is None else replacement)
        return result
    if isinstance(node, dict):
        return {key: walk(value, fn) for key, value in node.items()}
    return node


def elements(node, kind: str) -> Iterator[dict]:
    """Every element of type ``kind`` in a pandoc JSON tree, in document order."""
    if isinstance(node, list):
        for item in node:
            yield from elements(item, kind)
    elif isinstance(node, dict):
        if node.get("t") == kind:
            yield node
        for value in node.values():
            yield from elements(value, kind)


def plain_text(inlines: list) -> str:
    """The text of pandoc inlines, as pandoc's ``stringify`` gives it (used for titles and alt text)."""
    words = []
    for inline in inlines:
        kind, content = inline["t"], inline.get("c")
        if kind in ("Str",):
            words.append(content)
        elif kind in ("Space", "SoftBreak", "LineBreak"):
            words.append(" ")
        elif kind in ("Code", "Math"):
            words.append(content[1])
        elif kind in ("Emph", "Strong", "Underline", "Strikeout", "SmallCaps", "Superscript", "Subscript"):
            words.append(plain_text(content))
        elif kind in ("Span", "Link", "Image", "Cite", "Quoted"):
            words.append(plain_text(content[1]))
    return "".join(words)


def inlines(text: str) -> list:
    """Pandoc inlines for plain ``text``: words as ``Str``, single spaces as ``Space``."""
    inlines: list = []
    for i, word in enumerate(text.split(" ")):
        if i:
            inlines.append({"t": "Space"})
        if word:
            inlines.append({"t": "Str", "c": word})
    return inlines


def attr(identifier: str = "", classes: list | None = None, pairs: list | None = None) -> list:
    return [identifier, classes or [], pairs or []]


def span(text: str, cls: str) -> dict:
    return {"t": "Span", "c": [attr("", [cls]), inlines(text)]}


def raw(text: str) -> dict:
    return {"t": "RawBlock", "c": ["html", text]}


def div(cls: list[str], blocks: list, identifier: str = "") -> dict:
    return {"t": "Div", "c": [attr(identifier, cls), blocks]}


def pandoc_run(pandoc: str, args: list[str], text: str, out: Callable[[str], None]) -> str:
    """Run pandoc on ``text`` and return its output; its warnings are passed to ``out``."""
    done = subprocess.run([pandoc, *args], input=text, capture_output=True, text=True, check=False)
    for line in done.stderr.splitlines():
        out(f"  pandoc: {line}")
    if done.returncode:
        first = next((line.strip() for line in done.stderr.splitlines() if line.strip()), "no message")
        raise RuntimeError(f"pandoc failed with exit {done.returncode}: {first[:200]}")
    return done.stdout
