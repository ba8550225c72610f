"""rlbook.publish.webworkshop: the workshop's ES modules joined into one classic script, and its site files."""
from __future__ import annotations

import shutil
import subprocess

import pytest

from rlbook.publish import webworkshop

PAGE = 'export function main() { globalThis.seen = double(21); }\n'


def _folder(tmp_path, files: dict[str, str]):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return tmp_path


def test_modules_come_after_the_modules_they_import():
    sources = {"a.js": 'import { b } from "./b.js";\n', "b.js": 'import { c } from "./c.js";\n', "c.js": ""}
    assert webworkshop.module_order(sources) == ["c.js", "b.js", "a.js"]
    with pytest.raises(ValueError, match="circle"):
        webworkshop.module_order({"a.js": 'import { b } from "./b.js";\n', "b.js": 'import { a } from "./a.js";\n'})
    with pytest.raises(ValueError, match="does not exist"):
        webworkshop.module_order({"a.js": 'import { b } from "./b.js";\n'})


def test_only_named_imports_and_exported_declarations_are_accepted():
    with pytest.raises(ValueError, match="supported"):
        webworkshop.wrap_module("a.js", 'import * as b from "./b.js";\n')
    with pytest.raises(ValueError, match="supported"):
        webworkshop.wrap_module("a.js", "export default 3;\n")


def test_the_bundle_runs_the_entry_with_its_imports(tmp_path):
    node = shutil.which("node")
    if node is None:
        pytest.skip("Node.js is not installed")
    folder = _folder(tmp_path, {"page.js": 'import { double } from "./maths.js";\n' + PAGE,
                                "worker.js": "export function main() {}\n",
                                "maths.js": "const TWO = 2;\nexport function double(x) { return TWO * x; }\n"})
    script = webworkshop.bundle(folder)
    runner = tmp_path / "run.js"
    runner.write_text(script + '\nrlbookWorkshop("page");\nconsole.log(globalThis.seen);\n')
    assert subprocess.run([node, str(runner)], capture_output=True, text=True, check=True).stdout.strip() == "42"


def test_the_site_files_are_written_beside_the_chapters(tmp_path, workshop_data):
    files = webworkshop.write_assets(tmp_path, workshop_data)
    assert sorted(f.name for f in files) == sorted([webworkshop.SCRIPT, webworkshop.DATA, webworkshop.STYLE])
    assert all(f.parent == tmp_path / webworkshop.SITE_FOLDER and f.stat().st_size for f in files)


def test_the_workshop_blocks_of_a_page_are_found():
    text = ("Prose.\n\n```{=html}\n<div class=\"rlbook-workshop\" data-panel=\"sample\"></div>\n```\n\n"
            "```{=html}\n<p>other raw html</p>\n```\n")
    assert webworkshop.page_blocks(text) == ['<div class="rlbook-workshop" data-panel="sample"></div>\n']


def test_the_workshop_colours_verdicts_as_the_books_figures_do():
    from rlbook import plots

    style = (webworkshop.SOURCE / webworkshop.STYLE).read_text()
    for status in ("accepted", "incorrect", "malformed", "incomplete", "unverifiable"):
        assert f"--rw-{status}: {plots.STATUS_COLOURS[status]};" in style, status
