"""A chapter page holds prose, figures and the code it teaches; its numbers come from its facts (issue 42).

Used on every chapter page and the appendix by the book's tests
(``tests/book/test_lint.py``), beside :mod:`rlbook.publish.reader`. The
rules (ARCHITECTURE.md, section 6, "One place per fact"):

- one hidden cell (``#| include: false``), which loads the chapter's facts
  with ``book.load(...)`` and so checks its claims; no other hidden cell;
- no ``assert`` anywhere on the page: a claim is declared once, in the
  chapter's facts module (:mod:`rlbook.book`);
- no ``def``, ``lambda`` or ``class`` outside the exercises: analysis and
  helpers live in ``rlbook``;
- every inline ``{python}`` value is a reference into the facts: a name the
  hidden cell binds, followed only by attributes and constant subscripts
  (``F.main.end``, ``F.kinds["uncertain"]``), so the page picks no number
  and computes none.
"""

from __future__ import annotations

import ast
import re

from rlbook.publish.config import Page
from rlbook.publish.qmd import INLINE_PYTHON, Block, line_of, split_qmd

EXERCISES = re.compile(r"^##\s+Exercises\b", re.MULTILINE)


def page_rule_problems(page: Page, text: str) -> list[str]:
    """Every way chapter page ``page`` (its ``.qmd`` text) breaks the rules above, as ``"path:line: message"``."""
    blocks = split_qmd(text)
    hidden = [b for b in blocks if b.kind == "code" and b.options.get("include") is False]
    problems = []
    if len(hidden) != 1 or "book.load(" not in hidden[0].text:
        problems.append(
            f"{page.source}:1: a chapter page has one hidden cell, which loads its facts with "
            f"book.load(...); this one has {len(hidden)} hidden cell(s)"
        )
    roots = _bound_names(hidden[0]) if hidden else set()
    in_exercises = False
    for block in blocks:
        if block.kind == "markdown":
            problems += _inline_problems(page.source, block, roots)
            in_exercises = in_exercises or bool(EXERCISES.search(block.text))
        elif block.kind == "code":
            problems += _code_problems(page.source, block, in_exercises)
    return problems


def _bound_names(block: Block) -> set[str]:
    """The names a cell binds at its top level (``F = book.load(...)``, ``S = F.by_seed[0]``)."""
    try:
        tree = ast.parse(_body(block))
    except SyntaxError:
        return set()
    return {t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets if isinstance(t, ast.Name)}


def _body(block: Block) -> str:
    return "\n".join(line for line in block.text.split("\n") if not line.startswith("#|"))


def _code_problems(path: str, block: Block, in_exercises: bool) -> list[str]:
    try:
        tree = ast.parse(_body(block))
    except SyntaxError:
        return []
    first = block.line + sum(1 for line in block.text.split("\n") if line.startswith("#|"))
    problems = []
    for node in ast.walk(tree):
        where = f"{path}:{first + getattr(node, 'lineno', 1) - 1}"
        if isinstance(node, ast.Assert):
            problems.append(f"{where}: an assert on the page; declare the claim once in the chapter's facts module")
        elif not in_exercises and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            problems.append(f"{where}: a helper defined on the page; it belongs in rlbook")
    return problems


def _is_reference(node: ast.AST, roots: set[str]) -> bool:
    """A name from ``roots`` followed only by attributes and constant subscripts."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        if isinstance(node, ast.Subscript) and not isinstance(node.slice, ast.Constant):
            return False
        node = node.value
    return isinstance(node, ast.Name) and node.id in roots


def _inline_problems(path: str, block: Block, roots: set[str]) -> list[str]:
    problems = []
    for match in INLINE_PYTHON.finditer(block.text):
        try:
            tree = ast.parse(match.group(1), mode="eval").body
        except SyntaxError:
            tree = None
        if tree is None or not _is_reference(tree, roots):
            line = block.line + line_of(block.text, match.start()) - 1
            problems.append(
                f"{path}:{line}: the inline value {match.group(1)!r} is not a reference into the facts "
                f"({', '.join(sorted(roots)) or 'no facts loaded'}); compute it in the facts module"
            )
    return problems
