"""rlbook.bench.browser's report: every figure printed with its target (the measurements are not asserted)."""

from __future__ import annotations

from rlbook.bench import browser


def test_the_browser_figures_are_printed_with_their_targets():
    report = {
        "page_loaded_ms": 850.0,
        "loading_long_tasks_ms": [61.0],
        "draw_ms": [2.0, 3.0, 9.5],
        "sample32_ms": [1.5, 2.5, 4.0],
        "first_step_ms": [310.0, 290.0, 350.0],
        "first_step_later_ms": [80.0, 90.0, 70.0],
        "pauses": [(1, 40.0), (0, 0.0), (1, 75.0)],
        "speeds": {
            1: {"steps": 4, "seconds": 4.0, "asked_every_ms": 1000.2, "long_tasks_ms": []},
            0: {"steps": 90, "seconds": 6.1, "asked_every_ms": 61.0, "long_tasks_ms": [55.0]},
        },
        "step_ms": [400.0, 60.0, 70.0, 66.0],
        "step_sample_ms": [200.0, 30.0, 35.0, 32.0],
        "step_watch_ms": [10.0, 2.0, 3.0, 2.0],
        "step_update_ms": [190.0, 28.0, 32.0, 32.0],
        "torch_step_ms": [90.0, 50.0, 52.0, 54.0],
        "final_heldout": 0.5125,
        "evaluations": 11,
        "main_final_heldout": {0: 0.48, 1: 0.537, 2: 0.543},
        "seed": 7,
        "hack": {"shares": [0.01, 0.3, 0.6, 0.9], "evals": [0.33, 0.01], "seconds": 4.2},
        "exploit_takeovers": [23, 13, 20],
        "bytes_added": {"01-rl-loop.html": 266985, "03-credit-assignment.html": 37262},
        "panels": {"01-rl-loop.html": ["sample", "lab"], "03-credit-assignment.html": ["advantages"]},
    }
    text = "\n".join(browser.lines(report))
    assert (
        "page ready after 850 ms (file://, offline); main-thread tasks over 50 ms while it loads: 1 (longest 61 ms)"
        in text
    )
    assert "drawing of a step on the main thread: median 3.0 ms, max 9.5 ms" in text
    assert "32 samples: median 2.5 ms, max 4.0 ms over 3 presses (target <= 20 ms)" in text
    assert (
        "the worker's start included: median 310 ms, max 350 ms over 3 new runs (target <= 400 ms); asked 3 s "
        "after: median 80 ms" in text
    )
    assert "median 68 ms (sampling 34, watching 2, update 32), max 400 ms (target <= 100 ms)" in text
    assert "median 53 ms; browser / torch = 1.28" in text
    assert "3 presses: at most 1 step arrived after a press, the last 75 ms after it (target: within one step)" in text
    assert (
        "lab at 1 a second: 4 steps in 4.0 s, asked every 1000 ms (median); main-thread tasks over 50 ms: 0 "
        "(target 0)" in text
    )
    assert (
        "lab at as fast as it goes: 90 steps in 6.1 s, asked every 61 ms (median); main-thread tasks over 50 ms: "
        "1 (longest 55 ms) (target 0)" in text
    )
    assert "(seed 7): 0.512; main's seeds 0: 0.480, 1: 0.537, 2: 0.543 (range 0.480 to 0.543)" in text
    assert "4 steps in 4.2 s; the loophole passed one half at step 3, held-out 0.33 -> 0.01" in text
    assert "bytes added by 01-rl-loop.html (sample, lab): 266,985 (target <= 300,000)" in text
