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
from dataclasses import dataclass
from pathlib import Path

from rlbook.analysis.listing import listing

from .checking import CheckResult
from .pasteable import pasteable

ANSWER_KINDS = ("function", "value")


@dataclass(frozen=True)
class Mistake:
    """A named wrong answer to an exercise, and the words its checker must answer it with.

    ``wrong`` stands where the reference does: the wrong function itself, or
    for a value exercise a function that computes the wrong value from the
    exercise's inputs. The checker must refuse it with a message that
    contains ``says``, on every seed the audit tries (:mod:`.audit`).
    """

    wrong: Callable
    says: str


def _no_inputs(seeds: tuple[int, ...]) -> tuple:
    return ()


@dataclass(frozen=True)
class Exercise:
    """One exercise: a stable ``name``, the ``chapter`` (facts topic) it belongs to, its checker and reference.

    ``answer`` says what the reader hands the checker: the reference function
    itself (``"function"``), or what the reference returns for the inputs
    (``"value"``). ``inputs(seeds)`` builds the checker's other arguments as
    the page would have them with its facts computed on ``seeds`` (the page
    follows :func:`rlbook.book._shown.shown_seed` of them), for the tests and
    the audit; the page passes its own. ``mistakes`` are wrong answers its
    checker must name (:class:`Mistake`).

    ``answer_name`` is the name the page's answer cell hands the checker (its
    function, or its variable; default: the reference's name) and ``call`` the
    rest of that cell's check call as the page writes it (``"F.a1.run"``), with
    which a value's reference is called in the solution box. A value's
    reference is named otherwise than its variable, so that pasting the box
    never replaces the variable with a function. ``also`` is a line that ends
    the box when the cell asks for something besides the answer (Exercise
    5.1's exploit).
    """

    name: str
    chapter: str
    check: Callable[..., CheckResult]
    reference: Callable
    answer: str = "function"
    inputs: Callable[[tuple[int, ...]], tuple] = _no_inputs
    answer_name: str = ""
    call: str = ""
    also: str = ""
    mistakes: tuple[Mistake, ...] = ()

    def __post_init__(self) -> None:
        if self.answer not in ANSWER_KINDS:
            raise ValueError(f"exercise {self.name!r}: answer is one of {ANSWER_KINDS}, not {self.answer!r}")
        if self.answer == "value" and self.answer_name in ("", self.reference.__name__):
            raise ValueError(f"exercise {self.name!r}: a value's answer_name must differ from its reference's name")
        if self.answer == "function" and self.call:
            raise ValueError(f"exercise {self.name!r}: only a value's reference is called in the solution box")

    @property
    def answered_as(self) -> str:
        """The name the answer cell hands the checker."""
        return self.answer_name or self.reference.__name__

    def book_inputs(self) -> tuple:
        """:attr:`inputs` on the book's seeds: the checker's arguments as the book's page has them."""
        from rlbook.book import SEEDS

        return self.inputs(SEEDS)

    def answer_with(self, answer: Callable, *inputs) -> CheckResult:
        """The checker's verdict on ``answer``, standing where the reference does, with ``inputs``."""
        return self.check(answer if self.answer == "function" else answer(*inputs), *inputs)

    def run_reference(self, *inputs) -> CheckResult:
        """The checker's verdict on the reference solution, with ``inputs`` (default: :meth:`book_inputs`)."""
        return self.answer_with(self.reference, *(inputs or self.book_inputs()))

    def source(self) -> str:
        """The solution box's code, laid out for the page's column (:mod:`.listing`), to paste into the answer cell.

        Its imports, the reference under the answer cell's name, and for a
        value the line that fills the cell's variable (:mod:`.pasteable`).
        """
        call = self.call if self.answer == "value" else None
        code = pasteable(self.reference, listing(self.reference), self.answered_as, call)
        return code + (f"\n\n{self.also}\n" if self.also else "")


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
