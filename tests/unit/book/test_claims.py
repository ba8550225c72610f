"""rlbook.book.claims: laws and findings, the notice a failed law leaves in its page, and the strict build."""

from __future__ import annotations

import pytest

from rlbook.book import claims
from rlbook.book.claims import Claim, ClaimError, check, every, held_phrase
from rlbook.book.facts import freeze

FACTS = freeze({"start": 0.4, "end": 0.6})
SEEDED = freeze({"seeds": [0, 1, 2], "by_seed": {0: {"gain": 0.2}, 1: {"gain": -0.1}, 2: {"gain": 0.3}}})


@pytest.fixture
def strict(monkeypatch):
    monkeypatch.setenv(claims.STRICT, "1")


@pytest.fixture
def lenient(monkeypatch):
    monkeypatch.delenv(claims.STRICT, raising=False)


def test_a_claim_must_say_its_kind():
    with pytest.raises(TypeError):
        Claim("lift", "x", lambda F: True)  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="'law' or 'finding'"):
        Claim("lift", "x", lambda F: True, kind="rule")  # type: ignore[arg-type]


def test_a_law_that_holds_says_nothing_and_marks_nothing(strict):
    claim = Claim("lift", "the run lifts held-out reward", lambda F: F.end > F.start, kind="law")
    assert claim.failure(FACTS) is None
    F = check("loop", "chapters/01.qmd", [claim], FACTS)
    assert F.law("lift") == ""
    assert F.end == 0.6


def test_a_failed_law_stops_a_strict_build_naming_chapter_claim_and_figures(strict):
    claim = Claim("drop", "the run loses reward", lambda F: F.end < F.start, lambda F: (F.start, F.end), kind="law")
    with pytest.raises(ClaimError) as err:
        check("loop", "chapters/01.qmd", [claim], FACTS)
    assert str(err.value) == (
        "chapter 'loop' (chapters/01.qmd):\n  law 'drop' does not hold: the run loses reward; saw (0.4, 0.6)"
    )


def test_a_failed_law_in_a_readers_build_is_shown_at_its_sentence(lenient, capsys):
    claim = Claim("drop", "the run loses reward", lambda F: F.end < F.start, lambda F: (F.start, F.end), kind="law")
    F = check("loop", "chapters/01.qmd", [claim], FACTS)
    notice = F.law("drop")
    assert notice == (
        " [On this machine's runs this did not hold (saw (0.4, 0.6)); see the build's summary.]"
        '{.law-notice law="drop"}'
    )
    assert notice._repr_markdown_() == notice
    assert claims.NOTICE_PREFIX in capsys.readouterr().err


def test_a_finding_never_stops_a_build_and_says_where_it_held(strict):
    claim = Claim("gains", "RL raises the gain", every(lambda s: s.gain > 0), kind="finding")
    F = check("loop", "p", [claim], SEEDED)
    assert F.seeds("gains") == "on seeds 0 and 2, not on seed 1"
    assert F.finding("gains") == ""


def test_a_mark_of_the_wrong_kind_or_name_is_refused(lenient):
    law = Claim("lift", "x", lambda F: True, kind="law")
    finding = Claim("whole", "y", lambda F: True, kind="finding")
    F = check("loop", "p", [law, finding], FACTS)
    with pytest.raises(ValueError, match="is a law"):
        F.finding("lift")
    with pytest.raises(ValueError, match="not checked seed by seed"):
        F.seeds("whole")
    with pytest.raises(KeyError, match="no claim named 'lfit'"):
        F.law("lfit")


def test_every_counts_a_seed_whose_check_raises_as_not_holding():
    check_ = every(lambda s: s.gain > 0 if s.gain < 0.25 else s.missing)
    assert check_.on(SEEDED) == {0: True, 1: False, 2: False}
    assert not check_(SEEDED)


@pytest.mark.parametrize(
    ("held", "phrase"),
    [
        ((0, 1, 2), "on every seed"),
        ((0, 2), "on seeds 0 and 2, not on seed 1"),
        ((1,), "on seed 1, not on seeds 0 and 2"),
        ((), "on none of the three seeds"),
    ],
)
def test_held_phrase(held, phrase):
    assert held_phrase(held, (0, 1, 2)) == phrase


def test_a_claim_that_raises_is_a_broken_claim():
    claim = Claim("typo", "a fact that is not there", lambda F: F.ned > 0, kind="law")
    assert "checking it raised AttributeError" in claim.failure(FACTS)


def test_claim_names_are_unique():
    claim = Claim("same", "x", lambda F: True, kind="law")
    with pytest.raises(ValueError, match="twice"):
        check("loop", "p", [claim, claim], FACTS)


def test_checked_facts_survive_a_pickle_round_trip(lenient):
    import pickle

    claim = Claim("lift", "x", lambda F: F.end > F.start, kind="law")
    F = pickle.loads(pickle.dumps(check("loop", "p", [claim], FACTS)))
    assert F.law("lift") == "" and F.start == 0.4
