"""Chapter 1's sample panel end to end in headless Chromium, opened from file:// with no network.

The page is the chapter's own panel markup (its raw HTML blocks) with the
site files of rlbook.publish.webworkshop beside it, laid out as in the book.
The lab on the same page has its own tests (test_workshop_lab.py).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rlbook import rewards, runs
from rlbook.bench import browser as bench
from rlbook.core.verdicts import VERDICT_WORDS
from rlbook.publish import checkpoints

LABELS = VERDICT_WORDS  # the panels name each verdict as the figures do
READOUT = re.compile(
    r"Expected reward (\d\.\d\d): (\d+) of 32 answers right \(95 % Wilson interval (\d\.\d\d) to "
    r"(\d\.\d\d)\)"
)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """Chapter 1's page with its panel blocks, the workshop's files beside it (as the bench lays them)."""
    pages = bench.write_site(tmp_path_factory.mktemp("site"))
    assert pages["sample"][0] == pages["lab"][0], "chapter 1 holds the sample panel and the lab"
    return pages["sample"][0]


def _unshown(text: str) -> str:
    """A completion from the text a chip shows (spaces and newlines are drawn visibly)."""
    return text.replace("\u2423", " ").replace("\\n", "\n")


def _check_answers(page, prompt: str) -> None:
    chips = page.locator("[data-panel=sample] .rw-chip")
    assert chips.count() == 32
    exact = rewards.get_verifier("exact")
    for text, label in zip(chips.all_inner_texts(), [c.get_attribute("title") for c in chips.all()]):
        assert label == LABELS[exact(prompt, _unshown(text)).status], (prompt, text, label)
    value, right, lo, hi = READOUT.search(page.inner_text("[data-panel=sample] .rw-readout")).groups()
    assert abs(float(value) - int(right) / 32) <= 0.005 + 1e-9 and float(lo) <= float(value) <= float(hi)


def test_sampling_shows_32_answers_judged_as_rlbook_judges_them_and_an_expected_reward(page, site):
    page.goto(site.as_uri())
    page.wait_for_function("document.querySelectorAll('[data-panel=sample] .rw-chip').length === 32")
    _check_answers(page, "U:5+6?|A:")
    sample = page.locator("[data-panel=sample]")
    heldout = sample.locator(".rw-sum.rw-heldout").first
    a, b = re.match(r"(\d) \+ (\d), held out", heldout.get_attribute("aria-label")).groups()
    heldout.click()
    sample.get_by_label("main (after RL)").check()
    sample.get_by_label("temperature").fill("0.5")
    shown = sample.locator(".rw-prompt").inner_text()
    assert shown.startswith(f"U:{a}+{b}?|A:") and "T = 0.5, main" in shown
    _check_answers(page, f"U:{a}+{b}?|A:")
    main = runs.load("main", checkpoints.SEED).log["checkpoints"][-1]
    assert sample.locator(".rw-identity").inner_text() == f"{main['version']} · weights hash {main['weights_hash']}"
    assert not page.log.refused
