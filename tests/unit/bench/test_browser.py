"""rlbook.bench.browser's report: every figure printed with its target (the measurements are not asserted)."""
from __future__ import annotations

from rlbook.bench import browser


def test_the_browser_figures_are_printed_with_their_targets():
    report = {"page_loaded_ms": 850.0, "sample32_ms": [1.5, 2.5, 4.0], "step_ms": [400.0, 60.0, 70.0, 66.0],
              "step_sample_ms": [200.0, 30.0, 35.0, 32.0], "step_update_ms": [200.0, 30.0, 35.0, 33.0],
              "torch_step_ms": [90.0, 50.0, 52.0, 54.0], "full_run_s": 10.5, "long_tasks_while_training_ms": [],
              "final_heldout": 0.5125, "evaluations": 11, "main_final_heldout": {0: 0.48, 1: 0.537, 2: 0.543},
              "bytes_added": 293030, "seed": 7}
    text = "\n".join(browser.lines(report))
    assert "32 samples: median 2.5 ms, max 4.0 ms over 3 presses (target <= 20 ms)" in text
    assert "median 68 ms (sampling 34, update 34), first 400 ms, max 400 ms (target <= 400 ms, stretch 100 ms)" in text
    assert "median 53 ms; browser / torch = 1.28" in text
    assert "main's 4 steps with 11 checkpoint evaluations: 10.5 s (target < 60 s)" in text
    assert "main-thread tasks over 50 ms while training: 0\n" in text
    assert "(seed 7): 0.512; main's seeds 0: 0.480, 1: 0.537, 2: 0.543 (range 0.480 to 0.543)" in text
    assert "293,030 (target <= 300,000)" in text
