"""An executed notebook as pandoc markdown: prose as it is, code in foldable blocks, outputs, figures and tables.

The first step of the pandoc backend of ``rlbook build`` (the book without
Quarto): each page's executed notebook is written out as markdown that
pandoc parses, honouring Quarto's cell options (``echo``, ``output``,
``include``, ``warning``, ``code-fold``, ``code-summary``, ``label``,
``fig-cap``, ``fig-alt``, ``tbl-cap``) as Quarto does. Image outputs are
written as files beside the site's pages; an SVG is written with a dark
variant (:func:`rlbook.figures.style.themed_svg`) and tagged with the size it
was drawn at, so that the page lays a figure's panels out side by side or
stacked without ever shrinking one below that size on a wide screen. A cell
that checks the reader's answer to an exercise or a "Try it"
(:func:`rlbook.publish.reader.answer_checks`) is shown without its output,
which in the build only says that no answer was given yet.
:mod:`rlbook.publish.page` then rewrites the parsed tree.
"""

from __future__ import annotations

import base64
import html
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from rlbook.figures.style import PX_PER_PT, themed_svg
from rlbook.publish.config import Page
from rlbook.publish.qmd import cell_options
from rlbook.publish.reader import answer_checks

IMAGE_TYPES = {"image/png": "png", "image/svg+xml": "svg", "image/jpeg": "jpg"}
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
CELL_DEFAULTS = {"echo": True, "output": True, "include": True, "warning": True, "code-fold": False}
SVG_SIZE = re.compile(r"<svg\b[^>]*?\bwidth=\"([\d.]+)(pt|px)?\"[^>]*?\bheight=\"([\d.]+)(pt|px)?\"")


@dataclass
class PageSource:
    """A page ready to be parsed: its markdown and the figure alt texts that stay out of it."""

    markdown: str
    alt_text: dict[str, str] = field(default_factory=dict)
    has_code: bool = False


def notebook_markdown(nb: dict, page: Page, media_dir: Path, media_href: str, defaults: dict) -> PageSource:
    """Pandoc markdown for one executed notebook; image outputs are written into ``media_dir``.

    ``defaults`` are the book's and the page's execute options (echo, output,
    include, warning, code-fold); each cell's ``#|`` options override them.
    """
    source = PageSource("")
    parts = []
    cells = nb["cells"]
    if cells and cells[0]["cell_type"] == "raw" and text(cells[0]["source"]).startswith("---"):
        cells = cells[1:]
    if page.title and not _has_level_one_heading(cells):
        parts.append(f"# {page.title}" + (" {.unnumbered}" if page.number is None else ""))
    checks = answer_checks([(cell["cell_type"], text(cell["source"])) for cell in cells])
    for index, cell in enumerate(cells):
        if cell["cell_type"] == "markdown":
            parts.append(text(cell["source"]))
        elif cell["cell_type"] == "code":
            source.has_code = True
            options, code = cell_options(text(cell["source"]))
            if index in checks:
                options = {"output": False, **options}
            media = _Media(media_dir, media_href, f"{page.stem}-{index}")
            parts.append(_code_cell(code, cell.get("outputs", []), {**defaults, **options}, media, source))
    source.markdown = "\n\n".join(part for part in parts if part) + "\n"
    return source


def text(source) -> str:
    """A notebook field that may be a string or a list of lines, as one string."""
    return "".join(source) if isinstance(source, list) else source


def _has_level_one_heading(cells: list) -> bool:
    return any(re.search(r"^# ", text(c["source"]), re.MULTILINE) for c in cells if c["cell_type"] == "markdown")


@dataclass
class _Media:
    directory: Path
    href: str
    prefix: str
    count: int = 0

    def save(self, mime: str, data) -> str:
        """Write one image output and return its markdown: an SVG themed and tagged with the size it was drawn at."""
        self.count += 1
        name = f"{self.prefix}-{self.count}.{IMAGE_TYPES[mime]}"
        self.directory.mkdir(parents=True, exist_ok=True)
        if mime != "image/svg+xml":
            (self.directory / name).write_bytes(base64.b64decode(text(data)))
            return f"![]({self.href}/{name})"
        svg = text(data)
        (self.directory / name).write_text(themed_svg(svg), encoding="utf-8")
        return f"![]({self.href}/{name}){{{svg_attributes(svg)}}}"


def svg_attributes(svg: str) -> str:
    """The pandoc attributes of a published SVG: ``.themed`` (it follows dark mode) and the CSS pixel size it was
    drawn at (matplotlib gives points), which the page never exceeds."""
    size = SVG_SIZE.search(svg)
    if size is None:
        return ".themed"
    width, width_unit, height, height_unit = size.groups()
    scale = {"pt": PX_PER_PT, None: 1, "px": 1}
    return (
        f'.themed width="{round(float(width) * scale[width_unit])}" '
        f'height="{round(float(height) * scale[height_unit])}"'
    )


def _code_cell(code: str, outputs: list, options: dict, media: _Media, source: PageSource) -> str:
    if options["include"] is False:
        return ""
    label = str(options.get("label") or "")
    parts = []
    if options["echo"] is not False and code.strip():
        block = _fenced(code.strip("\n"), "python")
        parts.append(_fold(block, options["code-fold"], options.get("code-summary", "Code")))
    images: list[str] = []
    shown = []
    if options["output"] is not False:
        for output in outputs:
            shown.append(_output(output, options, media, images if label.startswith("fig-") else None))
    if label.startswith("fig-"):
        source.alt_text[label] = str(options.get("fig-alt") or "")
        body = "\n\n".join(images)
        parts += [
            *shown,
            f"::: {{#{label} .rlbook-figure}}\n{body}\n\n::: {{.rlbook-caption}}\n"
            + f"{options.get('fig-cap') or ''}\n:::\n:::",
        ]
    elif label.startswith("tbl-"):
        body = "\n\n".join(shown)
        parts.append(
            f"::: {{#{label} .rlbook-table}}\n::: {{.rlbook-caption}}\n{options.get('tbl-cap') or ''}\n:::\n\n"
            f"{body}\n:::"
        )
    else:
        parts += shown
    content = "\n\n".join(part for part in parts if part)
    ident = f"#{label} " if label and not label.startswith(("fig-", "tbl-")) else ""
    return f":::: {{{ident}.cell}}\n{content}\n::::" if content else ""


def _fold(block: str, fold, summary: str) -> str:
    """Quarto's code-fold: false shows the code, "show" folds it open, true folds it closed."""
    if fold is False or fold is None:
        return block
    state = " open" if fold == "show" else ""
    summary_html = f"<summary>{html.escape(str(summary))}</summary>"
    return f'<details class="code-fold"{state}>\n{summary_html}\n\n{block}\n\n</details>'


def _fenced(text: str, classes: str) -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    info = classes if " " not in classes and not classes.startswith(".") else "{" + classes + "}"
    return f"{fence}{info}\n{text}\n{fence}"


def _output(output: dict, options: dict, media: _Media, images: list[str] | None) -> str:
    kind = output["output_type"]
    if kind == "stream":
        if output["name"] == "stderr" and options["warning"] is False:
            return ""
        printed = ANSI.sub("", text(output["text"])).rstrip("\n")
        if options["output"] == "asis":
            return printed
        return _fenced(printed, f".cell-output .cell-output-{output['name']}") if printed else ""
    if kind == "error":
        return _fenced(ANSI.sub("", "\n".join(output.get("traceback", []))), ".cell-output .cell-output-error")
    data = output.get("data", {})
    for mime in IMAGE_TYPES:
        if mime in data:
            image = media.save(mime, data[mime])
            if images is not None:
                images.append(image)
                return ""
            return image
    if "text/markdown" in data:
        return text(data["text/markdown"])
    if "text/html" in data:
        return _fenced(text(data["text/html"]), "{=html}")
    if "text/plain" in data:
        plain = text(data["text/plain"])
        return plain if options["output"] == "asis" else _fenced(plain, ".cell-output .cell-output-display")
    return ""


def front_matter(nb: dict) -> dict:
    """The YAML front matter of a page's notebook (its first cell, when that is a raw ``---`` cell)."""
    cells = nb["cells"]
    if cells and cells[0]["cell_type"] == "raw" and text(cells[0]["source"]).startswith("---"):
        data = yaml.safe_load(text(cells[0]["source"]).strip().strip("-"))
        return data if isinstance(data, dict) else {}
    return {}
