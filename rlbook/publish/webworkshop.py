"""The web workshop's site files: its ES modules joined into one classic script, its data and its style.

Some pages carry live panels that run the book's policy in the reader's
browser (``rlbook/publish/assets/workshop/``, one idea per ES module; Node's
tests import the modules as they are): chapter 1's sample panel and lab, the
advantages "try it" of the chapter on rewards and gradients, and the reward
hack of the chapter on reward limits. A page opened from ``file://`` cannot
load ES modules or a worker script in Chromium (both count as cross-origin
requests from an opaque origin), so the site gets one classic script
instead: each module, its comments and indentation dropped
(:func:`compact`), becomes a function that returns its exports, in the order
their imports need. The page then starts its Web Worker from a Blob of the
same script's own source, and the checkpoints come as classic scripts of
their own (:mod:`rlbook.publish.checkpoints`): the shared data with
``base``, and ``main``'s checkpoint apart, for the one page that samples it.
Each panel's raw HTML block names the files it needs, so a page loads only
those. Both backends' builds copy these files into the site's ``workshop/``
folder.

The modules use no library. Measured when the choice was made (issue 33):
TensorFlow.js 4.22's core and CPU backend alone are 426 KB minified, more
than the workshop's whole budget of 300 KB, and its CPU matrix product for
one layer of an RL step was about three times slower than forward.js's
loops; its WebAssembly backend matched them but adds 870 KB and fetches its
``.wasm`` file, which Chromium refuses from ``file://``.
"""

from __future__ import annotations

import base64
import os
import re
import zlib
from pathlib import Path

from rlbook.publish import checkpoints
from rlbook.publish.config import book_pages
from rlbook.publish.qmd import HEADING

SOURCE = Path(__file__).resolve().parent / "assets" / "workshop"
REPO = Path(__file__).resolve().parents[2]
SITE_FOLDER = "workshop"
"""The site's folder for the workshop's files, beside the chapters' folder."""

SCRIPT, DATA, MAIN, STYLE = "workshop.js", "workshop-data.js", "workshop-main.js", "workshop.css"
ENTRIES = ("page.js", "worker.js")
"""The modules whose ``main`` starts the workshop: in the page, and in its worker."""

RAW_HTML = re.compile(r"^```\{=html\}\n(.*?)^```", re.MULTILINE | re.DOTALL)
MARKER = 'class="rlbook-workshop"'
"""What marks a workshop panel in a page's raw HTML (its ``data-panel`` says which panel)."""

SECTIONS = (
    "sec-learning-loop",
    "sec-reward-interface",
    "sec-policy-gradient",
    "sec-advantages",
    "sec-exploration",
    "sec-reward-hack",
)
"""The book's sections that the panels point a reader to (by their ids, which move with the sections)."""

IMPORT = re.compile(r'^import \{([^}]*)\} from "\./([\w-]+\.js)";\n', re.MULTILINE)
EXPORT = re.compile(r"^export (?=(?:async )?(?:function|class|const|let) )", re.MULTILINE)
EXPORTED = re.compile(r"^export (?:async )?(?:function\*?|class|const|let) ([A-Za-z_$][\w$]*)", re.MULTILINE)


def module_order(sources: dict[str, str]) -> list[str]:
    """The modules in an order where each comes after every module it imports; ValueError on a cycle."""
    order: list[str] = []
    visiting: set[str] = set()

    def visit(name: str) -> None:
        if name in order:
            return
        if name in visiting:
            raise ValueError(f"the workshop's modules import each other in a circle through {name}")
        if name not in sources:
            raise ValueError(f"a workshop module imports {name}, which does not exist")
        visiting.add(name)
        for _, dependency in IMPORT.findall(sources[name]):
            visit(dependency)
        visiting.discard(name)
        order.append(name)

    for name in sorted(sources):
        visit(name)
    return order


REGEX_AFTER = set("(,=:[!&|?{};+-*%<>~^")
REGEX_KEYWORDS = {
    "return",
    "typeof",
    "case",
    "do",
    "else",
    "in",
    "of",
    "new",
    "delete",
    "void",
    "throw",
    "yield",
    "await",
    "instanceof",
}
"""A ``/`` after one of these characters or words starts a regular expression; after anything else it divides."""


def _skip_quoted(source: str, i: int, name: str) -> int:
    """The index after the string literal that starts at ``source[i]``; a string may not span lines."""
    quote, j = source[i], i + 1
    while source[j] != quote:
        if source[j] == "\\":
            j += 1
        elif source[j] == "\n":
            raise ValueError(f"{name}: a string runs past the end of its line")
        j += 1
    return j + 1


def _skip_template(source: str, i: int, name: str) -> tuple[int, bool]:
    """From a template literal's opening backtick or a substitution's closing brace at ``source[i]``: the index
    after its next piece of text, and whether a substitution ``${`` opens there (else the literal has ended)."""
    j = i + 1
    while True:
        if source[j] == "\\":
            j += 2
        elif source[j] == "`":
            return j + 1, False
        elif source.startswith("${", j):
            return j + 2, True
        elif source[j] == "\n":
            raise ValueError(f"{name}: a template literal's text runs past the end of its line")
        else:
            j += 1


def _skip_regex(source: str, i: int, name: str) -> int:
    """The index after the regular expression literal (with its flags) that starts at ``source[i]``."""
    j, in_class = i + 1, False
    while in_class or source[j] != "/":
        if source[j] == "\\":
            j += 1
        elif source[j] == "\n":
            raise ValueError(f"{name}: a regular expression runs past the end of its line")
        else:
            in_class = (in_class or source[j] == "[") and source[j] != "]"
        j += 1
    j += 1
    while j < len(source) and source[j].isalpha():
        j += 1
    return j


def _word(ch: str) -> bool:
    return ch.isalnum() or ch in "_$"


def _needs_space(before: str, after: str) -> bool:
    """Whether two tokens that a space separated would read differently joined (``a b``, ``a - -b``)."""
    return (_word(before) and _word(after)) or (before == after and before in "+-") or (before == "/" and after in "/*")


def compact(source: str, name: str = "module") -> str:
    """``source`` without its comments, indentation, blank lines and needless spaces: the same program, smaller.

    A small reader of JavaScript's tokens, enough for the workshop's modules:
    it keeps string, template and regular-expression literals whole (a ``/``
    starts a regular expression after an operator or a keyword such as
    ``return``, else it divides), keeps a space only where two tokens would
    otherwise run together, and keeps every line break between tokens, so that
    semicolon insertion reads the program as before. Literal text may not span
    lines (ValueError names the module).
    """
    out: list[str] = []
    closes: list[int]
    i, n, depth, closes, last, space = 0, len(source), 0, [], "", False

    def emit(text: str) -> None:
        nonlocal space
        if space and out and out[-1] != "\n" and _needs_space(out[-1][-1], text[0]):
            out.append(" ")
        space = False
        out.append(text)

    while i < n:
        c = source[i]
        if source.startswith("//", i):
            i = source.find("\n", i) if "\n" in source[i:] else n
        elif source.startswith("/*", i):
            end = source.find("*/", i + 2)
            if end < 0:
                raise ValueError(f"{name}: a comment is not closed")
            if "\n" in source[i:end]:
                out.append("\n")
            space, i = "\n" not in source[i:end], end + 2
        elif c in " \t\r\n":
            if c == "\n":
                out.append("\n")
            space, i = c != "\n", i + 1
        elif c in "'\"" or (c == "/" and (last in REGEX_AFTER or last in REGEX_KEYWORDS or not last)):
            j = _skip_quoted(source, i, name) if c != "/" else _skip_regex(source, i, name)
            emit(source[i:j])
            i, last = j, c
        elif c == "`" or (c == "}" and closes and closes[-1] == depth):
            if c == "}":
                closes.pop()
            j, opens = _skip_template(source, i, name)
            if opens:
                closes.append(depth)
            emit(source[i:j])
            i, last = j, "{" if opens else "`"
        else:
            depth += {"{": 1, "}": -1}.get(c, 0)
            joined = not space and _word(c) and _word(last[-1:])
            emit(c)
            last, i = (last + c if joined else c), i + 1
    lines = "".join(out).split("\n")
    return "\n".join(line for line in lines if line) + "\n"


def wrap_module(name: str, source: str) -> str:
    """One module as an entry of ``modules``: its imports read from the modules before it, its exports returned."""
    names = EXPORTED.findall(source)
    leftover = [
        line
        for line in source.splitlines()
        if line.startswith(("import ", "export ")) and not IMPORT.match(line + "\n") and not EXPORT.match(line)
    ]
    if leftover:
        raise ValueError(
            f'{name}: only `import {{ a, b }} from "./m.js";` and `export` declarations are '
            f"supported, not {leftover[0]!r}"
        )
    body = IMPORT.sub(lambda m: f'const {{{m.group(1)}}} = modules["{m.group(2)}"];\n', source)
    body = EXPORT.sub("", body)
    return f'modules["{name}"] = (() => {{\n{body}\nreturn {{ {", ".join(names)} }};\n}})();\n'


def bundle(folder: Path = SOURCE) -> str:
    """The classic script of the workshop: ``rlbookWorkshop(entry)`` holding every module, called for the page."""
    sources = {p.name: p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.js"))}
    missing = [e for e in ENTRIES if e not in sources]
    if missing:
        raise ValueError(f"the workshop has no entry module {missing[0]}")
    wrapped = "".join(compact(wrap_module(name, sources[name]), name) for name in module_order(sources))
    return (
        "// The book's live panels: the ES modules of rlbook/publish/assets/workshop/ joined into one\n"
        "// classic script by rlbook.publish.webworkshop, so that it runs from file:// too.\n"
        '"use strict";\n'
        "function rlbookWorkshop(entry) {\n"
        "const modules = {};\n"
        f"{wrapped}"
        'return modules[entry + ".js"].main(rlbookWorkshop);\n'
        "}\n"
        'if (typeof document !== "undefined") rlbookWorkshop("page");\n'
    )


def packed(script: str) -> str:
    """``script`` as the site ships it: deflated, in base 64, in a classic script that unpacks and runs it.

    The script is most of what a page with a panel loads besides the checkpoints, and deflate shrinks it
    about fourfold; the browser inflates it with its own ``DecompressionStream`` and runs it with an indirect
    ``eval`` (global scope; its "use strict" keeps its names to itself). A page that loads it twice runs it once.
    """
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)  # raw deflate, as DecompressionStream("deflate-raw") reads it
    text = base64.b64encode(packer.compress(script.encode("utf-8")) + packer.flush()).decode("ascii")
    return (
        "// The book's live panels: the ES modules of rlbook/publish/assets/workshop/, joined into one classic\n"
        "// script by rlbook.publish.webworkshop and deflated; this loader unpacks and runs them.\n"
        '"use strict";\n'
        "if (!globalThis.rlbookWorkshopLoaded) {\n"
        "  globalThis.rlbookWorkshopLoaded = true;\n"
        f'  const bytes = Uint8Array.from(atob("{text}"), (c) => c.charCodeAt(0));\n'
        '  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate-raw"));\n'
        "  new Response(stream).text().then((code) => (0, eval)(code));\n"
        "}\n"
    )


def page_blocks(markdown: str) -> list[str]:
    """The raw HTML blocks (```` ```{=html} ````) of a page's markdown that hold a workshop panel."""
    return [block for block in RAW_HTML.findall(markdown) if MARKER in block]


def page_files(blocks: list[str]) -> list[str]:
    """The workshop's site files that a page's panel blocks load (scripts and style sheets), each once."""
    named = re.findall(rf'(?:src|href)="[^"]*{SITE_FOLDER}/([\w.-]+)"', "\n".join(blocks))
    return list(dict.fromkeys(named))


def _plain(title: str) -> str:
    """A heading's text as a reader sees it: Markdown's backticks and emphasis marks removed."""
    return re.sub(r"[`*_]", "", title).strip()


def section_refs(root: Path, ids: tuple[str, ...] = SECTIONS) -> dict[str, dict]:
    """For each section id that a page of the book at ``root`` holds: its chapter's number, its title and its
    address from a chapter's page.

    The panels name the section that explains a setting; the ids move with
    their sections, so the chapter and address are read from the book being
    built. A panel leaves out a section the book does not hold (a book built
    from a few pages); tests/web checks that the whole book holds every one.
    """
    found: dict[str, dict] = {}
    for page in book_pages(root):
        for line in (root / page.source).read_text(encoding="utf-8").splitlines():
            match = HEADING.match(line)
            attrs = (match.group(3) or "").split() if match and len(match.group(1)) > 1 else []
            for word in attrs:
                if word.startswith("#") and word[1:] in ids:
                    assert match is not None  # attrs is empty without a heading
                    href = os.path.relpath(Path(page.source).with_suffix(".html"), "chapters").replace(os.sep, "/")
                    found[word[1:]] = {
                        "chapter": page.number or page.title,
                        "title": _plain(match.group(2)),
                        "href": f"{href}#{word[1:]}",
                    }
    return found


def add_to_site(root: Path, sources: list[str], site: Path) -> bool:
    """Write the workshop's files into ``site`` if a page among ``sources`` (paths under ``root``) holds a panel.

    Both backends' builds call it, so that the pandoc site and Quarto's carry the same files.
    """
    if not any(page_blocks((root / source).read_text(encoding="utf-8")) for source in sources):
        return False
    write_assets(site, root=root)
    return True


def write_assets(site: Path, data: dict | None = None, root: Path = REPO) -> list[Path]:
    """Write the workshop's script, data and style into ``site/workshop/``; returns the files written.

    ``data`` defaults to :func:`rlbook.publish.checkpoints.export_data` (the run cache's seed-0 runs); the
    sections the panels point to are read from the book at ``root``.
    """
    folder = site / SITE_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    data = {**(data or checkpoints.export_data()), "sections": section_refs(root)}
    files = {
        SCRIPT: packed(bundle()),
        DATA: checkpoints.data_script(data),
        MAIN: checkpoints.main_script(data),
        STYLE: (SOURCE / STYLE).read_text(encoding="utf-8"),
    }
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return [folder / name for name in files]
