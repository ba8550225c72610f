"""The Quarto filter assets/figure-panels.lua, run by pandoc on the Markdown Quarto's Jupyter engine wrote.

``fixtures/quarto-kept/01-kept.html.md`` is what Quarto 1.10.16 wrote (``keep-md``) for a page whose figure cell
draws three panels: an output block per panel, the whole caption on the first panel's image and ids
``fig-panels-1``, ``-2``, ``-3``, which Quarto would read as sub-figures (a), (b), (c) (issue 54). The filter
runs before Quarto reads figures (``at: pre-ast``), so pandoc's own reading is what it sees there.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from rlbook.publish.render import pandoc_path
from rlbook.publish.site import ASSETS

ENGINE = Path(__file__).parent / "fixtures" / "quarto-kept" / "01-kept.html.md"


def _tree(markdown: str, filtered: bool = True) -> list:
    command = [pandoc_path(), "-f", "markdown", "-t", "json"]
    if filtered:
        command += ["--lua-filter", str(ASSETS / "figure-panels.lua")]
    done = subprocess.run(command, input=markdown, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)["blocks"]


def _figure(blocks: list, identifier: str = "fig-panels") -> dict:
    return next(b for b in blocks if b["t"] == "Div" and b["c"][0][0] == identifier)


def _ids(node) -> list[str]:
    """Every identifier of a Div, Figure or Image in a part of the tree."""
    if isinstance(node, dict):
        own = [node["c"][0][0]] if node.get("t") in ("Div", "Figure", "Image") and node["c"][0][0] else []
        return own + _ids(node.get("c"))
    if isinstance(node, list):
        return [found for item in node for found in _ids(item)]
    return []


def _text(inlines: list) -> str:
    words = {"Str": lambda c: c, "Code": lambda c: c[1], "Space": lambda c: " "}
    return "".join(words[i["t"]](i.get("c")) for i in inlines if i["t"] in words)


def test_a_cell_of_three_panels_is_one_figure_with_its_caption_and_no_sub_figures():
    figure = _figure(_tree(ENGINE.read_text()))
    code, panels, caption = figure["c"][1]
    assert code["t"] == "CodeBlock"
    assert panels["t"] == "Div" and panels["c"][0][1] == ["cell-output", "cell-output-display", "rlbook-panels"]
    images = [block["c"][0] for block in panels["c"][1]]
    assert [image["c"][2][0] for image in images] == [
        f"01-kept_files/figure-html/fig-panels-output-{n}.svg" for n in (1, 2, 3)
    ]
    # the fig-alt describes the whole figure: a screen reader reads it on the first panel, the place of the others
    assert [dict(image["c"][0][2])["fig-alt"] for image in images] == [
        "Three small line charts, one per sum.",
        "Panel 2 of 3 (described with panel 1)",
        "Panel 3 of 3 (described with panel 1)",
    ]
    assert all(image["c"][1] == [] for image in images)  # the caption is the figure's, not an image's
    assert _ids(figure) == ["fig-panels"]  # no fig-panels-1, -2, -3 for Quarto to number (a), (b), (c)
    assert caption["t"] == "Para" and _text(caption["c"]) == "Three panels. The base policy, one panel per sum."


def test_cells_with_one_panel_or_with_sub_captions_are_left_to_quarto():
    one = ENGINE.read_text().split("::: {.cell-output .cell-output-display}\n![](")[0] + ":::\n"
    assert _tree(one) == _tree(one, filtered=False)
    # fig-subcap: Quarto's engine puts a caption on each panel, or the panels' captions and the whole one after
    both = ENGINE.read_text().replace("![](01-kept_files", "![(b) the second sum](01-kept_files", 1)
    assert _tree(both) == _tree(both, filtered=False)
    whole = ENGINE.read_text().replace("sum.'}\n:::\n:::\n", "sum.'}\n:::\n\nThree panels.\n:::\n")
    assert whole != ENGINE.read_text() and _tree(whole) == _tree(whole, filtered=False)
