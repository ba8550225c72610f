"""rlbook.core.verdicts: one word for each verifier status, and the workshop's panels use the same words."""

from __future__ import annotations

import re
from pathlib import Path

from rlbook.core import verdicts
from rlbook.core.rewards import STATUSES
from rlbook.core.verdicts import VERDICT_WORDS

WORKSHOP_DOM = Path(verdicts.__file__).resolve().parents[1] / "publish" / "assets" / "workshop" / "dom.js"


def test_one_word_for_each_verdict_with_the_budget_named():
    assert set(STATUSES) <= set(VERDICT_WORDS)
    assert VERDICT_WORDS["incomplete"] == "stopped by the budget"
    words = list(VERDICT_WORDS.values())
    assert len(set(words)) == len(words)


def test_the_web_workshop_calls_each_verdict_what_the_figures_call_it():
    # The workshop's panels label answers with dom.js's VERDICTS: the same words as the book's figures and tables.
    source = WORKSHOP_DOM.read_text(encoding="utf-8")
    block = re.search(r"export const VERDICTS = \{(.*?)\};", source, re.DOTALL)
    assert block, "dom.js no longer defines VERDICTS"
    workshop = dict(re.findall(r"(\w+):\s*\"([^\"]*)\"", block.group(1)))
    assert workshop == {status: VERDICT_WORDS[status] for status in workshop}, workshop
