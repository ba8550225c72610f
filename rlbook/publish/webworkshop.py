"""The web workshop's site files: its ES modules joined into one classic script, its data and its style.

Chapter 1's page carries a workshop that samples and trains the book's
policy in the reader's browser (``rlbook/publish/assets/workshop/``, one idea
per ES module; Node's tests import the modules as they are). A page opened
from ``file://`` cannot load ES modules or a worker script in Chromium (both
count as cross-origin requests from an opaque origin), so the site gets one
classic script instead: each module becomes a function that returns its
exports, in the order their imports need. The page then starts its Web Worker
from a Blob of the same script's own source, and the checkpoints come as a
second classic script (:mod:`rlbook.publish.checkpoints`). Both backends'
builds copy these files into the site's ``workshop/`` folder.

The modules use no library. Measured when the choice was made (issue 33):
TensorFlow.js 4.22's core and CPU backend alone are 426 KB minified, more
than the workshop's whole budget of 300 KB, and its CPU matrix product for
one layer of an RL step was about three times slower than forward.js's
loops; its WebAssembly backend matched them but adds 870 KB and fetches its
``.wasm`` file, which Chromium refuses from ``file://``.
"""
from __future__ import annotations

import re
from pathlib import Path

from rlbook.publish import checkpoints

SOURCE = Path(__file__).resolve().parent / "assets" / "workshop"
SITE_FOLDER = "workshop"
"""The site's folder for the workshop's files, beside the chapters' folder."""

SCRIPT, DATA, STYLE = "workshop.js", "workshop-data.js", "workshop.css"
ENTRIES = ("page.js", "worker.js")
"""The modules whose ``main`` starts the workshop: in the page, and in its worker."""

RAW_HTML = re.compile(r"^```\{=html\}\n(.*?)^```", re.M | re.S)
MARKER = 'class="rlbook-workshop"'
"""What marks a workshop panel in a page's raw HTML (its ``data-panel`` says which panel)."""

IMPORT = re.compile(r'^import \{([^}]*)\} from "\./([\w-]+\.js)";\n', re.M)
EXPORT = re.compile(r"^export (?=(?:async )?(?:function|class|const|let) )", re.M)
EXPORTED = re.compile(r"^export (?:async )?(?:function\*?|class|const|let) ([A-Za-z_$][\w$]*)", re.M)


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


def wrap_module(name: str, source: str) -> str:
    """One module as an entry of ``modules``: its imports read from the modules before it, its exports returned."""
    names = EXPORTED.findall(source)
    leftover = [line for line in source.splitlines() if line.startswith(("import ", "export "))
                and not IMPORT.match(line + "\n") and not EXPORT.match(line)]
    if leftover:
        raise ValueError(f"{name}: only `import {{ a, b }} from \"./m.js\";` and `export` declarations are "
                         f"supported, not {leftover[0]!r}")
    body = IMPORT.sub(lambda m: f"const {{{m.group(1)}}} = modules[\"{m.group(2)}\"];\n", source)
    body = EXPORT.sub("", body)
    return f'modules["{name}"] = (() => {{\n{body}\nreturn {{ {", ".join(names)} }};\n}})();\n'


def bundle(folder: Path = SOURCE) -> str:
    """The classic script of the workshop: ``rlbookWorkshop(entry)`` holding every module, called for the page."""
    sources = {p.name: p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.js"))}
    missing = [e for e in ENTRIES if e not in sources]
    if missing:
        raise ValueError(f"the workshop has no entry module {missing[0]}")
    wrapped = "".join(wrap_module(name, sources[name]) for name in module_order(sources))
    return ("// Chapter 1's web workshop: the ES modules of rlbook/publish/assets/workshop/ joined into one\n"
            "// classic script by rlbook.publish.webworkshop, so that it runs from file:// too.\n"
            "\"use strict\";\n"
            "function rlbookWorkshop(entry) {\n"
            "const modules = {};\n"
            f"{wrapped}"
            "return modules[entry + \".js\"].main(rlbookWorkshop);\n"
            "}\n"
            "if (typeof document !== \"undefined\") rlbookWorkshop(\"page\");\n")


def page_blocks(markdown: str) -> list[str]:
    """The raw HTML blocks (```` ```{=html} ````) of a page's markdown that hold a workshop panel."""
    return [block for block in RAW_HTML.findall(markdown) if MARKER in block]


def add_to_site(root: Path, sources: list[str], site: Path) -> bool:
    """Write the workshop's files into ``site`` if a page among ``sources`` (paths under ``root``) holds a panel.

    Both backends' builds call it, so that the pandoc site and Quarto's carry the same files.
    """
    if not any(page_blocks((root / source).read_text(encoding="utf-8")) for source in sources):
        return False
    write_assets(site)
    return True


def write_assets(site: Path, data: dict | None = None) -> list[Path]:
    """Write the workshop's script, data and style into ``site/workshop/``; returns the files written.

    ``data`` defaults to :func:`rlbook.publish.checkpoints.export_data` (the run cache's seed-0 runs).
    """
    folder = site / SITE_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    files = {SCRIPT: bundle(), DATA: checkpoints.data_script(data or checkpoints.export_data()),
             STYLE: (SOURCE / STYLE).read_text(encoding="utf-8")}
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return [folder / name for name in files]
