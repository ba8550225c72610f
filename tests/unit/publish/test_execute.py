"""rlbook.publish.execute: one page run in a kernel of its own, and its inline expressions."""

from __future__ import annotations

import asyncio
import threading

import nbformat

from rlbook.publish.execute import execute_notebook, inline_expressions, merged_streams, qmd_to_notebook


def test_a_page_run_on_a_thread_closes_the_event_loop_it_ran_on(tmp_path):
    # Left open, the loop (and its pair of sockets) is closed by the garbage collector once the
    # thread ends, with a ResourceWarning each.
    loops = []

    def page():
        text = "```{python}\nx = 1 + 1\n```\n"
        execute_notebook(qmd_to_notebook(text), tmp_path, "page.qmd", text)
        loops.append(asyncio.get_event_loop())

    thread = threading.Thread(target=page)
    thread.start()
    thread.join()
    assert len(loops) == 1 and loops[0].is_closed()


def test_inline_expressions_skip_fenced_code():
    text = "A `{python} a` b.\n\n```\n`{python} not_this`\n```\nC `{python} f(1, 2)`"
    assert [m.group(1) for m in inline_expressions(text)] == ["a", "f(1, 2)"]


def test_printing_split_over_messages_is_one_output_per_stream_run():
    out = [
        nbformat.v4.new_output("stream", name="stdout", text="PASSED: right on all 20 steps.\n"),
        nbformat.v4.new_output("stream", name="stdout", text="TRL logged 0.28 at step 1\n"),
        nbformat.v4.new_output("stream", name="stderr", text="a warning\n"),
        nbformat.v4.new_output("execute_result", {"text/plain": "3"}, execution_count=1),
        nbformat.v4.new_output("stream", name="stdout", text="after\n"),
    ]
    merged = merged_streams(out)
    assert [(o.output_type, o.get("name"), o.get("text")) for o in merged] == [
        ("stream", "stdout", "PASSED: right on all 20 steps.\nTRL logged 0.28 at step 1\n"),
        ("stream", "stderr", "a warning\n"),
        ("execute_result", None, None),
        ("stream", "stdout", "after\n"),
    ]
    assert out[0].text == "PASSED: right on all 20 steps.\n"  # the outputs it was given are left as they were


def test_an_svg_figure_carries_no_creation_date(tmp_path):
    text = "```{python}\nimport matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.show()\n```\n"
    nb = execute_notebook(qmd_to_notebook(text), tmp_path, "page.qmd", text, figures="svg")
    (figure,) = [o for o in nb.cells[0].outputs if "image/svg+xml" in o.get("data", {})]
    assert "<svg" in figure["data"]["image/svg+xml"] and "dc:date" not in figure["data"]["image/svg+xml"]
