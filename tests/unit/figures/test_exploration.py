"""Chapter 6's figures (rlbook.figures.exploration) from made-up facts: panels of the house size, readable text
and few series per panel."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
from matplotlib.colors import to_hex
from matplotlib.text import Text

from rlbook.figures import exploration, style

SEEDS = (0, 1, 2)
KS = [1, 2, 4]


def check_panels(figures):
    for fig in figures:
        assert fig.get_size_inches()[0] <= style.PANEL[0] + 1e-9
        sizes = [t.get_fontsize() for t in fig.findobj(Text) if t.get_text().strip() and t.get_visible()]
        assert min(sizes) >= style.MIN_FONT
        for ax in fig.axes:
            assert len({to_hex(line.get_color()) for line in ax.get_lines() if len(line.get_xdata()) > 1}) <= 5
    plt.close("all")


def audit_row(t):
    return {
        "temperature": t,
        "accepted": 0.05,
        "incorrect": 0.1,
        "duplicate": 0.6,
        "malformed": 0.1,
        "budget-stopped": 0.1,
        "unverifiable": 0.0,
        "duplicate_accepted": 0.4,
        "duplicate_incorrect": 0.2,
        "novel_share": 0.3,
        "tokens_per_rollout": 2.5,
    }


def test_pass_at_k_and_the_audit():
    rows = [
        {"temperature": t, "ks": KS, "pass_at_k": [0.3, 0.4, 0.5], "mixed": [0.0, 0.3, 0.4]}
        for t in (0.5, 1.0, 1.5, 2.0)
    ]
    check_panels(exploration.pass_at_k(rows))
    figures = exploration.coverage([audit_row(t) for t in (0.5, 1.0)])
    assert len(figures) == 3
    labels = [t.get_text() for t in figures[1].axes[0].texts]
    assert labels == ["2.5 tokens", "2.5 tokens"]
    check_panels(figures)


def test_the_stacks_merge_malformed_and_budget_stopped_into_one_band():
    assert exploration._stack(audit_row(1.0)) == [0.05, 0.4, 0.1, 0.2, 0.2]
    assert len(exploration.CATEGORIES) == 5


def test_composition_before_after_and_stale():
    flow = {"step": [1, 2, 3], **{k: [v] * 3 for k, v in audit_row(1.0).items() if k != "temperature"}}
    check_panels(exploration.composition(flow, {s: [1.0, 0.05, 0.01] for s in SEEDS}, [1, 2, 3]))
    check_panels(
        exploration.before_after(
            {s: {"before": [0.3, 0.5, 0.7], "after": [0.5, 0.6, 0.7], "gap": [0.2, 0.1, 0.0]} for s in SEEDS}, KS
        )
    )
    run = {"eval_steps": [0, 5], "heldout": [0.3, 0.4], "clip": [None, 0.0, 0.05]}
    check_panels(exploration.stale({s: {"main": run, "stale": run} for s in SEEDS}))
