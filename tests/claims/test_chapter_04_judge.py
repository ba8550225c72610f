"""Chapter 4's claims about the learned judge (@sec-learned-judge) hold for seeds 0, 1 and 2.

Each test recomputes a claim of the section through the same rlbook.analysis.judge functions and the cached
judges and runs (``runs.load_judge``, ``rm``, ``rm-kl``), with the margins the chapter checks.
"""
from __future__ import annotations

import numpy as np
import pytest

from rlbook import judge, runs

SEEDS = [0, 1, 2]


@pytest.mark.parametrize("seed", SEEDS)
def test_the_judge_is_good_on_its_training_prompts_and_far_worse_on_held_out_ones(seed):
    """@tbl-judge: AUC and accuracy above 0.75 on fresh samples of the training prompts; held-out AUC 0.1 lower."""
    report = runs.load_judge(seed).report
    seen, unseen = report["train_prompts"], report["heldout_prompts"]
    assert seen["auc"] > 0.75 and seen["accuracy"] > 0.75, seen
    assert unseen["auc"] < seen["auc"] - 0.1, (seen, unseen)


@pytest.mark.parametrize("seed", SEEDS)
def test_best_of_n_raises_the_proxy_and_lowers_the_gold(seed):
    """@fig-best-of-n: the proxy rises with n (by more than 0.05); gold peaks at n <= 64 and ends below n = 1."""
    result = judge.best_of_n(runs.load("base", seed).policy(), runs.load_judge(seed).model, seed)
    assert np.all(np.diff(result.proxy) >= 0) and result.proxy[-1] > result.proxy[0] + 0.05, result
    assert result.gold[-1] < result.gold[0] and result.peak <= 64, result


def test_rl_against_the_judge_raises_the_proxy_and_lowers_the_gold_and_the_kl_penalty_holds_it():
    """@fig-rm: rm's proxy rises by more than 0.05 on every seed and its gold falls on at least two of three;
    rm-kl's gold, averaged over the checkpoints, is 0.05 above rm's on every seed (on one numerical draw rm's gold
    rose on seed 0; on another rm-kl collapsed at its last checkpoint on seed 1, so its final value is not claimed)."""
    curves = {s: (judge.curves(runs.load("rm", s)), judge.curves(runs.load("rm-kl", s))) for s in SEEDS}
    assert all(rm.proxy[-1] > rm.proxy[0] + 0.05 for rm, _ in curves.values()), curves
    assert sum(rm.gold[-1] < rm.gold[0] for rm, _ in curves.values()) >= 2, curves
    assert all(kl.gold.mean() > rm.gold.mean() + 0.05 for rm, kl in curves.values()), curves


@pytest.mark.parametrize("seed", SEEDS)
def test_rm_learns_an_over_rated_answer_that_it_writes_on_many_prompts(seed):
    """@tbl-rm-exploit: the over-rated share grows by more than 0.05; the favourite is written on at least 5 prompts."""
    found = judge.exploit(runs.load("rm", seed))
    assert found.share[-1] > found.share[0] + 0.05, found.share
    _, _, score, prompts, _ = found.top[0]
    assert prompts >= 5 and score >= 0.5, found.top[:3]
