"""Chapter 4's outcome-dependent sentences (rlbook.book.update and its choices, rlbook.book._update_words): each
selector picks the case that happened, on made-up facts, and the page words every case cleanly."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from rlbook.analysis.credit import Curves
from rlbook.book import _update_words as words
from rlbook.book import update
from rlbook.book.wording import choice
from rlbook.publish import prose
from rlbook.publish.page_rules import page_wordings

ROOT = Path(__file__).resolve().parents[3]
REUSED = ("ppo", "cispo", "ppo-kl", "ppo-kl-ratio")


@pytest.mark.parametrize(
    ("lost", "case", "values"),
    [
        ({}, "no_run", {"last": 60}),
        ({"ppo-kl": [1, 2]}, "one_reusing", {"names": "`ppo-kl`", "which": "seeds 1 and 2"}),
        ({"seq-mean": [0]}, "one_single", {"names": "`seq-mean`", "which": "seed 0"}),
        (
            {"ppo-kl": [1], "cispo": [0, 1, 2]},
            "all_reusing",
            {"names": "`ppo-kl` and `cispo`", "which": "`ppo-kl` on seed 1 and `cispo` on every seed"},
        ),
        (
            {"seq-mean": [2], "group-std": [0]},
            "none_reusing",
            {"names": "`seq-mean` and `group-std`", "which": "`seq-mean` on seed 2 and `group-std` on seed 0"},
        ),
        (
            {"ppo-kl": [1], "group-std": [2]},
            "some_reusing",
            {
                "names": "`ppo-kl` and `group-std`",
                "which": "`ppo-kl` on seed 1 and `group-std` on seed 2",
                "share": "one of the two",
            },
        ),
    ],
)
def test_lost_seeds_names_the_runs_their_seeds_and_whether_they_reuse_a_batch(lost, case, values):
    assert words.lost_seeds(lost, REUSED, 60, (0, 1, 2)) == choice(case, words.LOST, **values)


STORY = {
    "jump_step": 31,
    "kl_before": 0.12,
    "kl_jump": 4.25,
    "malformed_before": 0.01,
    "malformed_peak": 0.6,
    "reward_before": 0.52,
    "reward_last": 0.05,
    "stopped": 34,
    "threshold": 3,
}


def test_stops_give_each_stopped_seed_its_story():
    assert words.stops([]) == choice("none", words.STOPS)
    one = words.stops([{"run": "cispo", "seed": 1, **STORY}])
    assert one["case"] == "one" and one["values"]["run"] == "cispo" and one["values"]["seed"] == 1
    assert str(one["values"]["kl_jump"]) == "4.2" and str(one["values"]["malformed_peak"]) == "60%"
    later = {**STORY, "jump_step": 40, "stopped": 44, "kl_jump": 9.0}
    several = words.stops([{"run": "cispo", "seed": 1, **STORY}, {"run": "ppo", "seed": 2, **later}])
    assert several["case"] == "several"
    values = several["values"]
    assert values["runs"] == "`cispo` seed 1 and `ppo` seed 2" and values["jump_step"] == "31 and 40"
    assert values["kl_jump"] == "4.2 and 9.0" and values["threshold"] == "3"


def test_agreed_before_and_after_the_first_checkpoint():
    assert words.agreed(30, 10, 0.005) == choice("agreed", words.AGREED, tol=0.005, until=30)
    assert str(words.agreed(30, 10, 0.005)["values"]["tol"]) == "0.005"
    assert words.agreed(0, 10, 0.005) == choice("parted", words.AGREED, first=10)


@pytest.mark.parametrize(
    ("outside", "case", "later"),
    [
        ([0.08, 0.1, 0.11, 0.12, 0.12, 0.12, 0.1, 0.09], "shrinks", "9.0%"),
        ([0.08, 0.1, 0.11, 0.12, 0.12, 0.12, 0.13, 0.15], "grows", "15.0%"),
        ([0.08, 0.1, 0.11, 0.12, 0.12, 0.12, 0.13, 0.12], "stays", "12.0%"),
    ],
)
def test_ratio_drift_follows_the_ratios(outside, case, later):
    made = words.ratio_drift(outside, 4)
    assert made["case"] == case and str(made["values"]["later"]) == later
    assert str(made["values"]["first"]) == "8.0%" and made["values"]["twice"] == 8


@pytest.mark.parametrize(
    ("capped", "case", "counts"),
    [
        ([0.0] * 8, "never", {}),
        ([0.0, 0.0, 0.0, 0.0004, 0.0004, 0.0, 0.0, 0.0004], "both", {"at_reuse": "one", "last": "one", "most": "one"}),
        ([0.0, 0.0, 0.0, 0.0004, 0.0004, 0.0, 0.0, 0.0], "reuse_only", {"at_reuse": "one", "most": "one"}),
        ([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0008], "last_only", {"last": "two", "most": "two"}),
        ([0.0, 0.0008, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], "between", {"most": "two"}),
    ],
)
def test_cap_binds_counts_tokens_and_never_offers_a_count_of_zero(capped, case, counts):
    made = words.cap_binds(capped, 2474, 4.0, 4)
    assert made == choice(case, words.CAP, tokens=2474, reuse=4, twice=8, cap=4.0, **counts)
    assert str(made["values"]["tokens"]) == "2,474" and str(made["values"]["cap"]) == "4"


def _curves(start, final) -> Curves:
    heldout = np.array([[s, f] for s, f in zip(start, final)], dtype=float)
    return Curves("x", "", np.array([0, 60]), heldout, np.zeros((3, 60)), np.zeros((3, 60)))


def _penalty(curve: Curves) -> dict:
    """The choice update.compute makes of ``curve`` as ``ppo-kl``'s held-out curve."""
    seeds = (0, 1, 2)
    heldout = curve.heldout
    return words.penalty(
        update.collapses(curve, seeds), float(np.nanmin(heldout[:, 1:])), heldout[:, 0].tolist(), seeds
    )


def test_penalty_names_the_seed_that_collapsed_with_its_steps():
    made = _penalty(_curves([0.33, 0.30, 0.35], [0.41, 0.02, 0.48]))
    assert made == choice("one", words.PENALTY, seed1=1, high1=0.30, high_step1=0, low1=0.02, low_step1=60)
    assert str(made["values"]["high1"]) == "0.300"


def test_a_seed_that_ends_a_little_below_its_start_is_not_a_collapse():
    made = _penalty(_curves([0.33, 0.30, 0.35], [0.41, 0.294, 0.48]))
    assert made == choice("held", words.PENALTY, lowest=0.294, start="0.300–0.350")
    assert str(made["values"]["lowest"]) == "0.294"


def test_three_collapses_are_given_as_lists_in_seed_order():
    made = _penalty(_curves([0.33, 0.30, 0.35], [0.1, 0.02, 0.03]))
    assert made == choice(
        "more", words.PENALTY, seeds="every seed", highs="0.330, 0.300 and 0.350", high_steps="0, 0 and 0",
        lows="0.100, 0.020 and 0.030", low_steps="60, 60 and 60",
    )  # fmt: skip


def test_collapses_finds_the_first_checkpoint_below_half_the_start_on_each_seed():
    heldout = np.array([[0.3, 0.4, 0.1, 0.05], [0.3, 0.35, 0.3, np.nan], [0.4, 0.19, 0.3, 0.3]])
    curve = Curves("ppo-kl", "", np.array([0, 10, 20, 30]), heldout, np.zeros((3, 30)), np.zeros((3, 30)))
    assert update.collapses(curve, (0, 1, 2)) == [
        {"seed": 0, "from_step": 10, "from": 0.4, "step": 20, "to": 0.1},
        {"seed": 2, "from_step": 0, "from": 0.4, "step": 10, "to": 0.19},
    ]
    made = _penalty(curve)
    assert made == choice(
        "two", words.PENALTY, seed1=0, high1=0.4, high_step1=10, low1=0.1, low_step1=20,
        seed2=2, high2=0.4, high_step2=0, low2=0.19, low_step2=10,
    )  # fmt: skip


def _evals(values: dict[int, float]) -> list[dict]:
    return [{"step": step, "heldout_expected_reward": value} for step, value in values.items()]


def test_equal_updates_compares_ppo_with_main_after_as_many_optimiser_steps():
    heldout = np.array([[0.3, 0.5, 0.6], [0.3, 0.45, 0.55], [0.3, np.nan, np.nan]])
    ppo = Curves("ppo", "", np.array([0, 10, 20]), heldout, np.zeros((3, 20)), np.zeros((3, 20)))
    mains = [_evals({0: 0.3, 10: 0.35, 20: 0.4, 40: 0.52, 50: 0.6}) for _ in range(3)]
    equal = update.equal_updates(ppo, mains, 4)
    assert equal == {
        "updates": 40,
        "ppo_step": 10,
        "ppo": pytest.approx(0.475),
        "main": pytest.approx(0.52),
        "order": "below",
    }
    made = words.compared(equal, 50)
    assert made == choice("below", words.COMPARED, updates=40, ppo_step=10, main_steps=50, ppo=0.475, main=0.52)
    assert str(made["values"]["ppo"]) == "0.475"


@pytest.mark.parametrize(("ppo", "order"), [((0.6, 0.62), "above"), ((0.5, 0.6), "overlapping")])
def test_equal_updates_orders_the_seeds_of_the_two_runs(ppo, order):
    heldout = np.array([[0.3, ppo[0]], [0.3, ppo[1]]])
    curve = Curves("ppo", "", np.array([0, 10]), heldout, np.zeros((2, 10)), np.zeros((2, 10)))
    mains = [_evals({0: 0.3, 40: 0.52}), _evals({0: 0.3, 40: 0.55})]
    assert update.equal_updates(curve, mains, 4)["order"] == order


def test_equal_updates_without_a_shared_count_says_so():
    ppo = Curves("ppo", "", np.array([0, 10]), np.array([[0.3, 0.5]]), np.zeros((1, 10)), np.zeros((1, 10)))
    assert update.equal_updates(ppo, [_evals({0: 0.3, 10: 0.4})], 4) is None
    assert words.compared(None, 10) == choice("unshared", words.COMPARED)


def test_furthest_names_the_seeds_where_the_run_went_furthest_and_the_furthest_run_without_a_penalty():
    seeds = (0, 1, 2)
    kl = {"main": 0.18, "cispo": 0.54, "ppo-kl": 1.35}
    by_seed = {"main": [0.15, 0.32, 0.16], "cispo": [0.47, 0.73, 0.38], "ppo-kl": [0.15, 3.67, math.nan]}
    made = words.furthest(kl, by_seed, {"ppo-kl"}, seeds)
    assert made == choice(
        "penalised", words.FURTHEST, run="`ppo-kl`", kl=1.35, where="seed 1", free="`cispo`", free_kl=0.54
    )
    assert str(made["values"]["kl"]) == "1.350"
    made = words.furthest(kl, by_seed, set(), seeds)
    assert made == choice("unpenalised", words.FURTHEST, run="`ppo-kl`", kl=1.35, where="seed 1")
    kl["ppo-kl"] = 0.2
    made = words.furthest(kl, by_seed, {"ppo-kl"}, seeds)
    assert made == choice("unpenalised", words.FURTHEST, run="`cispo`", kl=0.54, where="seeds 0 and 2")


def test_table_4_2_gives_a_dash_for_a_loss_that_neither_clips_nor_caps():
    curves = {name: _curves([0.3, 0.3, 0.3], [0.4, 0.4, 0.4]) for name in ("pg", "cispo")}
    rows = update._results(curves)
    assert [r["clipped or capped"] for r in rows] == [None, 0.0]
    assert all("clipped" not in r for r in rows)


def test_the_page_words_every_case_of_every_choice_and_the_words_read_clean():
    page = page_wordings((ROOT / update.PAGE).read_text(encoding="utf-8"))
    for name, cases in (
        ("ratio_drift", words.DRIFT),
        ("cap_binds", words.CAP),
        ("agreed_with_main", words.AGREED),
        ("lost_seeds", words.LOST),
        ("stops", words.STOPS),
        ("penalty", words.PENALTY),
        ("equal_updates", words.COMPARED),
        ("furthest", words.FURTHEST),
    ):
        assert set(page[name]) == set(cases), name
        assert not any(prose.degenerate(w) for w in page[name].values()), name


def test_the_kl_toy_gives_a_table_with_signless_zeros_and_each_gradient_named():
    toy = update._kl_toy()
    assert len(toy["table"]) == 9
    zeros = [row[k] for row in toy["table"] for k in ("mean", "bias", "gradient error") if row[k] == 0]
    assert zeros and all(math.copysign(1.0, z) == 1.0 for z in zeros)  # printed "0.000", never "-0.000"
    assert {r["bias"] for r in toy["table"] if r["estimator"] == "k3" and r["samples"] == "fresh"} == {0.0}
    assert toy["gradient_of"]["k3|fresh"] == toy["reverse"] and toy["reward_of"]["fresh"] == toy["true"]
    assert toy["outcomes"] == "five" and str(toy["kl"]).startswith("0.")


def test_a_seed_the_guard_stopped_is_lost_and_the_others_are_judged_by_their_ends():
    main = Curves(
        "main", "", np.array([0, 60]), np.array([[0.3, 0.8], [0.3, 0.7], [0.3, 0.9]]), *[np.zeros((3, 60))] * 2
    )
    heldout = np.array([[0.3, 0.75], [0.3, np.nan], [0.3, 0.4]])  # seed 1 stopped before the end, seed 2 fell
    stopped = Curves("ppo-kl", "", np.array([0, 60]), heldout, *[np.zeros((3, 60))] * 2, stopped={1: 31})
    assert update._lost({"main": main, "ppo-kl": stopped}, 0.05, (0, 1, 2)) == {"ppo-kl": [1, 2]}
