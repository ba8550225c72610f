"""rlbook.publish.execute: one page run in a kernel of its own, and its inline expressions."""

from __future__ import annotations

import asyncio
import threading

from rlbook.publish.execute import execute_notebook, inline_expressions, qmd_to_notebook


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
