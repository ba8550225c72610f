"""rlbook.exercises.registry: every exercise declared once, its reference run through its own checker."""

from __future__ import annotations

import pytest

from rlbook.exercises import registry, verdict
from rlbook.exercises.registry import Exercise, ReferenceFailed


def _check(answer, target=3):
    return verdict(answer == target, f"wanted {target}, got {answer}")


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.setattr(registry, "REGISTRY", {})
    monkeypatch.setattr(registry, "all_exercises", lambda: dict(registry.REGISTRY))


def test_a_passing_reference_is_shown_and_passes(toy, capsys):
    def three():
        return 3

    registry.register(Exercise("toy", "loop", _check, three, answer="value", answer_name="toy"))
    result = registry.solution("toy", show=False)
    assert result.passed and "PASSED" in capsys.readouterr().out
    assert registry.REGISTRY["toy"].source().startswith("def three():")
    assert registry.REGISTRY["toy"].source().rstrip().endswith("toy = three()")


def test_a_value_named_like_its_reference_or_a_called_function_is_refused():
    def toy():
        return 3

    with pytest.raises(ValueError, match="answer_name must differ"):
        Exercise("toy", "loop", _check, toy, answer="value", answer_name="toy")
    with pytest.raises(ValueError, match="only a value's reference is called"):
        Exercise("toy", "loop", _check, toy, call="F.x")


def test_a_reference_its_checker_refuses_stops_the_build(toy):
    registry.register(Exercise("wrong", "loop", _check, lambda: 4, answer="value", answer_name="wrong"))
    with pytest.raises(ReferenceFailed, match="exercise 'wrong' fails its own check: wanted 3, got 4"):
        registry.solution("wrong", show=False)


def test_inputs_from_the_page_override_the_entrys_own(toy):
    registry.register(
        Exercise(
            "add", "loop", _check, lambda target: target, answer="value", answer_name="added", inputs=lambda seeds: (3,)
        )
    )
    assert registry.REGISTRY["add"].run_reference().passed
    assert registry.solution("add", 5, show=False).passed


def test_names_are_unique_and_unknown_names_are_named(toy):
    registry.register(Exercise("one", "loop", _check, lambda: 3, answer="value", answer_name="one_value"))
    with pytest.raises(ValueError, match="two exercises are named 'one'"):
        registry.register(Exercise("one", "loop", lambda a: a, lambda: 3))
    with pytest.raises(ValueError, match="no exercise named 'two'"):
        registry.solution("two")
    with pytest.raises(ValueError, match="answer is one of"):
        Exercise("bad", "loop", _check, lambda: 3, answer="text")


def test_the_real_registry_holds_every_chapter_module():
    names = registry.all_exercises()
    assert {"definitions", "rollout-labels", "advantages", "chance-of-a-right-answer"} <= set(names)
    assert all(isinstance(e.check, type(_check)) or callable(e.check) for e in names.values())


def test_a_verdict_is_printed_to_fit_the_page_and_keeps_its_message(capsys):
    from rlbook.exercises.checking import PRINT_WIDTH

    message = "your answer matches on every case; " * 6
    result = verdict(True, message)
    printed = capsys.readouterr().out.splitlines()
    assert len(printed) > 1 and all(len(line) <= PRINT_WIDTH for line in printed)
    assert printed[0].startswith("PASSED: ") and all(line.startswith("  ") for line in printed[1:])
    assert result.message == message
