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
    """@tbl-judge: AUC and accuracy above 0.75 on fresh samples of the training prompts; held-out AUC 0.15 lower."""
    report = runs.load_judge(seed).report
    seen, unseen = report["train_prompts"], report["heldout_prompts"]
    assert seen["auc"] > 0.75 and seen["accuracy"] > 0.75, seen
    assert unseen["auc"] < seen["auc"] - 0.15, (seen, unseen)


@pytest.mark.parametrize("seed", SEEDS)
def test_best_of_n_raises_the_proxy_and_lowers_the_gold(seed):
    """@fig-best-of-n: the proxy rises with n (by more than 0.05); gold peaks at n <= 64 and ends 0.1 below n = 1."""
    result = judge.best_of_n(runs.load("base", seed).policy(), runs.load_judge(seed).model, seed)
    assert np.all(np.diff(result.proxy) >= 0) and result.proxy[-1] > result.proxy[0] + 0.05, result
    assert result.gold[-1] < result.gold[0] - 0.1 and result.peak <= 64, result


@pytest.mark.parametrize("seed", SEEDS)
def test_rl_against_the_judge_raises_the_proxy_and_lowers_the_gold_and_the_kl_penalty_holds_it(seed):
    """@fig-rm: rm's proxy rises by more than 0.05 and its gold falls by more than 0.15; rm-kl ends 0.15 above rm."""
    rm, kl = judge.curves(runs.load("rm", seed)), judge.curves(runs.load("rm-kl", seed))
    assert rm.proxy[-1] > rm.proxy[0] + 0.05 and rm.gold[-1] < rm.gold[0] - 0.15, rm
    assert kl.gold[-1] > rm.gold[-1] + 0.15, (kl, rm)


@pytest.mark.parametrize("seed", SEEDS)
def test_rm_learns_an_over_rated_answer_that_it_writes_on_many_prompts(seed):
    """@tbl-rm-exploit: the over-rated share grows by more than 0.2; the favourite is written on at least 10 prompts."""
    found = judge.exploit(runs.load("rm", seed))
    assert found.share[-1] > found.share[0] + 0.2, found.share
    _, _, score, prompts, _ = found.top[0]
    assert prompts >= 10 and score >= 0.5, found.top[:3]
