"""Chapter 1's web workshop end to end in headless Chromium, opened from file:// with no network.

The page is the chapter's own workshop markup (its raw HTML blocks) with the
site files of rlbook.publish.webworkshop beside it, laid out as in the book.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from rlbook import rewards, runs
from rlbook.publish import checkpoints, webworkshop

CHAPTER = Path(__file__).resolve().parents[2] / "chapters" / "01-rl-loop.qmd"
LABELS = {"accepted": "right", "incorrect": "wrong", "malformed": "malformed", "incomplete": "stopped by the budget"}
READOUT = re.compile(r"Expected reward (\d\.\d\d): (\d+) of 32 answers right \(95 % Wilson interval (\d\.\d\d) to "
                     r"(\d\.\d\d)\)")


@pytest.fixture(scope="session")
def site(tmp_path_factory) -> Path:
    """Chapter 1's workshop blocks in a page at chapters/01-rl-loop.html, the workshop's files in workshop/."""
    root = tmp_path_factory.mktemp("site")
    webworkshop.write_assets(root)
    blocks = webworkshop.page_blocks(CHAPTER.read_text())
    assert [b.count('data-panel="') for b in blocks] == [1, 1], "chapter 1 holds one sample and one train panel"
    page = root / "chapters" / "01-rl-loop.html"
    page.parent.mkdir()
    page.write_text("<!doctype html><html><head><meta charset='utf-8'><title>Chapter 1</title></head><body>"
                    + "<p>Prose between the panels.</p>".join(blocks) + "</body></html>")
    return page


def _unshown(text: str) -> str:
    """A completion from the text a chip shows (spaces and newlines are drawn visibly)."""
    return text.replace("\u2423", " ").replace("\\n", "\n")


def _check_answers(page, prompt: str) -> None:
    chips = page.locator(".rw-chip")
    assert chips.count() == 32
    exact = rewards.get_verifier("exact")
    for text, label in zip(chips.all_inner_texts(), [c.get_attribute("title") for c in chips.all()]):
        assert label == LABELS[exact(prompt, _unshown(text)).status], (prompt, text, label)
    value, right, lo, hi = READOUT.search(page.inner_text(".rw-readout")).groups()
    assert abs(float(value) - int(right) / 32) <= 0.005 + 1e-9 and float(lo) <= float(value) <= float(hi)


def test_sampling_shows_32_answers_judged_as_rlbook_judges_them_and_an_expected_reward(page, site):
    page.goto(site.as_uri())
    page.wait_for_function("document.querySelectorAll('.rw-chip').length === 32")
    _check_answers(page, "U:5+6?|A:")
    heldout = page.locator(".rw-sum.rw-heldout").first
    a, b = re.match(r"(\d) \+ (\d), held out", heldout.get_attribute("aria-label")).groups()
    heldout.click()
    page.get_by_label("main (after RL)").check()
    page.get_by_label("temperature").fill("0.5")
    assert page.inner_text(".rw-prompt").startswith(f"U:{a}+{b}?|A:") and "T = 0.5, main" in page.inner_text(".rw-prompt")
    _check_answers(page, f"U:{a}+{b}?|A:")
    main = runs.load("main", checkpoints.SEED).log["checkpoints"][-1]
    assert page.inner_text(".rw-identity") == f"{main['version']} · weights hash {main['weights_hash']}"
    assert not page.log.refused


def _run(page) -> dict:
    return page.evaluate("(() => { const r = document.querySelector('[data-panel=train]').workshopRun;"
                         " return {state: r.state, seed: r.seed, steps: r.steps.map(s => s.rewardMean),"
                         " evals: r.evals.map(e => [e.step, e.heldoutExpectedReward])}; })()")


def test_a_short_training_run_raises_the_training_reward_and_pauses_resumes_and_resets(page, site):
    page.goto(site.as_uri())
    train = page.locator("[data-panel=train]")
    page.get_by_role("button", name="Train", exact=True).click()
    page.wait_for_function("document.querySelector('[data-panel=train]').workshopRun.steps.length >= 30",
                           timeout=120_000)
    page.get_by_role("button", name="Pause", exact=True).click()
    page.wait_for_timeout(300)  # a step under way when the pause arrived still reports
    paused = _run(page)
    page.wait_for_timeout(1000)
    assert _run(page)["steps"] == paused["steps"] and train.get_attribute("data-state") == "paused"
    steps = paused["steps"]
    assert sum(steps[-5:]) / 5 > sum(steps[:5]) / 5, steps
    assert [s for s, _ in paused["evals"]][:4] == [0, 10, 20, 30]
    assert all(0 <= v <= 1 for _, v in paused["evals"])
    assert train.locator("circle").count() == len(paused["evals"])
    page.get_by_role("button", name="Resume", exact=True).click()
    page.wait_for_function(f"document.querySelector('[data-panel=train]').workshopRun.steps.length > {len(steps)}")
    page.get_by_role("button", name="Reset", exact=True).click()
    fresh = _run(page)
    assert fresh["state"] == "ready" and fresh["steps"] == [] and fresh["seed"] != paused["seed"]
    assert not page.log.refused


def test_a_full_run_states_its_held_out_reward_beside_mains_seeds(page, site):
    page.goto(site.as_uri())
    page.get_by_role("button", name="Train", exact=True).click()
    page.wait_for_function("document.querySelector('[data-panel=train]').dataset.state === 'done'", timeout=300_000)
    run = _run(page)
    finals = [runs.load("main", s).evals[-1]["heldout_expected_reward"] for s in checkpoints.REFERENCE_SEEDS]
    assert len(run["steps"]) == runs.spec("main").rl.steps
    assert run["evals"][-1][0] == runs.spec("main").rl.steps
    summary = page.inner_text(".rw-summary")
    assert f"held-out expected reward is {run['evals'][-1][1]:.2f}" in summary
    assert f"between {min(finals):.2f} and {max(finals):.2f}" in summary
    assert all(f"{s}: {f:.2f}" in summary for s, f in zip(checkpoints.REFERENCE_SEEDS, finals))
