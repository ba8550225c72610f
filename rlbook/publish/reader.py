"""What the reader sees on a page: the lint rules that keep the book's machinery out of the way.

Run by the test suite on every page of the book (:func:`lint_pages`, in
``tests/book/test_lint.py``), beside :func:`rlbook.publish.lint.lint_book`;
the rules are those of ARCHITECTURE.md, section 6. A cell the reader sees (neither ``#| include: false``
nor ``#| echo: false``, the two options both backends honour) teaches: it
holds no ``assert``, it is at most :data:`MAX_VISIBLE_LINES` lines of at most
:data:`MAX_VISIBLE_WIDTH` characters, it composes no prose, and if it only
draws a figure or a table (its label is ``fig-`` or ``tbl-``) it folds
closed (``#| code-fold: true``). No cell, seen or hidden, chooses the page's wording with
if/else. A chapter has one shape (why it matters, learning objectives, its
sections, a summary, then the exercises); its exercises are headings numbered
``Exercise N.k`` (chapter N's k-th); no reader-facing text mentions "the
source".
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path
from typing import cast

from rlbook.publish.config import ConfigError, Page, book_pages, read_config
from rlbook.publish.lint import prose_for_scanning
from rlbook.publish.page_rules import page_rule_problems
from rlbook.publish.qmd import HEADING, INLINE_PYTHON, Block, line_of, split_qmd

MAX_VISIBLE_LINES = 15
"""The most lines (options left out) a cell that the reader sees may have."""
MAX_VISIBLE_WIDTH = 80
"""The most characters a line of a cell that the reader sees may have: the site shows 80 without clipping."""

SOURCE_MENTION = re.compile(r"\bthe sources?\b|\bsource's\b", re.IGNORECASE)
PROSE_WORD = re.compile(r"[A-Za-z]{2,}")
EXERCISE_WORD = re.compile(r"^\W*exercise\b", re.IGNORECASE)
EXERCISE_MENTION = re.compile(r"\b[Ee]xercises? ([0-9A-Z]+)(?![.\d]*\.\d)")
DIV_FENCE = re.compile(r"^\s*(:{3,})\s*(\S.*)?$")


def visible(options: dict, defaults: dict | None = None) -> bool:
    """Whether a cell's code appears on the page: neither ``include`` nor ``echo`` is false (as Quarto decides)."""
    merged = {**(defaults or {}), **options}
    return merged.get("include") is not False and merged.get("echo") is not False


def code_lines(code: str) -> int:
    """The number of lines a cell shows: its code without option lines and without blank lines at either end."""
    stripped = code.strip("\n")
    return len(stripped.split("\n")) if stripped.strip() else 0


def lint_pages(root: Path) -> list[str]:
    """Every page of the book at ``root`` checked by :func:`reader_problems`, and every chapter that loads its facts
    by :func:`rlbook.publish.page_rules.page_rule_problems` (empty when every page reads clean)."""
    try:
        pages = book_pages(Path(root))
        defaults = read_config(Path(root)).get("execute") or {}
    except ConfigError as err:
        return [str(err)]
    problems = []
    for page in pages:
        text = (Path(root) / page.source).read_text(encoding="utf-8")
        problems += reader_problems(page, text, defaults)
        if page.number and "book.load(" in text:  # a chapter on its facts
            problems += page_rule_problems(page, text)
    return problems


def reader_problems(page: Page, text: str, defaults: dict | None = None) -> list[str]:
    """Every way page ``page`` (its ``.qmd`` text) breaks the reader's rules, as ``"path:line: message"``.

    ``defaults`` are the book's execute options (``echo``, ``include``).
    """
    blocks = split_qmd(text)
    inline_names = _inline_names(blocks)
    problems = []
    for block in blocks:
        if block.kind == "code":
            problems += _cell_problems(page.source, block, inline_names, visible(block.options, defaults))
        elif block.kind == "markdown":
            problems += _prose_problems(page.source, block)
    problems += _inline_problems(page.source, blocks)
    problems += _exercise_problems(page, blocks)
    if page.part == "main" and page.number is not None:
        problems += _structure_problems(page.source, blocks)
    return problems


def _inline_trees(blocks: list[Block]) -> Iterator[tuple[Block, re.Match, ast.Expression]]:
    """Each inline ``{python}`` expression of the page's prose that parses: its block, its match, its tree."""
    for block in blocks:
        if block.kind != "markdown":
            continue
        for match in INLINE_PYTHON.finditer(block.text):
            try:
                yield block, match, ast.parse(match.group(1), mode="eval")
            except SyntaxError:
                continue


def _inline_names(blocks: list[Block]) -> set[str]:
    """The names that the page's inline ``{python}`` expressions read."""
    return {node.id for _, _, tree in _inline_trees(blocks) for node in ast.walk(tree) if isinstance(node, ast.Name)}


def _cell_problems(path: str, block: Block, inline_names: set[str], shown: bool) -> list[str]:
    code = block.text.split("\n")
    skip = 0
    while skip < len(code) and code[skip].startswith("#|"):
        skip += 1
    body = "\n".join(code[skip:])
    first = block.line + skip
    try:
        tree = ast.parse(body)
    except SyntaxError:
        return []
    problems = []

    def where(node: ast.AST) -> str:
        assert isinstance(node, ast.stmt)  # an assert, an assignment or an if: statements, which have a line
        return f"{path}:{first + node.lineno - 1}"

    for node in ast.walk(tree):
        if shown and isinstance(node, ast.Assert):
            problems.append(
                f"{where(node)}: an assert in a cell the reader sees; check the claim in a hidden cell "
                "(#| include: false) or in an rlbook function that raises naming it"
            )
        for name, value in _assigned_strings(node):
            if name not in inline_names:
                continue
            if _chooses_wording(value):
                problems.append(
                    f"{where(node)}: {name} chooses the page's wording with if/else; write the "
                    "sentence so it holds on every draw, or take it from one tested rlbook function"
                )
            elif shown and _composes_prose(value):
                problems.append(
                    f"{where(node)}: {name} is prose composed in a cell the reader sees; write it in "
                    "the text with inline values, or take it from one tested rlbook function"
                )
        if isinstance(node, ast.If) and _branch_assigns_prose(node, inline_names):
            problems.append(
                f"{where(node)}: an if/else chooses the page's wording; write the sentence so it holds "
                "on every draw, or take it from one tested rlbook function"
            )
    lines = code_lines(body)
    if shown and lines > MAX_VISIBLE_LINES:
        problems.append(
            f"{path}:{block.line}: a cell the reader sees has {lines} lines (at most "
            f"{MAX_VISIBLE_LINES}); move the machinery into rlbook or a hidden cell"
        )
    if shown:
        problems += [
            f"{path}:{first + offset}: a line of {len(line)} characters in a cell the reader sees (at most "
            f"{MAX_VISIBLE_WIDTH}, which the page shows without clipping); wrap it"
            for offset, line in enumerate(code[skip:])
            if len(line) > MAX_VISIBLE_WIDTH
        ]
        label = str(block.options.get("label") or "")
        if label.startswith(("fig-", "tbl-")) and block.options.get("code-fold") is not True:
            problems.append(
                f"{path}:{block.line}: the cell that draws {label} shows its code open; a cell that "
                "only draws a figure or a table folds closed (#| code-fold: true)"
            )
    return problems


def _assigned_strings(node: ast.AST) -> Iterator[tuple[str, ast.AST]]:
    """``(name, value)`` for an assignment to a plain name or into one (``a = ...``, ``a: str = ...``, ``a[k] = ...``)."""
    if isinstance(node, ast.Assign):
        for target in node.targets:
            if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
                yield target.value.id, node.value
            elif isinstance(target, ast.Name):
                yield target.id, node.value
    elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
        yield node.target.id, node.value


def _is_text(node: ast.AST) -> bool:
    return isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, str))


def _composes_prose(node: ast.AST) -> bool:
    """An f-string with words in it (not just a formatted number such as ``f"{x:.0%}"``)."""
    if not isinstance(node, ast.JoinedStr):
        return False
    literal = "".join(cast(str, part.value) for part in node.values if isinstance(part, ast.Constant))
    return bool(PROSE_WORD.search(literal))


def _chooses_wording(node: ast.AST) -> bool:
    """An expression that picks between pieces of text: ``"more" if x else "fewer"``, at any depth."""
    return any(isinstance(n, ast.IfExp) and (_is_text(n.body) or _is_text(n.orelse)) for n in ast.walk(node))


def _branch_assigns_prose(node: ast.If, inline_names: set[str]) -> bool:
    """An ``if`` statement whose branches give text to a name the page's inline values read."""
    for branch in (node.body, node.orelse):
        for statement in branch:
            for name, value in _assigned_strings(statement):
                if name in inline_names and _is_text(value):
                    return True
    return False


def _inline_problems(path: str, blocks: list[Block]) -> list[str]:
    return [
        f"{path}:{block.line + line_of(block.text, match.start()) - 1}: an inline value chooses the page's "
        "wording with if/else"
        for block, match, tree in _inline_trees(blocks)
        if _chooses_wording(tree)
    ]


def _prose_problems(path: str, block: Block) -> list[str]:
    prose = prose_for_scanning(block.text)
    return [
        f"{path}:{block.line + line_of(prose, m.start()) - 1}: {m.group(0)!r} in text the reader sees; "
        "the book's sources are for its authors"
        for m in SOURCE_MENTION.finditer(prose)
    ]


def headings(blocks: list[Block]) -> Iterator[tuple[int, int, str, bool]]:
    """``(line, level, text, inside_a_div)`` for every markdown heading of a page (callouts are divs)."""
    depth = 0
    for block in blocks:
        if block.kind != "markdown":
            continue
        for offset, line in enumerate(block.text.split("\n")):
            fence = DIV_FENCE.match(line)
            if fence:
                depth = depth + 1 if fence.group(2) else max(depth - 1, 0)
                continue
            match = HEADING.match(line)
            if match:
                yield block.line + offset, len(match.group(1)), match.group(2), depth > 0


def _exercise_problems(page: Page, blocks: list[Block]) -> list[str]:
    """Exercises are headings ``Exercise N.k[: title]``, k counting 1, 2, ... on chapter N; prose cites them so."""
    problems = []
    expected = 1
    for line, _, text, _ in headings(blocks):
        if not EXERCISE_WORD.match(text) or re.match(r"^exercises\b", text, re.IGNORECASE):
            continue
        want = f"Exercise {page.number}.{expected}"
        if page.number is None or not re.match(rf"^{re.escape(want)}(?::\s|$)", text):
            problems.append(
                f"{page.source}:{line}: exercise heading {text!r} should read '{want}: ...'"
                " (chapter N's k-th exercise is Exercise N.k)"
            )
        expected += 1
    for block in blocks:
        if block.kind != "markdown":
            continue
        prose = prose_for_scanning(block.text)
        for match in re.finditer(r"^\*\*Exercise\b", prose, re.MULTILINE):
            problems.append(
                f"{page.source}:{block.line + line_of(prose, match.start()) - 1}: an exercise in bold "
                "text; make it a heading 'Exercise N.k: ...' so the page's contents list it"
            )
        for match in EXERCISE_MENTION.finditer(prose):
            if HEADING.match(prose[prose.rfind("\n", 0, match.start()) + 1 :].split("\n", 1)[0]):
                continue  # a heading is checked above
            problems.append(
                f"{page.source}:{block.line + line_of(prose, match.start()) - 1}: "
                f"{match.group(0)!r}: cite an exercise by its number N.k"
            )
    return problems


STRUCTURE = ("Why this chapter matters", "Summary", "Exercises")


def _structure_problems(path: str, blocks: list[Block]) -> list[str]:
    """A chapter opens with "Why this chapter matters" and learning objectives, ends with a summary, then exercises."""
    sections = [(line, text) for line, level, text, inside in headings(blocks) if level == 2 and not inside]
    boxed = [text for _, level, text, inside in headings(blocks) if level == 2 and inside]
    names = [text for _, text in sections]
    problems = []
    if not names or names[0] != STRUCTURE[0]:
        problems.append(f"{path}:1: the chapter's first section should be '{STRUCTURE[0]}'")
    if "Learning objectives" not in boxed + names:
        problems.append(f"{path}:1: the chapter has no 'Learning objectives'")
    if names[-2:] != list(STRUCTURE[1:]):
        problems.append(
            f"{path}:1: the chapter should end with '{STRUCTURE[1]}' and then '{STRUCTURE[2]}' "
            f"(it ends with {names[-2:]})"
        )
    return problems


def answer_checks(cells: list[tuple[str, str]]) -> set[int]:
    """The indices of the cells that check a reader's answer, among a page's ``(kind, text)`` cells.

    Such a cell calls an exercise's checker (a function named ``check_...``,
    as every checker of :mod:`rlbook.exercises` is) outside any box: an
    exercise's or a "Try it"'s own check, not the one in its solution box.
    Run by the build, it can only say that no answer was given yet, so the
    website shows it without its output.
    """
    found: set[int] = set()
    depth = 0
    for index, (kind, text) in enumerate(cells):
        if kind == "markdown":
            for line in text.split("\n"):
                fence = DIV_FENCE.match(line)
                if fence:
                    depth = depth + 1 if fence.group(2) else max(depth - 1, 0)
        elif kind == "code" and depth == 0 and _calls_a_checker(text):
            found.add(index)
    return found


def _calls_a_checker(code: str) -> bool:
    try:
        tree = ast.parse("\n".join(line for line in code.split("\n") if not line.startswith("#|")))
    except SyntaxError:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name.startswith("check_"):
                return True
    return False
