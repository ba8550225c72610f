"""rlbook.exercises.audit: every exercise's reference and named mistakes, tried on each audited seed."""

from __future__ import annotations

import json
import os
import sys

import pytest

from rlbook.book import check
from rlbook.exercises import audit, verdict
from rlbook.exercises.registry import Exercise, Mistake


def _check(answer, target):
    return verdict(answer == target, "right" if answer == target else f"wanted {target}; you gave {answer}")


def _seeded(seeds):
    return (seeds[0] % 3,)  # the target differs from seed to seed, as a run's numbers do


def _exercise(*mistakes):
    return Exercise("toy", "loop", _check, lambda target: target, answer="value", answer_name="toy_value",
                    inputs=_seeded, mistakes=mistakes)  # fmt: skip


def test_a_reference_that_follows_the_seed_passes_and_a_named_mistake_is_named():
    wrong = Mistake(lambda target: target + 1, "wanted")
    passed, named = audit.judge(_exercise(wrong), seed=4)
    assert passed and named == {"wanted": True}


def test_a_mistake_answered_with_other_words_or_accepted_is_not_named():
    other_words = Mistake(lambda target: target + 1, "the sign is flipped")
    accepted = Mistake(lambda target: target, "wanted")
    _, named = audit.judge(_exercise(other_words, accepted), seed=2)
    assert named == {"the sign is flipped": False, "wanted": False}


@pytest.fixture
def toy_audit(monkeypatch, tmp_path):
    monkeypatch.setattr(check, "audit_cache", lambda: tmp_path)
    monkeypatch.setattr("rlbook.book.prefetch.prefetch_book", lambda *a, **k: None)
    monkeypatch.setattr(audit, "available", lambda chapter: True)

    def install(exercise):
        monkeypatch.setattr(audit, "all_exercises", lambda: {exercise.name: exercise})

    return install


def test_the_audit_counts_the_seeds_where_everything_held(toy_audit):
    fixed = Exercise("fixed", "loop", _check, lambda target: 1, answer="value", answer_name="fixed_value",
                     inputs=_seeded, mistakes=(Mistake(lambda target: 7, "wanted"),))  # fmt: skip
    toy_audit(fixed)
    (tally,) = audit.audit_exercises((0, 1, 2, 3), out=lambda line: None)
    assert tally.passed_on == [1] and tally.named_on == {"wanted": [0, 1, 2, 3]}
    assert tally.rate == "1/4" and not tally.everywhere


def test_the_audit_leaves_the_callers_run_cache_as_it_found_it(toy_audit, monkeypatch, tmp_path):
    # It once left RLBOOK_CACHE on the audit's cache: a later test in the same worker then computed the book's
    # facts again, for minutes, in a temporary folder.
    monkeypatch.setenv("RLBOOK_CACHE", str(tmp_path / "the-callers"))
    seen = []
    monkeypatch.setattr(audit, "judge", lambda exercise, seed: seen.append(os.environ["RLBOOK_CACHE"]) or (True, {}))
    toy_audit(_exercise())
    audit.audit_exercises((0,), out=lambda line: None)
    assert seen == [str(tmp_path)] and os.environ["RLBOOK_CACHE"] == str(tmp_path / "the-callers")
    monkeypatch.delenv("RLBOOK_CACHE")
    audit.audit_exercises((0,), out=lambda line: None)
    assert "RLBOOK_CACHE" not in os.environ


def test_a_seed_whose_inputs_cannot_be_built_is_a_failure_with_its_reason(toy_audit):
    def inputs(seeds):
        if seeds == (2,):
            raise KeyError("no such run")
        return (0,)

    toy_audit(Exercise("broken", "loop", _check, lambda target: target, answer="value", answer_name="b", inputs=inputs))
    (tally,) = audit.audit_exercises((1, 2), out=lambda line: None)
    assert tally.passed_on == [1] and "no such run" in tally.errors["2"] and tally.rate == "1/2"


def test_the_report_and_the_data_name_what_failed_where():
    held = audit.ExerciseTally("a", "loop", [0, 1], [0, 1], {"wanted": [0, 1]})
    missed = audit.ExerciseTally("b", "limits", [0, 1], [0, 1], {"sign": [0]})
    results = {"pinned": [held, missed], "native": [held, held]}
    text = audit.report(results)
    assert "2 exercises and 2 named mistakes" in text and "1 exercise(s) failed somewhere: b." in text
    assert "| `a` | loop | 1 | 2/2 | 2/2 | nowhere |" in text
    assert "pinned: “sign” missed on seed(s) 1" in text
    data = audit.audit_data(results)
    assert [row["everywhere"] for row in data] == [True, False] and data[1]["rates"] == {
        "pinned": "1/2",
        "native": "2/2",
    }


def test_each_draw_runs_in_a_python_of_its_own_and_its_last_line_is_read(monkeypatch):
    calls = []

    class Done:
        returncode = 0
        stdout = "progress\n" + json.dumps([{"name": "a", "chapter": "loop", "seeds": [0], "passed_on": [0]}])

    def run(command, env, **kwargs):
        calls.append((command, env["RLBOOK_NUMERICS"]))
        return Done()

    monkeypatch.setattr(check.subprocess, "run", run)
    results = audit.audit_draws((0,), ["pinned", "native"], out=lambda line: None)
    assert [c[1] for c in calls] == ["pinned", "native"]
    assert calls[0][0][:3] == [sys.executable, "-m", "rlbook.exercises.audit"]
    assert results["native"][0].everywhere


def test_the_committed_audit_found_every_exercise_right_on_every_seed():
    rows = check.read_audit().get("exercises")
    assert rows, "the committed audit has no exercises: run rlbook claims --seeds 0-9 --draws pinned,native --write"
    assert [row["name"] for row in rows if not row["everywhere"]] == []
