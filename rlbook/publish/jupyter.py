"""An executed page as the notebook a student opens in JupyterLab (``_build/notebooks/<page>.ipynb``).

Used by ``rlbook build`` for every page it executes. The executed notebook
(``_build/executed/``) still holds the page's Quarto markup, which the
website is rendered from; JupyterLab would show that markup raw. The
student's notebook is written from it here:

* callouts become Markdown: a titled quote, or, for a collapsed one such as a
  solution, a closed ``<details>`` block whose code is a code block to copy,
  not a cell that "Run All" would execute over the student's answer;
* headings are numbered as on the website and lose their ``{#sec-...}`` ids;
  cross-references and citations read as text (:mod:`rlbook.publish.nbrefs`),
  and a notebook that cites ends with its references;
* ``#|`` cell options move to the cell's metadata (``quarto``); the code of
  hidden cells is collapsed in JupyterLab (``jupyter.source_hidden``), figures and
  tables get their numbered caption as a Markdown cell;
* each exercise has one cell for the answer, then one for its check, and no
  cell that "Run All" executes after it defines a name the answer defines;
* the kernelspec is written as JupyterLab writes it, and execution counts run 1, 2, 3, ...;
* the first code cell checks that ``rlbook`` is installed and, if not, says in one line what to install
  and where the site keeps it (:mod:`rlbook.publish.wheel`).
"""

from __future__ import annotations

import ast
import copy
import html
import re
import sys
from collections.abc import Mapping
from pathlib import Path

import nbformat

from rlbook.publish.config import Page
from rlbook.publish.extras import KEY
from rlbook.publish.nbrefs import (
    CALLOUT_OPEN,
    DIV_CLOSE,
    Bibliography,
    book_labels,
    citations,
    numbered_headings,
    resolve_citations,
    resolve_crossrefs,
)
from rlbook.publish.qmd import FENCE, HEADING, cell_options, front_matter
from rlbook.publish.wheel import requirement_cell

KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
"""The kernelspec as JupyterLab writes it for ipykernel's ``python3`` kernel."""
CALLOUT_TITLES = {"note": "Note", "tip": "Tip", "warning": "Warning", "important": "Important", "caution": "Caution"}
EXERCISE = re.compile(r"^(?:(#{1,6})\s+(?:[\dA-Z]+(?:\.\d+)*\s+)?|\*\*)Exercise\b", re.MULTILINE)
REFS_MARK = "\x00refs\x00"
QMD_LINK = re.compile(r"\]\((?![a-z]+:)(?:[^)\s#]*/)?([^/)\s#]+)\.qmd(#[^)\s]*)?\)")


def student_notebooks(
    root: Path,
    pages: list[Page],
    executed: Mapping[str, dict],
    pandoc: str,
    bibliography: str | None,
    wheel: str | None = None,
) -> dict[str, nbformat.NotebookNode]:
    """The student's notebook of every page in ``executed`` (page stem: executed notebook), by :func:`for_jupyter`.

    ``bibliography`` is the book's ``.bib`` file relative to ``root`` (``_quarto.yml``'s), or None. With
    ``wheel`` (the file name of the book's wheel, shipped beside the notebooks), every notebook with code
    starts with :func:`rlbook.publish.wheel.requirement_cell`, naming the page's extra if its front matter
    needs one (:mod:`rlbook.publish.extras`).
    """
    labels = book_labels(root, pages)
    bib = Bibliography(Path(root) / bibliography, pandoc) if bibliography else None
    book_keys: list[str] = []
    if bib is not None:
        for page in pages:
            for text in _shown(executed.get(page.stem, {"cells": []})["cells"]):
                book_keys += [k for c in citations(text, bib.keys) for k in cited_keys(c, bib.keys)]
    book_keys = list(dict.fromkeys(book_keys))
    notebooks = {}
    for page in pages:
        if page.stem not in executed:
            continue
        needs = front_matter((Path(root) / page.source).read_text(encoding="utf-8")).get(KEY) if wheel else None
        first = requirement_cell(wheel, (needs or {}).get("extra")) if wheel else None
        notebooks[page.stem] = for_jupyter(executed[page.stem], page, labels, bib, book_keys, first)
    return notebooks


def _shown(cells: list) -> list[str]:
    """The Markdown a notebook shows: its Markdown cells and its cells' Markdown outputs."""
    shown = [_text(c["source"]) for c in cells if c["cell_type"] == "markdown"]
    return shown + [
        _text(o["data"]["text/markdown"])
        for c in cells
        if c["cell_type"] == "code"
        for o in c.get("outputs", [])
        if "text/markdown" in o.get("data", {})
    ]


def cited_keys(citation: str, keys: set[str]) -> list[str]:
    """The keys of the works that one citation (``[@a; @b, p. 3]`` or ``@a``) cites."""
    return [k for k in re.findall(r"@([\w:.#$%&+?<>~/-]*\w)", citation) if k in keys]


def language_info() -> dict:
    """The ``language_info`` that ipykernel reports for this Python, as JupyterLab saves it."""
    return {
        "codemirror_mode": {"name": "ipython", "version": 3},
        "file_extension": ".py",
        "mimetype": "text/x-python",
        "name": "python",
        "nbconvert_exporter": "python",
        "pygments_lexer": "ipython3",
        "version": sys.version.split()[0],
    }


def for_jupyter(
    nb: dict,
    page: Page,
    labels: dict[str, str],
    bibliography: Bibliography | None = None,
    book_citations: list[str] | None = None,
    first_cell: str | None = None,
) -> nbformat.NotebookNode:
    """The student's notebook of one executed page (see the module's docstring); ``nb`` is left as it was.

    ``labels`` maps every label of the book to its text (:func:`rlbook.publish.nbrefs.book_labels`);
    ``book_citations`` are the keys the whole book cites, listed where the page has a ``::: {#refs}`` div.
    ``first_cell``, if given, is the source of a code cell put before the notebook's first code cell
    (the requirement check, :func:`rlbook.publish.wheel.requirement_cell`), unexecuted.
    A name defined both by an exercise's answer cell and by a later cell raises ValueError naming both.
    """
    cells = _Writer(page).run(copy.deepcopy(nb["cells"]))
    cells = _exercises(cells, page)
    _resolve(cells, labels, bibliography, book_citations or [])
    code = next((i for i, cell in enumerate(cells) if cell.cell_type == "code"), None)
    if first_cell is not None and code is not None:
        check = nbformat.v4.new_code_cell(first_cell)
        check.metadata["jupyter"] = {"source_hidden": True}
        cells.insert(code, check)
    _number_executions(cells)
    _name_cells(cells, page)
    out = nbformat.v4.new_notebook(cells=cells)
    out.metadata = {"kernelspec": dict(KERNELSPEC), "language_info": language_info()}
    return out


class _Writer:
    """Walks a page's cells once, keeping the open ``:::`` divs, and writes the student's cells."""

    def __init__(self, page: Page):
        self.page = page
        self.cells: list = []
        self.lines: list[str] = []  # the Markdown cell being written
        self.stack: list[dict] = []  # open divs: kind ("details", "quote", "refs", "div"), title, body
        self.counters = [0] * 7
        self.heading_numbers: dict[int, str] = {}

    def run(self, cells: list) -> list:
        if cells and cells[0]["cell_type"] == "raw" and _text(cells[0]["source"]).startswith("---"):
            cells = cells[1:]  # the front matter is for Quarto
        prose = [line for c in cells if c["cell_type"] == "markdown" for line in _text(c["source"]).split("\n")]
        numbers = {index: number for index, _, _, _, number in numbered_headings(self.page, prose)}
        line_no = 0
        for cell in cells:
            if cell["cell_type"] == "markdown":
                fence: str | None = None
                for line in _text(cell["source"]).split("\n"):
                    fence = self._line(line, fence, numbers.get(line_no))
                    line_no += 1
                self._flush()
            elif cell["cell_type"] == "code":
                self._code(cell)
        self._flush()
        return self.cells

    def _line(self, line: str, fence: str | None, number: str | None) -> str | None:
        opening = FENCE.match(line)
        if fence is not None:  # inside fenced code: as it is, or dropped for a raw ```{=html} block
            marks = fence.lstrip("=")
            closes = (
                opening
                and opening.group(2)[0] == marks[0]
                and len(opening.group(2)) >= len(marks)
                and not opening.group(3).strip()
            )
            if not fence.startswith("="):
                self._emit(line, verbatim=True)
            return None if closes else fence
        if opening:
            info = opening.group(3).strip()
            if info.startswith("{="):
                return "=" + opening.group(2)
            self._emit(line)
            return opening.group(2)
        callout = CALLOUT_OPEN.match(line)
        if callout:
            self._open(callout.group(2))
            return None
        if DIV_CLOSE.match(line) and self.stack:
            self._close()
            return None
        top = self.stack[-1] if self.stack else None
        if top is not None and top["title"] is None and top["kind"] in ("details", "quote"):
            if not line.strip():
                return None
            heading = HEADING.match(line)
            top["title"] = heading.group(2) if heading else top["default"]
            self._start_quote(top)
            if heading:
                return None
        heading = HEADING.match(line)
        if heading:
            marks, text = heading.group(1), heading.group(2)
            line = f"{marks} {number} {text}" if number else f"{marks} {text}"
        self._emit(line)
        return None

    def _open(self, attrs: str) -> None:
        kinds = re.findall(r"\.callout-(\w+)", attrs)
        ident = re.search(r"#([\w-]+)", attrs)
        if ident and ident.group(1) == "refs":
            self.stack.append({"kind": "refs", "title": ""})
            return
        if not kinds or kinds[0] not in CALLOUT_TITLES:
            self.stack.append({"kind": "div", "title": ""})
            return
        collapsed = re.search(r'collapse\s*=\s*"?true"?', attrs) is not None
        title = re.search(r'title\s*=\s*"([^"]*)"', attrs)
        entry: dict = {
            "kind": "details" if collapsed else "quote",
            "title": title.group(1) if title else None,
            "default": CALLOUT_TITLES[kinds[0]],
            "body": [],
        }
        self.stack.append(entry)
        if entry["title"] is not None:
            self._start_quote(entry)

    def _start_quote(self, entry: dict) -> None:
        if entry["kind"] == "quote":
            self._emit(f"**{entry['title']}**")
            self._emit("")

    def _close(self) -> None:
        entry = self.stack.pop()
        if entry["kind"] == "details":
            body = "\n".join(entry["body"]).strip("\n")
            title = html.escape(entry["title"] or entry["default"])
            block = [f"<details><summary><strong>{title}</strong></summary>", "", body, "", "</details>", ""]
            for line in block:
                self._emit(line)
        elif entry["kind"] == "quote":
            if not self._in_details():
                self.lines.append("")  # ends the quote
        elif entry["kind"] == "refs":
            self._emit(REFS_MARK)

    def _in_details(self) -> bool:
        return any(e["kind"] == "details" for e in self.stack)

    def _emit(self, line: str, verbatim: bool = False) -> None:
        """Add a line to the innermost open details block, else to the cell (quoted inside a callout).

        Outside fenced code (``verbatim``), a blank line after a blank line is dropped.
        """
        target = next((e["body"] for e in reversed(self.stack) if e["kind"] == "details"), self.lines)
        depth = 0 if target is not self.lines else sum(e["kind"] == "quote" for e in self.stack)
        if not verbatim and not line.strip() and (not target or not target[-1].strip("> ")):
            return
        target.append(("> " * depth + line).rstrip() if depth else line)

    def _flush(self) -> None:
        text = "\n".join(self.lines).strip("\n")
        self.lines = []
        if text.strip():
            self.cells.append(nbformat.v4.new_markdown_cell(text))

    def _code(self, cell: dict) -> None:
        options, code = cell_options(_text(cell["source"]))
        if self._in_details():  # a solution's code: to read and copy, never run by "Run All"
            shown = _shown_source(cell) if options.get("echo") is False else None
            self._emit("")
            for line in (shown or f"```python\n{code.strip()}\n```").split("\n"):
                self._emit(line)
            self._emit("")
            return
        self._flush()
        label = str(options.get("label") or "")
        if label.startswith("tbl-") and options.get("tbl-cap"):
            self.cells.append(nbformat.v4.new_markdown_cell(f"**@{label}:** {options['tbl-cap']}"))
        new = nbformat.v4.new_code_cell(
            code.strip("\n"), execution_count=cell.get("execution_count"), outputs=cell.get("outputs", [])
        )
        if options:
            new.metadata["quarto"] = options
        hidden = {}
        if options.get("include") is False or options.get("echo") is False:
            hidden["source_hidden"] = True
        if options.get("output") is False:  # a hidden check's error stays in sight
            hidden["outputs_hidden"] = True
        if hidden:
            new.metadata["jupyter"] = hidden
        self.cells.append(new)
        if label.startswith("fig-") and options.get("fig-cap"):
            self.cells.append(nbformat.v4.new_markdown_cell(f"**@{label}:** {options['fig-cap']}"))


def _shown_source(cell: dict) -> str | None:
    """What a solution cell that hides its own code shows: the reference's source it displayed, as Markdown."""
    shown = [
        _text(o["data"]["text/markdown"])
        for o in cell.get("outputs", [])
        if o.get("output_type") in ("display_data", "execute_result") and "text/markdown" in o.get("data", {})
    ]
    return "\n\n".join(s.strip() for s in shown) or None


def _text(source) -> str:
    return "".join(source) if isinstance(source, list) else source


def _is_check(statement: ast.stmt) -> bool:
    value = statement.value if isinstance(statement, ast.Expr) else None
    func = value.func if isinstance(value, ast.Call) else None
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name.startswith("check_")


def _defined(source: str) -> set[str]:
    """The names a cell's top-level statements bind."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    names: set[str] = set()
    for statement in tree.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(statement.name)
        elif isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For, ast.With)):
            targets = (
                statement.targets
                if isinstance(statement, ast.Assign)
                else [getattr(statement, "target", None)] + [i.optional_vars for i in getattr(statement, "items", [])]
            )
            for target in filter(None, targets):
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return names


def _split_check(cell: nbformat.NotebookNode) -> list:
    """An answer cell that also runs its check, as two cells: the answer (no output), then the check."""
    try:
        body = ast.parse(cell.source).body
    except SyntaxError:
        return [cell]
    first = next((s for s in body if _is_check(s)), None)
    if first is None or first is body[0]:
        return [cell]
    lines = cell.source.split("\n")
    answer = "\n".join(lines[: first.lineno - 1]).rstrip()
    answer_cell = nbformat.v4.new_code_cell(answer, execution_count=cell.execution_count)
    answer_cell.metadata.update(copy.deepcopy(cell.metadata))
    check = nbformat.v4.new_code_cell(
        "\n".join(lines[first.lineno - 1 :]).strip("\n"), execution_count=cell.execution_count, outputs=cell.outputs
    )
    return [answer_cell, check]


def _exercises(cells: list, page: Page) -> list:
    """Each exercise's code cells split into answer and check; a later cell that redefines an answer's name raises."""
    result: list = []
    answers: list[tuple[str, set[str]]] = []  # (exercise, names its answer cells define)
    exercise, level = None, 7
    for cell in cells:
        if cell.cell_type == "markdown":
            for line in cell.source.split("\n"):
                start = EXERCISE.match(line)
                heading = HEADING.match(line)
                if start:
                    exercise, level = line.strip("#* "), len(start.group(1) or "#######")
                elif heading and len(heading.group(1)) <= level:
                    exercise, level = None, 7
            result.append(cell)
            continue
        executed = (cell.metadata.get("quarto") or {}).get("eval", True) is not False
        for exercise_name, names in answers:
            clash = names & _defined(cell.source) if executed else set()
            if clash:
                raise ValueError(
                    f"{page.source}: a cell after {exercise_name!r} defines {', '.join(sorted(clash))}, "
                    f'which the exercise asks the student to write; "Run All" would overwrite the '
                    f"student's answer:\n{cell.source[:200]}"
                )
        if exercise is None:
            result.append(cell)
            continue
        parts = _split_check(cell)
        for part in parts:
            if not any(_is_check(s) for s in _body(part.source)):
                answers.append((exercise, _defined(part.source)))
        result += parts
    return result


def _body(source: str) -> list:
    try:
        return ast.parse(source).body
    except SyntaxError:
        return []


def _resolve(cells: list, labels: dict[str, str], bibliography: Bibliography | None, book_keys: list[str]) -> None:
    """Cross-references and citations of every Markdown cell as text; the references at the end or at the mark."""
    markdown = [c for c in cells if c.cell_type == "markdown"]
    outputs = [o for c in cells if c.cell_type == "code" for o in c.outputs if "text/markdown" in o.get("data", {})]
    for cell in markdown:
        cell.source = notebook_links(resolve_crossrefs(cell.source, labels))
    for output in outputs:
        output["data"]["text/markdown"] = notebook_links(
            resolve_crossrefs(_text(output["data"]["text/markdown"]), labels)
        )
    if bibliography is None:
        for cell in markdown:
            cell.source = cell.source.replace(REFS_MARK, "")
        return
    cited = [c for text in _shown(cells) for c in citations(text, bibliography.keys)]
    keys = list(dict.fromkeys(k for c in cited for k in cited_keys(c, bibliography.keys)))
    has_mark = any(REFS_MARK in cell.source for cell in markdown)
    listed = book_keys if has_mark else keys
    texts, entries = bibliography.render(cited, listed) if cited or listed else ({}, [])
    for cell in markdown:
        cell.source = resolve_citations(cell.source, texts)
        cell.source = cell.source.replace(REFS_MARK, "\n\n".join(entries))
    for output in outputs:
        output["data"]["text/markdown"] = resolve_citations(_text(output["data"]["text/markdown"]), texts)
    if not has_mark and entries:
        cells.append(nbformat.v4.new_markdown_cell("## References\n\n" + "\n\n".join(entries)))


LINK_ID = re.compile(r"\)\{#[\w-]+\}")
"""The ``{#id}`` that follows a link's target in pandoc markdown (``[text](url){#id}``)."""


def notebook_links(markdown: str) -> str:
    """Links to a page's ``.qmd`` as links to its notebook, which sits beside this one (``../a/01-x.qmd#s``:
    ``01-x.ipynb#s``); a link's ``{#id}`` (a glossary definition's anchor, which Jupyter would show raw) is dropped."""
    markdown = LINK_ID.sub(")", markdown)
    return QMD_LINK.sub(lambda m: f"]({m.group(1)}.ipynb{m.group(2) or ''})", markdown)


def _name_cells(cells: list, page: Page) -> None:
    """Cell ids from the page's name and the cell's place (``01-rl-loop-7``), not drawn at random, so that two
    builds from the same inputs write the same notebook, byte for byte (nbformat's ids are 1 to 64 letters,
    digits, ``-`` and ``_``)."""
    stem = re.sub(r"[^A-Za-z0-9_-]", "-", page.stem)[:56]
    for index, cell in enumerate(cells):
        cell["id"] = f"{stem}-{index}"


def _number_executions(cells: list) -> None:
    """Execution counts 1, 2, 3, ... over the cells that ran at build time, in order (also in their results)."""
    count = 0
    for cell in cells:
        if cell.cell_type != "code":
            continue
        if cell.get("execution_count") is None:
            continue
        count += 1
        cell.execution_count = count
        for output in cell.outputs:
            if "execution_count" in output:
                output["execution_count"] = count
