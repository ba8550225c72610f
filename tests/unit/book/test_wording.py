"""rlbook.book.wording: the page words every case of a sentence, the facts choose the case that happened."""

from __future__ import annotations

import pytest

from rlbook.book import facts, wording
from rlbook.book.facts import Num

CASES = ("every", "some")
PAGE = {"every": "The loophole took over on every seed.", "some": "It took over on {taken}, at most {peak}."}


def _facts(case: str, **values) -> facts.Facts:
    return facts.freeze({"takeover": wording.choice(case, CASES, **values)})


def test_the_case_that_happened_is_worded_with_its_values_formatted_as_the_facts_say():
    F = _facts("some", taken="seeds 0 and 2", peak=Num(0.0412, ".0%"))
    said = F.say("takeover", **PAGE)
    assert said == "It took over on seeds 0 and 2, at most 4%." and said._repr_markdown_() == said


def test_a_case_the_page_does_not_word_fails_even_when_another_case_happened():
    with pytest.raises(wording.WordingError, match=r"missing: some"):
        _facts("every").say("takeover", every=PAGE["every"])
    with pytest.raises(wording.WordingError, match=r"no such case: none"):
        _facts("every").say("takeover", **PAGE, none="never")


def test_a_wording_that_prints_a_value_the_choice_lacks_is_refused_with_what_it_holds():
    with pytest.raises(wording.WordingError, match=r"prints peak; the choice holds taken"):
        _facts("some", taken="seed 1").say("takeover", **PAGE)


def test_a_selector_cannot_choose_an_undeclared_case_or_declare_one_twice():
    with pytest.raises(ValueError, match="not one of the declared cases"):
        wording.choice("none", CASES)
    with pytest.raises(ValueError, match="one case twice"):
        wording.choice("every", ("every", "every"))


def test_fields_are_the_names_a_wording_prints():
    assert wording.fields("from {start} to {end:.2f}, {{braces}}") == {"start", "end"}
