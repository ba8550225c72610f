"""Source code as a page shows it: rlbook's own functions laid out to fit the book's code column.

The package is written to 120 columns; a page shows 80 without clipping
(:data:`WIDTH`). :func:`listing` lays a function's source out again for the
page: the code by ``ruff format`` at the page's width where ruff is
installed (it comes with the ``dev`` extra, so the book's build has it), and
any line still too long, a docstring's or a comment's, wrapped at the width
with its indentation kept. A linter's ``# noqa`` code is left out of a
comment; its reason stays. What the code does is unchanged; only where its
lines break. Used by chapters 1 and 5 and the glance page (the functions they
print) and by every exercise's solution box (:mod:`rlbook.exercises.registry`).
"""

from __future__ import annotations

import ast
import inspect
import io
import re
import subprocess
import textwrap
import tokenize
from collections.abc import Callable

NOQA = re.compile(
    r"(?P<code>\S.*?)?(?P<gap>\s*)# noqa: [A-Z]+[0-9]+(?:, ?[A-Z]+[0-9]+)*(?: ?-+ ?(?P<reason>.*))?$", re.MULTILINE
)
"""A linter's exemption in a comment, with the reason the package gives for it."""
WIDTH = 80
"""The most characters a line of a listing may have: the book's code column shows 80 without clipping."""


def listing(fn: Callable | str, width: int = WIDTH) -> str:
    """The source of ``fn`` (or the source text itself), dedented, with no line longer than ``width``.

    Code lines are laid out by ``ruff format`` when ruff is installed; a
    line that is still too long (a docstring's text, a comment, or code on a
    machine without ruff) is wrapped at a space, its indentation kept, a
    comment's continuation starting with ``#`` again. A line without a space
    to break at stays as it is.
    """
    source = textwrap.dedent(fn if isinstance(fn, str) else inspect.getsource(fn))
    source = _formatted(_comments_above(NOQA.sub(_reason_only, source), width), width - 1)
    docstrings = _docstring_lines(source)
    lines = []
    for number, line in enumerate(source.splitlines(), start=1):
        if len(line) <= width:
            lines.append(line)
        elif number in docstrings:
            lines += _wrap(line, width, "")
        elif line.lstrip().startswith("#"):
            lines += _wrap(line, width, "# ")
        else:
            lines.append(line)
    return "\n".join(lines) + "\n"


def _reason_only(match: re.Match) -> str:
    """A ``# noqa`` comment as a reader needs it: its reason alone, or nothing where it gives none."""
    code, reason = match["code"] or "", match["reason"]
    if not reason:
        return code.rstrip()
    return f"{code}{match['gap'] or ''}# {reason}" if code else f"# {reason}"


def _comments_above(source: str, width: int) -> str:
    """``source`` with the comment that ends each line longer than ``width`` moved onto a line of its own above."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return source
    lines = source.splitlines()
    for token in reversed([t for t in tokens if t.type == tokenize.COMMENT]):
        row, column = token.start
        line = lines[row - 1]
        if len(line) > width and line[:column].strip():
            indent = line[: len(line) - len(line.lstrip())]
            lines[row - 1 : row] = [indent + token.string, line[:column].rstrip()]
    return "\n".join(lines) + "\n"


def _formatted(source: str, width: int) -> str:
    """``source`` laid out by ruff at ``width``, or unchanged where ruff is missing or refuses it."""
    try:
        from ruff.__main__ import find_ruff_bin

        command = [find_ruff_bin(), "format", "--line-length", str(width), "--stdin-filename", "listing.py", "-"]
    except (ImportError, FileNotFoundError):
        return source
    done = subprocess.run(command, input=source, capture_output=True, text=True, check=False)
    return done.stdout if done.returncode == 0 else source


def _docstring_lines(source: str) -> set[int]:
    """The numbers of the lines that hold a docstring: prose, which may be wrapped without changing the code."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    inside: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            value = body[0].value
            if isinstance(value, ast.Constant) and isinstance(value.value, str) and value.end_lineno:
                inside.update(range(value.lineno, value.end_lineno + 1))
    return inside


def _wrap(line: str, width: int, continuation: str) -> list[str]:
    """``line`` broken at spaces into lines of at most ``width``, each with its indentation and ``continuation``."""
    indent = line[: len(line) - len(line.lstrip())]
    body = line.lstrip()
    if continuation and body.startswith(continuation.strip()):
        body = body[len(continuation.strip()) :].lstrip()
        first = indent + continuation
    else:
        first = indent
    wrapped = textwrap.wrap(
        body,
        width=width,
        initial_indent=first,
        subsequent_indent=indent + continuation,
        break_long_words=False,
        break_on_hyphens=False,
    )
    return wrapped or [line]
