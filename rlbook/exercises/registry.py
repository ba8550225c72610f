"""Every exercise of the book, declared once: its checker, its reference solution and the inputs they need.

Each chapter's checker module (:mod:`rlbook.exercises.ch1`, ...) registers its
exercises here with :func:`register`. The page's solution box calls
:func:`solution`, which shows the reference solution's source (the one copy
there is) and runs it through its own checker with the page's inputs: a
reference that does not pass raises :class:`ReferenceFailed`, so the build
fails instead of publishing a model answer that its check refuses. The tests
run every reference on the inputs its entry builds, and feed every checker
junk (:func:`all_exercises`).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from rlbook.analysis.listing import listing

from . import CheckResult

ANSWER_KINDS = ("function", "value")


@dataclass(frozen=True)
class Exercise:
    """One exercise: a stable ``name``, the ``chapter`` (facts topic) it belongs to, its checker and reference.

    ``answer`` says what the reader hands the checker: the reference function
    itself (``"function"``), or what the reference returns for the inputs
    (``"value"``). ``inputs()`` builds the checker's other arguments as the
    page has them, for the tests; the page passes its own.
    """

    name: str
    chapter: str
    check: Callable[..., CheckResult]
    reference: Callable
    answer: str = "function"
    inputs: Callable[[], tuple] = field(default=lambda: ())

    def __post_init__(self) -> None:
        if self.answer not in ANSWER_KINDS:
            raise ValueError(f"exercise {self.name!r}: answer is one of {ANSWER_KINDS}, not {self.answer!r}")

    def run_reference(self, *inputs) -> CheckResult:
        """The checker's verdict on the reference solution, with ``inputs`` (default: :attr:`inputs`)."""
        inputs = inputs or self.inputs()
        answer = self.reference if self.answer == "function" else self.reference(*inputs)
        return self.check(answer, *inputs)

    def source(self) -> str:
        """The reference solution's source, as the page shows it (laid out for its column, :mod:`.listing`)."""
        return listing(self.reference)


class ReferenceFailed(AssertionError):
    """A reference solution that its own checker refuses: the build stops rather than publish it."""


REGISTRY: dict[str, Exercise] = {}
"""Every registered exercise by name (complete once :func:`all_exercises` has imported every checker module)."""


def register(exercise: Exercise) -> Exercise:
    """Add ``exercise`` to :data:`REGISTRY`; a name used twice by two different exercises is an error."""
    known = REGISTRY.get(exercise.name)
    if known is not None and known.check is not exercise.check:
        raise ValueError(f"two exercises are named {exercise.name!r}")
    REGISTRY[exercise.name] = exercise
    return exercise


def all_exercises() -> dict[str, Exercise]:
    """Every exercise of the book: each checker module of this package imported, then :data:`REGISTRY`."""
    folder = Path(__file__).resolve().parent
    for module in pkgutil.iter_modules([str(folder)]):
        importlib.import_module(f"{__package__}.{module.name}")
    return dict(REGISTRY)


def solution(name: str, *inputs, show: bool = True) -> CheckResult:
    """The page's solution box: show the reference's source, run it through its checker with ``inputs``.

    Raises :class:`ReferenceFailed` when the checker refuses the reference,
    naming the exercise and the checker's message.
    """
    exercise = all_exercises().get(name)
    if exercise is None:
        raise ValueError(f"no exercise named {name!r}; the exercises are: {', '.join(sorted(REGISTRY))}")
    if show:
        from IPython.display import Markdown, display

        display(Markdown(f"```python\n{exercise.source()}```"))
    result = exercise.run_reference(*inputs)
    if not result.passed:
        raise ReferenceFailed(f"the reference solution of exercise {name!r} fails its own check: {result.message}")
    return result
