"""Chapter 10's figure (rlbook.figures.preference) from made-up facts: main's lines against the answers sampled,
dpo's ends at the answers its pairs came from, dpo's lines over its steps, and a legend panel."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

from matplotlib.colors import to_hex

from rlbook.figures import preference

SEEDS = (0, 1, 2)
MAIN = {s: {"answers": [0, 48_000, 96_000], "accuracy": [0.33, 0.45, 0.5 + 0.01 * s]} for s in SEEDS}
DPO = {s: {"steps": [0, 250, 500], "accuracy": [0.33, 0.4, 0.43 + 0.01 * s], "end": 0.43 + 0.01 * s} for s in SEEDS}


def test_versus_online_draws_both_methods_per_seed(check_readable):
    online, offline, legend = preference.versus_online(MAIN, DPO, 96_000)
    lines = online.axes[0].get_lines()
    assert len(lines) == 2 * len(SEEDS)
    ends = [line for line in lines if list(line.get_xdata()) == [96_000]]
    assert sorted(float(line.get_ydata()[0]) for line in ends) == [DPO[s]["end"] for s in SEEDS]
    assert {to_hex(line.get_color()) for line in ends} == {to_hex(preference.COLOURS["dpo"])}
    assert [list(line.get_xdata()) for line in offline.axes[0].get_lines()] == [[0, 250, 500]] * len(SEEDS)
    assert offline.axes[0].get_xlabel() == "DPO step" and online.axes[0].get_xlabel() == "answers sampled"
    assert len(legend.axes[0].get_legend().get_texts()) == 3
    for fig in (online, offline, legend):
        check_readable(fig)
