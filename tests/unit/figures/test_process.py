"""Chapter 11's figure (rlbook.figures.process) from made-up facts: every judge's best-of-n line per seed, the
three runs' held-out accuracy in their judge's colour, prm's reward beside its accuracy, and a legend panel."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

from matplotlib.colors import to_hex

from rlbook.figures import process

SEEDS = (0, 1)
NS = [1, 4, 16]
BEST = {
    s: {
        "outcome": [0.5, 0.9, 1.0],
        "process-exact": [0.5, 0.88, 0.99],
        "prm-min": [0.5, 0.55, 0.4 + s / 100],
        "prm-product": [0.5, 0.5, 0.35],
    }
    for s in SEEDS
}
CURVE = {
    "steps": [0, 30, 60],
    "accuracy": [0.5, 0.7, 0.85],
    "reward": [0.5, 0.8, 0.9],
    "train_accuracy": [0.5, 0.1, 0.0],
}
RUNS = {run: {s: CURVE for s in SEEDS} for run in ("worked", "process-exact", "prm")}


def test_judges_draws_every_judge_and_run_per_seed_in_its_colour(check_readable):
    picking, training, hacked, legend = process.judges(BEST, NS, RUNS)
    lines = picking.axes[0].get_lines()
    assert len(lines) == len(SEEDS) * len(process.JUDGE_COLOURS)
    assert {to_hex(line.get_color()) for line in lines} == {to_hex(c) for c in process.JUDGE_COLOURS.values()}
    assert [list(line.get_xdata()) for line in lines] == [NS] * len(lines)
    assert len(training.axes[0].get_lines()) == len(SEEDS) * len(process.RUN_COLOURS)
    ys = [list(line.get_ydata()) for line in hacked.axes[0].get_lines()]
    assert ys == [CURVE["reward"], CURVE["train_accuracy"]] * len(SEEDS)
    texts = [t.get_text() for t in legend.axes[0].get_legend().get_texts()]
    assert len(texts) == 3 + len(process.JUDGE_COLOURS) + len(process.RUN_COLOURS) + 2
    assert "prm (scorer, smallest step)" in texts
    for fig in (picking, training, hacked, legend):
        check_readable(fig)
