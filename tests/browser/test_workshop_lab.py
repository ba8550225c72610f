"""Chapter 1's lab end to end in headless Chromium, opened from file:// with no network.

The page holds the chapter's own panel blocks with the site files of
rlbook.publish.webworkshop beside it, laid out as in the book (the bench
writes the same pages). What the page shows is checked against rlbook: the
verdicts, the probabilities before and after a step (from the very weights
the page trained, loaded into rlbook's policy), the weights hash of "this
run" in the sample panel, and the recipe a setting names.
"""

from __future__ import annotations

import math
import statistics

import numpy as np
import pytest
import torch

from rlbook import policy as policy_lib
from rlbook import rewards, runs, workshop
from rlbook.bench import browser as bench
from rlbook.core.verdicts import VERDICT_WORDS
from rlbook.publish import checkpoints

LAB = "document.querySelector('[data-panel=lab]')"
LABELS = VERDICT_WORDS
"""What the panels call each verifier status: the book's one vocabulary."""


@pytest.fixture(scope="module")
def workshop_data() -> dict:
    """What the pages are given (rlbook.publish.checkpoints, from the run cache)."""
    return checkpoints.export_data()


@pytest.fixture(scope="module")
def panels(tmp_path_factory, workshop_data):
    """The book's pages with panels, holding only their blocks, and the workshop's files (as the bench lays them)."""
    return bench.write_site(tmp_path_factory.mktemp("site"), workshop_data)


def _open(page, panels):
    page.goto(panels["lab"][0].as_uri())
    page.wait_for_function(
        f"{LAB}.dataset.ready === 'true' && {LAB}.querySelectorAll('.rw-chip').length === 32 && "
        "document.querySelectorAll('[data-panel=sample] .rw-chip').length === 32"
    )
    return page.locator("[data-panel=lab]")


def _steps(page) -> int:
    return int(page.evaluate(f"{LAB}.dataset.steps"))


def _wait_steps(page, n: int, timeout: float = 120_000) -> None:
    page.wait_for_function(f"Number({LAB}.dataset.steps) >= {n}", timeout=timeout)


def _policy(flat, tensors) -> policy_lib.Policy:
    """rlbook's policy holding the page's weights (a flat float32 array in the export's tensor order)."""
    net = runs.load("base", checkpoints.SEED).policy()
    sizes = [int(np.prod(shape)) for _, shape in tensors]
    parts = np.split(np.asarray(flat, dtype=np.float32), np.cumsum(sizes)[:-1])
    net.load_state_dict({name: torch.tensor(part).reshape(shape) for (name, shape), part in zip(tensors, parts)})
    return net


def _snapshot(page, step: int) -> list[float]:
    return page.evaluate(f"Array.from({LAB}.workshopRun.snapshots[{step}])")


def test_one_step_at_a_time_shows_what_the_step_did_to_the_watched_sum(page, panels, workshop_data):
    lab = _open(page, panels)
    heldout = lab.locator(".rw-sum.rw-heldout").nth(3)
    heldout.click()
    # The click updates the panel asynchronously: wait until it shows a held-out sum, not read the old one.
    page.wait_for_function(
        f"(held) => held.includes({LAB}.querySelector('.rw-prompt').textContent.trim().split(/\\s+/)[0])"
        f" && {LAB}.querySelectorAll('.rw-chip').length === 32",
        arg=workshop_data["splits"]["heldout"],
    )
    prompt = page.evaluate(f"{LAB}.querySelector('.rw-prompt').textContent").split()[0]
    assert prompt in workshop_data["splits"]["heldout"]
    exact = rewards.get_verifier("exact")
    titles = [c.get_attribute("title") for c in lab.locator(".rw-chip").all()]
    texts = [t.replace("\u2423", " ").replace("\\n", "\n") for t in lab.locator(".rw-chip").all_inner_texts()]
    assert titles == [LABELS[exact(prompt, t).status] for t in texts]

    lab.get_by_role("button", name="Step", exact=True).click()
    _wait_steps(page, 1)
    page.wait_for_timeout(800)
    assert _steps(page) == 1 and page.evaluate(f"{LAB}.dataset.state") == "paused"
    lab.get_by_role("button", name="Step", exact=True).click()
    _wait_steps(page, 2)
    record = page.evaluate(f"{LAB}.workshopRun.steps[1].watch")
    assert record["prompt"] == prompt and not record["trained"] and len(record["answers"]) == 32
    before, after = (_policy(_snapshot(page, k), workshop_data["tensors"]) for k in (1, 2))
    # The page computes in float32 with its own summation order, PyTorch with vector kernels that differ by
    # machine: on an AVX-512 machine (CI's) an answer's probability differed by 2.6e-5 of itself.
    for answer in record["top"]:
        assert answer["advantage"] is None and answer["count"] == 0, "a held-out sum is in no batch"
        assert math.isclose(
            answer["before"], workshop.answer_probability(before, prompt, answer["completion"]), rel_tol=1e-4
        )
        assert math.isclose(
            answer["after"], workshop.answer_probability(after, prompt, answer["completion"]), rel_tol=1e-4
        )
    assert lab.locator(".rw-move").count() == len(record["top"]) + 1  # a header row, then one row per answer
    assert "held out" in lab.locator(".rw-watch .rw-key").last.inner_text()
    assert not page.log.refused


def test_the_pace_is_the_readers_and_a_pause_takes_effect_within_one_step(page, panels):
    lab = _open(page, panels)
    lab.get_by_label("1 step a second").check()
    lab.get_by_role("button", name="Train", exact=True).click()
    _wait_steps(page, 3)
    lab.get_by_label("5 a second").check()
    _wait_steps(page, 7)
    # The page asks for each step at the pace chosen (a step that takes longer than the pace delays the next).
    asked = page.evaluate(f"{LAB}.workshopRun.timing.asked")
    slow, fast = np.diff(asked[:3]), np.diff(asked[4:7])
    assert slow.min() >= 999, f"at 1 step a second, steps asked for {slow} ms apart"
    assert fast.min() >= 199 and statistics.median(fast) < 900, f"at 5 a second, steps asked for {fast} ms apart"

    lab.get_by_label("as fast as it goes").check()
    _wait_steps(page, 12)
    lab.get_by_role("button", name="Pause", exact=True).click()
    at_pause = page.evaluate(f"{LAB}.workshopRun.timing.stepsAtPause")
    page.wait_for_timeout(1500)
    assert _steps(page) <= at_pause + 1, "only a step under way when the pause came may still arrive"
    assert page.evaluate(f"{LAB}.dataset.state") == "paused"
    settled = _steps(page)
    lab.get_by_role("button", name="Train", exact=True).click()
    _wait_steps(page, settled + 2)
    assert page.evaluate(f"{LAB}.dataset.state") == "running"
    assert not page.log.refused


def test_a_changed_recipe_says_what_it_is_and_trains_with_it(page, panels, workshop_data):
    lab = _open(page, panels)
    assert lab.locator(".rw-about").inner_text().startswith("The recipe of the book's main run")
    links = lab.locator(".rw-setting a")
    assert links.count() >= 4 and all(a.get_attribute("href").split("#")[1].startswith("sec-") for a in links.all())
    lab.get_by_label("none: each answer's advantage is its reward (plain REINFORCE)").check()
    lab.get_by_label("4", exact=True).check()
    about = lab.locator(".rw-about").inner_text()
    assert about.startswith(
        "No run of the book used this recipe: it is main's with a different group size and baseline."
    )
    lab.get_by_role("button", name="Step", exact=True).click()
    _wait_steps(page, 1)
    record = page.evaluate(f"{LAB}.workshopRun.steps[0].watch")  # the lab opens on base's least sure training sum
    assert record["prompt"] in workshop_data["splits"]["train"] and record["trained"] and record["groupSize"] == 4
    drawn = [t for t in record["top"] if t["count"]]
    assert drawn and all(t["advantage"] == t["reward"] for t in drawn), "no baseline: the advantage is the reward"
    assert page.evaluate(f"{LAB}.workshopRun.recipe.group_size") == 4


def _loophole_run(page, lab, seed: int, steps: int) -> int | None:
    """Train the lab's current recipe with ``seed`` at full speed; the first step whose batch the loophole paid
    more than half of (None if none within ``steps``)."""
    lab.get_by_label("random seed").fill(str(seed))
    lab.get_by_label("random seed").dispatch_event("change")
    lab.get_by_label("as fast as it goes").check()
    lab.get_by_role("button", name="Train", exact=True).click()
    page.wait_for_function(
        f"(() => {{ const r = {LAB}.workshopRun; return r.seed === {seed} && "
        f"(r.steps.some(s => s.loopholeShare > 0.5) || r.steps.length >= {steps}); }})()",
        timeout=300_000,
    )
    shares = page.evaluate(f"{LAB}.workshopRun.steps.map(s => s.loopholeShare)")
    return next((k + 1 for k, share in enumerate(shares) if share > 0.5), None)


def test_against_the_fail_open_verifier_the_loophole_takes_over_as_in_the_books_exploit_run(
    page, panels, workshop_data
):
    """At chapter 5's exploit settings the loophole passes half of a batch, within the exploit run's steps, on at
    least two of three page seeds (the book's own seeds took over at the steps the data names)."""
    lab = _open(page, panels)
    lab.get_by_label("0.001 with no warm-up (exploit)").check()
    lab.get_by_label("fail-open: also any answer Python's int() cannot read (exploit)").check()
    assert lab.locator(".rw-about").inner_text().startswith("The recipe of the book's exploit run")
    steps = runs.spec("exploit").rl.steps
    assert page.evaluate(f"{LAB}.workshopRun.recipe.steps") == steps
    takeovers = {seed: _loophole_run(page, lab, seed, steps) for seed in (1, 2, 3)}
    book = [r["takeover"] for r in workshop_data["references"]["exploit"]]
    print(f"loophole past one half at steps {takeovers} on the page; the book's exploit seeds 0-2: {book}")
    assert sum(t is not None for t in takeovers.values()) >= 2, takeovers
    assert lab.locator(".rw-charts path.rw-s3").count() == 1, "the loophole's share is drawn"
    assert not page.log.refused


def test_the_sample_panel_samples_the_run_just_trained(page, panels, workshop_data):
    lab = _open(page, panels)
    sample = page.locator("[data-panel=sample]")
    assert not sample.get_by_label("this run (trained in the lab below)").is_visible()
    for k in (1, 2, 3):
        lab.get_by_role("button", name="Step", exact=True).click()
        _wait_steps(page, k)
    sample.get_by_label("this run (trained in the lab below)").check()
    assert sample.get_by_label("step of this run").input_value() == "3", "this run is picked at its latest step"
    sample.get_by_label("step of this run").fill("2")
    page.wait_for_function(
        "document.querySelector('[data-panel=sample] .rw-identity').textContent.includes('at step 2 ')"
    )
    net = _policy(_snapshot(page, 2), workshop_data["tensors"])
    seed = page.evaluate(f"{LAB}.workshopRun.seed")
    assert sample.locator(".rw-identity").inner_text() == (
        f"this run (random seed {seed}) at step 2 · weights hash {policy_lib.weights_hash(net)}"
    )
    assert sample.locator(".rw-prompt").inner_text().endswith("this run at step 2")
    prompt = sample.locator(".rw-prompt").inner_text().split()[0]
    exact = rewards.get_verifier("exact")
    chips = sample.locator(".rw-chip")
    assert chips.count() == 32
    for text, title in zip(chips.all_inner_texts(), [c.get_attribute("title") for c in chips.all()]):
        assert title == LABELS[exact(prompt, text.replace("\u2423", " ").replace("\\n", "\n")).status]
    lab.get_by_role("button", name="New run", exact=True).click()
    assert not sample.get_by_label("this run (trained in the lab below)").is_visible()
    assert sample.locator(".rw-prompt").inner_text().endswith(", base")


def test_a_full_run_states_its_held_out_reward_beside_mains_seeds(page, panels):
    lab = _open(page, panels)
    lab.get_by_label("as fast as it goes").check()
    lab.get_by_role("button", name="Train", exact=True).click()
    page.wait_for_function(
        f"{LAB}.dataset.state === 'done' && {LAB}.querySelector('.rw-summary').textContent", timeout=600_000
    )
    run = page.evaluate(f"{LAB}.workshopRun.evals.map(e => [e.step, e.heldoutExpectedReward])")
    cfg = runs.spec("main").rl
    assert [s for s, _ in run] == sorted({0, *range(cfg.checkpoint_every, cfg.steps + 1, cfg.checkpoint_every)})
    finals = [runs.load("main", s).evals[-1]["heldout_expected_reward"] for s in checkpoints.REFERENCE_SEEDS]
    summary = lab.locator(".rw-summary").inner_text()
    assert f"held-out expected reward is {run[-1][1]:.2f}, from {run[0][1]:.2f} at step 0" in summary
    printed = [f"{f:.2f}" for f in finals]  # compared as printed, as the page compares them
    low, high, mine = min(map(float, printed)), max(map(float, printed)), float(f"{run[-1][1]:.2f}")
    seeds = checkpoints.REFERENCE_SEEDS
    if low == high:
        assert f"ended at {printed[0]} on each of seeds {_listed(seeds)}" in summary
    else:
        assert f"ended at {_listed(printed)} on seeds {_listed(seeds)}" in summary
        where = "above all of them" if mine > high else "below all of them" if mine < low else "within their range"
        assert f"this run ended {where}" in summary
    assert lab.locator(".rw-charts circle").count() == len(run)


def _listed(items) -> str:
    """Items as the page lists them: "a, b and c"."""
    texts = [str(item) for item in items]
    return texts[0] if len(texts) < 2 else f"{', '.join(texts[:-1])} and {texts[-1]}"
