"""Reading a ``.qmd`` page: its front matter, prose, executable cells and their ``#|`` options.

Used by every page of the book: the build (:mod:`rlbook.publish.build`), the
notebooks (:mod:`rlbook.publish.jupyter`), the pandoc site and the lints all
read pages through these functions. The syntax is Quarto's: executable cells
are fenced as ```` ```{python} ```` and carry their options as leading
``#| key: value`` lines (YAML).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import yaml

FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})(.*)$")
EXECUTABLE_INFO = re.compile(r"^\s*\{python\b[^}]*\}\s*$")
INLINE_PYTHON = re.compile(r"`\{python\}\s+([^`]+?)\s*`")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*(?:\{([^}]*)\})?\s*$")


@dataclass
class Block:
    """One piece of a ``.qmd`` file: front matter, prose, an executable cell or a verbatim fence."""

    kind: str  # "front", "markdown", "code" (executable python) or "verbatim"
    text: str  # for "code": the cell source without its fence lines
    line: int  # 1-based line of the first line of ``text`` in the file
    options: dict = field(default_factory=dict)


def split_qmd(text: str) -> list[Block]:
    """Split a ``.qmd`` text into front matter, prose, executable cells and verbatim fences.

    Executable cells are fenced with ```` ```{python} ````; their ``#|`` option
    lines are parsed into ``Block.options`` (a ValueError names bad YAML).
    """
    lines = text.split("\n")
    blocks: list[Block] = []
    start = 0
    if lines and lines[0].strip() == "---":
        for end in range(1, len(lines)):
            if lines[end].strip() in ("---", "..."):
                blocks.append(Block("front", "\n".join(lines[1:end]), 2))
                start = end + 1
                break
    prose: list[str] = []
    prose_line = start + 1
    i = start
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            prose.append(lines[i])
            i += 1
            continue
        indent, fence, info = opening.groups()
        close = _closing_fence(lines, i + 1, fence)
        if prose:
            blocks.append(Block("markdown", "\n".join(prose), prose_line))
        body = "\n".join(lines[i + 1 : close])
        if EXECUTABLE_INFO.match(info) and not indent:
            options, _ = cell_options(body)
            blocks.append(Block("code", body, i + 2, options))
        else:
            blocks.append(Block("verbatim", "\n".join(lines[i : close + 1]), i + 1))
        i = close + 1
        prose, prose_line = [], i + 1
    if prose:
        blocks.append(Block("markdown", "\n".join(prose), prose_line))
    return blocks


def _closing_fence(lines: list[str], start: int, fence: str) -> int:
    """Index of the line closing a fence opened with ``fence`` (or the last line)."""
    for j in range(start, len(lines)):
        stripped = lines[j].strip()
        if stripped and stripped[0] == fence[0] and set(stripped) == {fence[0]} and len(stripped) >= len(fence):
            return j
    return len(lines) - 1


def cell_options(source: str) -> tuple[dict, str]:
    """Quarto's ``#| key: value`` options at the top of a cell, and the code without them.

    >>> cell_options("#| label: fig-a\\n#| echo: false\\nplot()")
    ({'label': 'fig-a', 'echo': False}, 'plot()')
    """
    lines = source.split("\n")
    n = 0
    while n < len(lines) and lines[n].startswith("#|"):
        n += 1
    option_text = "\n".join(line[3:] if line.startswith("#| ") else line[2:] for line in lines[:n])
    try:
        options = yaml.safe_load(option_text) if option_text.strip() else {}
    except yaml.YAMLError as err:
        raise ValueError(f"cell options are not valid YAML: {err}") from None
    if not isinstance(options, dict):
        raise ValueError(f"cell options must be 'key: value' lines, got {option_text!r}")  # noqa: TRY004
    return options, "\n".join(lines[n:])


def front_matter(text: str) -> dict:
    """The YAML front matter of a ``.qmd`` text as a dict (empty when there is none); a ValueError says bad YAML."""
    blocks = split_qmd(text)
    if blocks and blocks[0].kind == "front":
        try:
            data = yaml.safe_load(blocks[0].text)
        except yaml.YAMLError as err:
            raise ValueError(f"front matter is not valid YAML ({yaml_problem(err, blocks[0].line - 1)})") from None
        return data if isinstance(data, dict) else {}
    return {}


def line_of(text: str, offset: int) -> int:
    """The 1-based line number of ``offset`` in ``text``."""
    return text.count("\n", 0, offset) + 1


def yaml_problem(err: yaml.YAMLError, first_line: int = 0) -> str:
    """Where and what a YAML error is, in a few words (``line 3, column 5: found a tab``)."""
    mark = getattr(err, "problem_mark", None)
    problem = getattr(err, "problem", None) or str(err).splitlines()[0]
    return f"line {mark.line + 1 + first_line}, column {mark.column + 1}: {problem}" if mark else problem
