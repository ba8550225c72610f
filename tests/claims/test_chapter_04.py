"""Chapter 4's claims about its runs hold for seeds 0, 1 and 2.

Each test recomputes a claim the chapter asserts, through the same
``rlbook.analysis.audit`` functions. Claims on ``base``, ``main`` and ``exploit`` run
for every seed; those that need the chapter's other runs (``stale``,
``accepted-only``, ``faults``, ``abort``) run for seed 0 and are marked slow
for seeds 1 and 2, which need those runs trained.
"""
from __future__ import annotations

import pytest

from rlbook import audit, passk, runs, world
from rlbook import rewards as rw
from rlbook.exercises import ch4

SEEDS = [0, 1, 2]
TEMPERATURES = [0.5, 1.0, 1.5, 2.0]
OTHER_SEEDS = [0, pytest.param(1, marks=pytest.mark.slow), pytest.param(2, marks=pytest.mark.slow)]


@pytest.mark.parametrize("seed", SEEDS)
def test_hack_is_diagnosed_on_every_seed(seed):
    """@tbl-hack-seeds: where the loophole took over, the detector names it and held-out accuracy did not rise;
    elsewhere the loophole stayed marginal and the detector does not blame the verifier."""
    exploit = runs.load("exploit", seed)
    report = audit.hack_report(exploit.evals)
    if audit.takeover_step(exploit.rollouts) is None:
        assert report.diagnosis != "exploited verifier"
        assert max(audit.loophole_share(exploit.rollouts)) < 0.05
        return
    assert report.diagnosis == "exploited verifier" and report.heldout_gain <= 0
    assert report.reward_gain > report.rise
    # The favourite exploit is an answer the exact verifier cannot parse: the fail-open loophole, whatever its text.
    assert audit.exploiting_completions(exploit.rollouts[-1], rw.get_verifier("fail-open"))[0]["status"] == "malformed"


def shown_seed() -> int | None:
    """The seed @sec-reward-hack shows: of those the loophole took over, the one whose held-out accuracy ended lowest."""
    exploits = {s: runs.load("exploit", s) for s in SEEDS}
    return audit.clearest_hacked_seed({s: r.rollouts for s, r in exploits.items()},
                                      {s: r.evals for s, r in exploits.items()})


def test_the_hack_took_over_on_some_seed():
    """@sec-reward-hack shows a seed on which it took over; there must be one."""
    assert shown_seed() is not None


def test_the_shown_hack_ends_with_the_loophole_paying_for_most_and_heldout_near_zero():
    """@fig-reward-hack's alt text and the prose below it, on the seed shown."""
    exploit = runs.load("exploit", shown_seed())
    report = audit.hack_report(exploit.evals)
    assert report.reward_gain > report.rise and report.heldout[-1] < 0.05
    assert audit.loophole_share(exploit.rollouts[-1:])[0] > 0.5


def test_the_shown_hack_followed_a_crash_in_wrong_sums_and_held_out_never_recovered():
    """@sec-reward-hack's route: the first update's crash was wrong sums, and held-out accuracy never came back."""
    exploit = runs.load("exploit", shown_seed())
    dip = audit.dip_before_takeover(exploit.rollouts)
    assert dip["right"] < dip["first_right"] / 2 and dip["share"] < 0.5
    heldout = audit.hack_report(exploit.evals).heldout
    assert max(heldout[1:]) < heldout[0]  # draws differ in how far it climbed back: 0.22 of 0.44 on one, 0.22 of 0.30 on another


@pytest.mark.parametrize("seed", SEEDS)
def test_detector_is_silent_on_main(seed):
    """@sec-independent-check: the honest run is not flagged, and its held-out accuracy rose."""
    report = audit.hack_report(runs.load("main", seed).evals)
    assert report.flagged_step is None and report.heldout_gain > 0


@pytest.mark.parametrize("seed", SEEDS)
def test_base_policy_samples_the_exploit_rarely(seed):
    """@sec-reward-hack: the exploit exists in the base policy's samples, but rarely."""
    prompts = [t.prompt for t in world.split("train")]
    rate = audit.loophole_rate(runs.load("base", seed).policy(), prompts, rw.get_verifier("fail-open"), n=64, seed=seed)
    assert rate < 0.1


@pytest.mark.parametrize("seed", SEEDS)
def test_temperature_trades_first_sample_against_coverage(seed):
    """@fig-pass-at-k: cool sampling wins pass@1, and T = 1 leaves no more never-right prompts than the cool one."""
    rows = audit.sparse_reward_audit(runs.load("base", seed).policy(), world.split("heldout"), TEMPERATURES,
                                     n=64, seed=seed)
    low, high = rows[0], rows[-1]
    assert low["pass_at_k"][0] > high["pass_at_k"][0] and high["tokens_per_sample"] > low["tokens_per_sample"]
    assert len(rows[1]["never_right"]) <= len(low["never_right"])
    g16 = low["ks"].index(16)
    assert low["pass_at_k"][-1] == min(r["pass_at_k"][-1] for r in rows)
    assert low["mixed"][g16] == min(r["mixed"][g16] for r in rows)


@pytest.mark.parametrize("seed", SEEDS)
def test_exploration_audit_claims(seed):
    """@fig-exploration-coverage: hotter sampling repeats less, is novel more often, and wastes more."""
    prompts = [t.prompt for t in world.split("train")]
    rows = audit.temperature_audit(runs.load("base", seed).policy(), prompts, TEMPERATURES, n=16, rounds=2, seed=seed)
    cool, hot = rows[0], rows[-1]
    junk = [r["malformed"] + r["budget-stopped"] for r in rows]
    assert cool["duplicate"] > hot["duplicate"] and junk[-1] > junk[0]
    assert cool["novel_share"] < hot["novel_share"] and all(r["accepted"] <= 1 / 16 for r in rows)


@pytest.mark.parametrize("seed", SEEDS)
def test_main_reward_gain_is_mostly_repeats(seed):
    """@fig-composition-main: the reward gain is mostly repeats of right answers; novelty falls."""
    trend = audit.sharpening(audit.run_composition(runs.load("main", seed).rollouts), window=10)
    assert trend["reward_gain"] > 0 and trend["repeat_gain"] > 0.5 * trend["reward_gain"]
    assert trend["novel_late"] < trend["novel_early"]


@pytest.mark.parametrize("seed", SEEDS)
def test_rl_brings_out_part_of_what_pretraining_knew(seed):
    """@tbl-sharpening-limit: RL closes part of the gap to the pretrained policy's own-format accuracy."""
    heldout, rl_run = world.split("heldout"), runs.load("main", seed)
    own = audit.own_format_accuracy(runs.load("base", seed).policy(0), heldout, seed=seed).mean()
    before, after = rl_run.evals[0]["heldout_expected_reward"], rl_run.evals[-1]["heldout_expected_reward"]
    assert before < after and before < own
    assert audit.own_format_accuracy(rl_run.policy(), heldout, seed=seed).mean() < own


def test_at_mains_learning_rate_the_loophole_takes_over_on_fewer_seeds():
    """@tbl-hack-lr: exploit-slow (main's learning rate and warm-up) has fewer takeovers than exploit."""
    taken = {n: sum(audit.takeover_step(runs.load(n, s).rollouts) is not None for s in SEEDS)
             for n in ("exploit", "exploit-slow")}
    assert taken["exploit-slow"] < taken["exploit"], taken


@pytest.mark.parametrize("seed", OTHER_SEEDS)
def test_stale_rollouts_are_clipped_more(seed):
    """@fig-stale: learning from 4-step-old rollouts clips more tokens than on-policy learning."""
    main, stale = runs.load("main", seed), runs.load("stale", seed)
    horizon = stale.steps[-1]
    clip = {n: sum(m["clip_fraction"] for m in r.metrics[4:horizon]) for n, r in [("main", main), ("stale", stale)]}
    assert clip["stale"] > clip["main"]


@pytest.mark.parametrize("seed", OTHER_SEEDS)
def test_selection_rule_is_recorded_with_its_counts(seed):
    """@tbl-selection: keep-accepted drops rollouts, and the record says how many."""
    picky = runs.load("accepted-only", seed)
    counts = audit.selection_counts(picky.rollouts)
    assert counts["kept"] < counts["generated"]
    assert picky.record["selection_rule"] == "keep accepted"
    assert picky.record["rollouts_before_filtering"] == counts["generated"]


@pytest.mark.parametrize("seed", OTHER_SEEDS)
def test_faults_are_recorded_with_trigger_and_rollouts(seed):
    """@tbl-incidents: each injected fault gives one intervention, visible in the stored batch and the record."""
    faults = runs.load("faults", seed)
    events = audit.incidents(faults.log)
    assert [e["step"] for e in events] == [s for s, _ in runs.spec("faults").rl.faults]
    assert events[0]["unverifiable_share"] == 1.0 and events[1]["malformed_share"] > 0.5
    assert events[2]["aborted_update"] == "non-finite loss"
    assert faults.record["interventions"] == faults.log["interventions"]


@pytest.mark.parametrize("seed", OTHER_SEEDS)
def test_abort_run_stops_and_says_so(seed):
    aborted = runs.load("abort", seed)
    assert aborted.record["status"] == "aborted"
    assert aborted.log["abort"]["step"] < runs.spec("abort").rl.steps


@pytest.mark.parametrize("seed", OTHER_SEEDS)
def test_reference_abort_rule_on_every_seed(seed):
    """Exercise 13's reference rule passes its own check on every seed."""
    assert ch4.check_abort_rule(ch4.reference_abort_rule, seed=seed).passed


@pytest.fixture(scope="module")
def before_after(one_thread):
    """@fig-pass-at-k-rl's comparison: base and main's last checkpoint, 256 samples per held-out sum, each seed."""
    heldout, ks = world.split("heldout"), [2 ** i for i in range(9)]
    return {s: passk.pass_at_k_before_after(runs.load("base", s).policy(), runs.load("main", s).policy(), heldout,
                                            n=256, ks=ks, seed=s) for s in SEEDS}


@pytest.mark.parametrize("seed", SEEDS)
def test_rl_raises_pass_at_1_and_its_lead_shrinks_by_256_samples(before_after, seed):
    """@sec-pass-at-k-rl: at equal budgets, main's lead over base is over 0.1 at k = 1 and smaller at k = 256."""
    cmp = before_after[seed]
    assert cmp.gap[0] > 0.1 and cmp.gap[-1] < cmp.gap[0]


@pytest.mark.parametrize("seed", SEEDS)
def test_most_of_the_rise_in_pass_at_1_is_on_sums_base_solved(before_after, seed):
    """@sec-pass-at-k-rl: more than half the rise in pass@1 lies on sums base solved at least once in 256 samples."""
    assert before_after[seed].gain_on_solved > 0.5


@pytest.mark.parametrize("seed", OTHER_SEEDS)
def test_rejection_sampling_fine_tuning_learns_and_ends_near_main(seed):
    """@sec-selection: accepted-only raises held-out expected reward by over 0.1 by step 60 and ends within 0.1
    of main there."""
    main, picky = runs.load("main", seed), runs.load("accepted-only", seed)
    end = picky.eval_at(60)["heldout_expected_reward"]
    assert end - picky.evals[0]["heldout_expected_reward"] > 0.1
    assert abs(end - main.eval_at(60)["heldout_expected_reward"]) < 0.1
