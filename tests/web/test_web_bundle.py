"""rlbook.publish.webworkshop: the workshop's ES modules joined into one classic script, and its site files."""

from __future__ import annotations

import base64
import re
import shutil
import subprocess
import zlib

import numpy as np
import pytest

from rlbook.publish import webworkshop

PAGE = "export function main() { globalThis.seen = double(21); }\n"


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
    folder = _folder(
        tmp_path,
        {
            "page.js": 'import { double } from "./maths.js";\n' + PAGE,
            "worker.js": "export function main() {}\n",
            "maths.js": "const TWO = 2;\nexport function double(x) { return TWO * x; }\n",
        },
    )
    script = webworkshop.bundle(folder)
    runner = tmp_path / "run.js"
    runner.write_text(script + '\nrlbookWorkshop("page");\nconsole.log(globalThis.seen);\n')
    assert subprocess.run([node, str(runner)], capture_output=True, text=True, check=True).stdout.strip() == "42"


def test_the_site_files_are_written_beside_the_chapters(tmp_path, workshop_data):
    files = webworkshop.write_assets(tmp_path, workshop_data)
    assert sorted(f.name for f in files) == sorted(
        [webworkshop.SCRIPT, webworkshop.DATA, webworkshop.MAIN, webworkshop.STYLE]
    )
    assert all(f.parent == tmp_path / webworkshop.SITE_FOLDER and f.stat().st_size for f in files)


def _node_output(tmp_path, script: str) -> str:
    node = shutil.which("node")
    if node is None:
        pytest.skip("Node.js is not installed")
    path = tmp_path / f"script-{abs(hash(script))}.cjs"
    path.write_text(script)
    return subprocess.run([node, str(path)], capture_output=True, text=True, check=True).stdout


TRICKY = r"""
// a comment with "quotes" and a / slash
const url = "http://example.org/a//b"; /* a block
comment */ const half = 10 / 2 / 1;
const re = /[/*]+\/x/g, text = 'it\'s // not a comment';
const nested = `a ${ { b: `c ${ "}" } d` }.b } e ${ 2 / 1 }`;
let i = 1; const sum = i + +"2" - -1 + i++;
function f(x) { return /^\d+$/.test(x)
  ? x : "no" }
const words = typeof url === "string" && url.length > 3;
console.log(JSON.stringify([url, half, "a/*b*/".replace(re, "-"), text, nested, sum, i, f("12"), f("x"), words]));
"""


def test_compacting_keeps_the_program(tmp_path):
    small = webworkshop.compact(TRICKY)
    assert "comment" not in small.replace("not a comment", "") and len(small) < len(TRICKY)
    assert _node_output(tmp_path, small) == _node_output(tmp_path, TRICKY)
    with pytest.raises(ValueError, match="template"):
        webworkshop.compact("const a = `one\ntwo`;\n", "m.js")
    with pytest.raises(ValueError, match="string"):
        webworkshop.compact('const a = "one\ntwo";\n', "m.js")


def test_the_compacted_modules_compute_what_the_modules_do(tmp_path, node, workshop_data):
    """The site ships the modules compacted: the same verdicts, samples and gradient as the sources."""
    for source in webworkshop.SOURCE.glob("*.js"):
        (tmp_path / source.name).write_text(webworkshop.compact(source.read_text(), source.name))
    (tmp_path / "package.json").write_text('{"type": "module"}')
    from tests.web.test_web_verifier import fuzz_cases

    cases = fuzz_cases(1500, seed=3)
    request = {
        "data": workshop_data,
        "verify": cases,
        "failOpen": cases,
        "sample": {"checkpoint": "main", "prompt": "U:3+4?|A:", "n": 64, "temperature": 1.0, "budget": 4, "seed": 1},
        "advantages": [{"rewards": [0, 1, 1, 0, 1, 1, 1, 1], "groupSize": 4, "method": "group_std"}],
        "reuse": {"seed": 2},
    }
    original, compacted = node(request), node({**request, "modules": str(tmp_path)})
    assert compacted["verify"] == original["verify"] and compacted["failOpen"] == original["failOpen"]
    assert compacted["sample"] == original["sample"] and compacted["advantages"] == original["advantages"]
    np.testing.assert_array_equal(compacted["reuse"]["shared"], original["reuse"]["shared"])


def test_the_shipped_script_unpacks_to_the_bundle(tmp_path):
    script = webworkshop.bundle()
    shipped = webworkshop.packed(script)
    packed_text = re.search(r'atob\("([A-Za-z0-9+/=]+)"\)', shipped).group(1)
    assert zlib.decompress(base64.b64decode(packed_text), -15).decode() == script
    assert len(shipped) < len(script) / 2
    # Run in Node: the loader inflates the bundle and evaluates it; with no document it defines the workshop only.
    out = _node_output(tmp_path, shipped + "\nsetTimeout(() => console.log(globalThis.rlbookWorkshopLoaded), 200);\n")
    assert out.strip() == "true"


def test_each_panel_block_names_the_files_it_needs():
    sample = (
        '<div class="rlbook-workshop" data-panel="sample"></div>\n<link rel="stylesheet" '
        'href="../workshop/workshop.css">\n<script src="../workshop/workshop-data.js"></script>\n'
        '<script src="../workshop/workshop.js"></script>\n'
    )
    advantages = '<div class="rlbook-workshop" data-panel="advantages"></div>\n<script src="../workshop/workshop.js">'
    blocks = [sample, advantages + "</script>\n"]
    assert webworkshop.page_files(blocks) == ["workshop.css", "workshop-data.js", "workshop.js"]


def test_the_sections_the_panels_name_are_found_in_the_book():
    used = set()
    for source in webworkshop.SOURCE.glob("*.js"):
        used |= set(re.findall(r'"(sec-[\w-]+)"', source.read_text()))
    assert used == set(webworkshop.SECTIONS)
    refs = webworkshop.section_refs(webworkshop.REPO)
    assert sorted(refs) == sorted(webworkshop.SECTIONS), "every section a panel names is in the book"
    for sec, ref in refs.items():
        page, anchor = ref["href"].split("#")
        assert anchor == sec and page.endswith(".html") and ref["chapter"].isdigit() and ref["title"]
        source = (webworkshop.REPO / "chapters" / page).with_suffix(".qmd").read_text()
        assert f"{{#{sec}}}" in source


def test_a_section_that_no_page_holds_is_left_out():
    assert list(webworkshop.section_refs(webworkshop.REPO, ("sec-advantages", "sec-nowhere"))) == ["sec-advantages"]


def test_the_workshop_blocks_of_a_page_are_found():
    text = (
        'Prose.\n\n```{=html}\n<div class="rlbook-workshop" data-panel="sample"></div>\n```\n\n'
        "```{=html}\n<p>other raw html</p>\n```\n"
    )
    assert webworkshop.page_blocks(text) == ['<div class="rlbook-workshop" data-panel="sample"></div>\n']


def test_the_workshop_colours_verdicts_as_the_books_figures_do():
    from rlbook.figures.style import STATUS_COLOURS

    style = (webworkshop.SOURCE / webworkshop.STYLE).read_text()
    for status in ("accepted", "incorrect", "malformed", "incomplete", "unverifiable"):
        assert f"--rw-{status}: {STATUS_COLOURS[status]};" in style, status
