"""rlbook.analysis.loop_curves: chapter 3's loop trained four ways from one seed's base policy, main's settings."""

from __future__ import annotations

from rlbook.analysis import loop_curves
from rlbook.runs import MAIN


def test_each_variant_trains_once_from_the_seed_s_base_with_its_offset_and_baseline(monkeypatch):
    trained, loaded = [], []

    def train(start, seed, settings, offset=0.0, baseline=True):
        trained.append((start, seed, settings, offset, baseline))
        return {"steps": [0, 10], "heldout": [0.3, 0.3 + offset / 10]}

    class Base:
        def policy(self):
            return f"base policy {len(loaded)}"  # a fresh copy for every training

    monkeypatch.setattr(loop_curves.reinforce, "train_and_evaluate", train)
    monkeypatch.setattr(loop_curves, "load", lambda name, seed: loaded.append((name, seed)) or Base())
    made = loop_curves.measure(4)
    assert list(made) == ["loop", "baseline", "shift", "large_shift"]
    assert loaded == [("base", 4)] * 4 and len({t[0] for t in trained}) == 4
    assert [(t[1], t[2], t[3], t[4]) for t in trained] == [
        (4, MAIN, 0.0, True),
        (4, MAIN, loop_curves.SHIFT, True),
        (4, MAIN, loop_curves.SHIFT, False),
        (4, MAIN, loop_curves.LARGE_SHIFT, False),
    ]
    assert made["large_shift"]["heldout"] == [0.3, 0.3 + loop_curves.LARGE_SHIFT / 10]
