"""Executing one page: a ``.qmd`` read as a notebook and run cell by cell in a fresh kernel.

Used by :mod:`rlbook.publish.build` for every page of the book. Each code
cell runs in order (``#| eval: false`` cells do not); each inline expression
(```` `{python} expr` ````) of the prose is evaluated in the same kernel at
the point where it appears and replaced by ``str(value)``. A failing cell
raises :class:`CellFailure`, which names the page, the cell and its line.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import threading
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

import jupytext
import nbformat
import zmq
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

from rlbook.publish.markdown import ANSI
from rlbook.publish.qmd import FENCE, INLINE_PYTHON, cell_options, line_of

CELL_TIMEOUT_S = 1800
"""How long one cell may run: generous, because a cold run cache trains the book's runs inside a cell."""


def qmd_to_notebook(text: str) -> nbformat.NotebookNode:
    """A ``.qmd`` page as a notebook: front matter as a raw cell, prose as markdown cells and
    ```` ```{python} ```` cells as code cells whose ``#|`` option lines are kept."""
    nb = jupytext.reads(text, fmt="Rmd")
    nb.metadata.pop("jupytext", None)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python", "version": sys.version.split()[0]}
    return nb


def python_kernel_manager() -> AsyncKernelManager:
    """A kernel manager whose ``python3`` kernel is ipykernel run by this very interpreter (``sys.executable``).

    No kernelspec directory is consulted, so a ``python3`` kernelspec of some
    other Python on the machine can never be picked up instead of the one
    that has ``rlbook`` installed. Where jupyter_client can, it gives the
    kernel CurveZMQ keys, so that the kernel does not talk to the build in
    plain text over TCP (nor log a warning that it does, once per page).
    """
    manager = AsyncKernelManager(kernel_name="python3", kernel_spec_manager=KernelSpecManager(kernel_dirs=[]))
    if manager.has_trait("transport_encryption") and zmq.has("curve"):
        manager.transport_encryption = "auto"
    return manager


class CellFailure(Exception):
    """A cell (or an inline expression) of a page raised, timed out or killed its kernel."""

    def __init__(self, page: str, cell_index: int, line: int, source: str, detail: str):
        super().__init__(f"{page}: cell {cell_index} failed")
        self.page, self.cell_index, self.line, self.source, self.detail = page, cell_index, line, source, detail

    def report(self) -> str:
        """What the build prints: page, cell index and line, the cell's first lines, then the traceback."""
        first = "\n".join(f"    | {line}" for line in self.source.strip("\n").split("\n")[:4])
        where = f"line {self.line}" if self.line else "line unknown"
        return (
            f"FAILED {self.page}: cell {self.cell_index} ({where} of the page) raised an error.\n"
            f"{first}\n\n{ANSI.sub('', self.detail).strip()}"
        )


class Stopped(Exception):
    """A page's execution was stopped between cells because another page failed."""


def inline_expressions(markdown: str) -> list[re.Match]:
    """The ```` `{python} expr` ```` spans of a markdown cell, skipping fenced code blocks."""
    fenced = []
    fence_start = None
    offset = 0
    for line in markdown.split("\n"):
        if FENCE.match(line):
            if fence_start is None:
                fence_start = offset
            else:
                fenced.append((fence_start, offset + len(line)))
                fence_start = None
        offset += len(line) + 1
    return [m for m in INLINE_PYTHON.finditer(markdown) if not any(a <= m.start() <= b for a, b in fenced)]


def _probe_source(expressions: list[str]) -> str:
    """A cell that prints the str() of each inline expression as one JSON list."""
    values = ", ".join(f"str(({expr}))" for expr in expressions)
    return f'print(__import__("json").dumps([{values}]))'


@dataclass
class _Step:
    """One cell to run: an original code cell, or the probe of a markdown cell's inline expressions."""

    index: int  # index of the original cell in the page's notebook
    cell: nbformat.NotebookNode
    matches: list[re.Match] | None = None  # set for probes


def execute_notebook(
    nb: nbformat.NotebookNode,
    cwd: Path,
    page: str,
    text: str,
    timeout: int = CELL_TIMEOUT_S,
    log: Path | None = None,
    stop: threading.Event | None = None,
    figures: str | None = None,
) -> nbformat.NotebookNode:
    """Execute a page's notebook in a fresh kernel started in ``cwd``; return it with outputs and inline values.

    Cells with ``#| eval: false`` are not run. A failing cell raises
    :class:`CellFailure` naming the page (``page``), the cell and its line in
    the page's ``text``. A page with no code and no inline expression starts
    no kernel. Once ``stop`` is set, the next cell raises :class:`Stopped` instead of running.
    ``figures`` is the format of matplotlib's figures (``svg``, ``retina``, ``png``), as
    Quarto's ``fig-format`` sets it; None keeps the kernel's default.
    """
    steps = _plan(nb, page, text)
    if steps:
        run = nbformat.v4.new_notebook(cells=[step.cell for step in steps], metadata=dict(nb.metadata))
        # The client does not own a kernel manager it is handed, so it must be told to stop the
        # kernel and close its sockets at the end (cleanup_kc): left to itself it would leave
        # every page's kernel running until the build exits. The page is done by then, so the
        # kernel is stopped at once rather than asked to shut down (a graceful stop costs 0.6 s).
        client = NotebookClient(
            run,
            km=python_kernel_manager(),
            timeout=timeout,
            allow_errors=False,
            record_timing=False,
            shutdown_kernel="immediate",
            resources={"metadata": {"path": str(cwd)}},
            extra_arguments=kernel_arguments(figures),
        )
        try:
            with (
                open(log, "w", encoding="utf-8") if log else nullcontext(subprocess.DEVNULL) as log_file,
                client.setup_kernel(stderr=log_file, cleanup_kc=True),
            ):
                for position, step in enumerate(steps):
                    if stop is not None and stop.is_set():
                        raise Stopped(page)
                    _run_step(client, position, step, nb, page, text, log)
        finally:
            _close_event_loop()
    return nb


def kernel_arguments(figures: str | None) -> list[str]:
    """The page kernel's options: matplotlib's figure format (``figures``), and for SVG no creation date in
    the figure, so that two builds from the same inputs draw the same file."""
    if not figures:
        return []
    arguments = [f"--InlineBackend.figure_formats={figures}"]
    if figures == "svg":
        arguments.append('--InlineBackend.print_figure_kwargs={"bbox_inches": "tight", "metadata": {"Date": None}}')
    return arguments


def merged_streams(outputs: list) -> list:
    """``outputs`` with each run of consecutive outputs to one stream (stdout or stderr) joined into one.

    How a kernel splits a cell's printing into messages depends on timing; the page, and a later build's
    page, show it as one block.
    """
    merged: list = []
    for output in outputs:
        last = merged[-1] if merged else None
        if (
            last is not None
            and output.get("output_type") == last.get("output_type") == "stream"
            and output.get("name") == last.get("name")
        ):
            merged[-1] = nbformat.from_dict({**last, "text": last["text"] + output["text"]})
        else:
            merged.append(output)
    return merged


def _close_event_loop() -> None:
    """Close the event loop that the client's blocking calls ran on in this thread, unless it is running.

    nbclient's blocking methods open an event loop for each thread they are
    called on and leave it open; the build's page threads would leave theirs
    to the garbage collector (a ResourceWarning each). The next page on the
    same thread gets a new loop.
    """
    try:
        loop = asyncio.get_event_loop()
    except RuntimeError:  # this thread never had one
        return
    if not loop.is_running():
        loop.close()


def _plan(nb: nbformat.NotebookNode, page: str, text: str) -> list[_Step]:
    steps = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            try:
                options, _ = cell_options(cell.source)
            except ValueError as err:
                raise CellFailure(page, index, _line(text, cell.source), cell.source, str(err)) from None
            cell.outputs, cell.execution_count = [], None
            if options.get("eval", True) is not False:
                steps.append(_Step(index, cell))
        elif cell.cell_type == "markdown":
            matches = inline_expressions(cell.source)
            if matches:
                probe = nbformat.v4.new_code_cell(_probe_source([m.group(1) for m in matches]))
                steps.append(_Step(index, probe, matches))
    return steps


def _run_step(
    client: NotebookClient,
    position: int,
    step: _Step,
    nb: nbformat.NotebookNode,
    page: str,
    text: str,
    log: Path | None,
) -> None:
    original = nb.cells[step.index]
    try:
        executed = client.execute_cell(step.cell, position)
    except (CellExecutionError, CellTimeoutError, DeadKernelError) as err:
        detail = str(err)
        if isinstance(err, DeadKernelError) and log and log.is_file():
            detail += "\nkernel log:\n" + "\n".join(log.read_text(encoding="utf-8").splitlines()[-20:])
        source = step.cell.source if step.matches is None else original.source
        raise CellFailure(page, step.index, _line(text, original.source), source, detail) from None
    if step.matches is None:
        original.outputs, original.execution_count = merged_streams(executed.outputs), executed.execution_count
        return
    printed = "".join(o.get("text", "") for o in executed.outputs if o.get("name") == "stdout")
    values = json.loads(printed.strip().splitlines()[-1])
    source = original.source
    for match, value in sorted(zip(step.matches, values, strict=True), key=lambda pair: -pair[0].start()):
        source = source[: match.start()] + value + source[match.end() :]
    original.source = source


def _line(text: str, source: str) -> int:
    at = text.find(source.strip("\n")) if source.strip() else -1
    return line_of(text, at) if at >= 0 else 0
