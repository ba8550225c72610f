"""A chapter page holds prose, figures and the code it teaches; its numbers come from its facts.

Used on every chapter page and the appendix that load their facts, by
:func:`rlbook.publish.reader.lint_pages` (the book's lint test,
``tests/book/test_lint.py``). The rules (ARCHITECTURE.md, section 6, "One place per fact"):

- one hidden cell (``#| include: false``) first, which loads the chapter's
  facts with ``book.load(...)`` and so checks its claims; any other hidden
  cell is a wording cell, which only binds names to the facts' choices worded
  by the page, ``takeover = F.say("takeover", every="...", some="...")``
  with constant strings (:mod:`rlbook.book.wording`);
- no ``assert`` anywhere on the page: a claim is declared once, in the
  chapter's facts module (:mod:`rlbook.book`);
- no ``def``, ``lambda`` or ``class`` outside the exercises: analysis and
  helpers live in ``rlbook``;
- every inline ``{python}`` value is a reference into the facts: a name the
  hidden cells bind, followed only by attributes and constant subscripts
  (``F.main.end``, ``F.kinds["uncertain"]``), so the page picks no number
  and computes none; or a claim's mark, ``F.law("name")``, ``F.seeds("name")``
  or ``F.finding("name")`` (:mod:`rlbook.book.marks`).
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
    loads = [b for b in hidden if "book.load(" in b.text]
    if len(loads) != 1 or hidden[0] is not loads[0]:
        problems.append(
            f"{page.source}:1: a chapter page has one hidden cell that loads its facts with book.load(...), "
            f"before any other; this one has {len(loads)} such cell(s) among {len(hidden)} hidden cell(s)"
        )
    roots = _bound_names(loads[0]) if len(loads) == 1 else set()
    for block in hidden:
        if block not in loads:
            problems += _wording_problems(page.source, block, roots)
            roots |= _bound_names(block)
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


def _is_words(node: ast.AST, roots: set[str]) -> bool:
    """``F.say("name", case="...", ...)``: the facts' choice worded with constant strings."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "say"
        and _is_reference(node.func.value, roots)
        and len(node.args) == 1
        and all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in node.args)
        and all(k.arg and isinstance(k.value, ast.Constant) and isinstance(k.value.value, str) for k in node.keywords)
    )


def _wording_problems(path: str, block: Block, roots: set[str]) -> list[str]:
    """A hidden cell other than the facts' must only bind names to worded choices (:func:`_is_words`)."""
    try:
        tree = ast.parse(_body(block))
    except SyntaxError:
        return [f"{path}:{block.line}: a hidden cell that is not Python"]
    bad = [
        node
        for node in tree.body
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and _is_words(node.value, roots))
    ]
    return [
        f"{path}:{block.line + getattr(node, 'lineno', 1)}: a hidden cell other than the facts' only words the "
        'facts\' choices: name = F.say("choice", case="...", ...), with constant strings'
        for node in bad
    ]


def page_wordings(text: str) -> dict[str, dict[str, str]]:
    """Every choice a page words in its wording cells: choice name -> case -> the page's words for it.

    Read from the source, so that the tests can hold every case's words to the
    prose rules (:mod:`rlbook.publish.prose`), the cases this build's runs did
    not choose included.
    """
    found: dict[str, dict[str, str]] = {}
    for block in split_qmd(text):
        if block.kind != "code" or block.options.get("include") is not False:
            continue
        try:
            tree = ast.parse(_body(block))
        except SyntaxError:
            continue
        for node in tree.body:
            call = node.value if isinstance(node, ast.Assign) else None
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "say":
                name = call.args[0]
                if isinstance(name, ast.Constant) and isinstance(name.value, str):
                    found[name.value] = {
                        str(k.arg): k.value.value
                        for k in call.keywords
                        if isinstance(k.value, ast.Constant) and isinstance(k.value.value, str)
                    }
    return found


MARKS = ("law", "seeds", "finding")
"""The claims' marks a page may call inline (:mod:`rlbook.book.marks`)."""


def _is_mark(node: ast.AST, roots: set[str]) -> bool:
    """``F.law("name")`` and its kin: a claim's mark, with the claim's name as a constant."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in MARKS
        and _is_reference(node.func.value, roots)
        and len(node.args) == 1
        and not node.keywords
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    )


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
        if tree is None or not (_is_reference(tree, roots) or _is_mark(tree, roots)):
            line = block.line + line_of(block.text, match.start()) - 1
            problems.append(
                f"{path}:{line}: the inline value {match.group(1)!r} is not a reference into the facts "
                f"({', '.join(sorted(roots)) or 'no facts loaded'}); compute it in the facts module"
            )
    return problems
