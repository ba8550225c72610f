"""What every exercise checker shares: the result it returns, the net under it, and reading a reader's numbers.

The chapters' checker modules (``rlbook.exercises.ch1`` ...) build on this.
Every check returns a :class:`CheckResult` and prints its message: it never
raises on a wrong, missing or malformed answer, so a reader's notebook keeps
running. The helpers here read a number the way a reader may write it, and
:func:`never_raises` is the safety net, with a time limit on the answer.
"""

from __future__ import annotations

import contextlib
import functools
import numbers
import re
import signal
import textwrap
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar, cast

import torch

F = TypeVar("F", bound=Callable[..., "CheckResult"])


@dataclass(frozen=True)
class CheckResult:
    """The verdict on a reader's answer: whether it passed and what to fix."""

    passed: bool
    message: str

    def __str__(self) -> str:
        return ("PASSED: " if self.passed else "NOT YET: ") + self.message

    def _repr_markdown_(self) -> str:
        return ("**Passed.** " if self.passed else "**Not yet.** ") + self.message


PRINT_WIDTH = 80
"""The width a verdict is printed at: the book's code column shows 80 characters without clipping."""


def verdict(passed: bool, message: str) -> CheckResult:
    """A CheckResult, printed so the reader sees it whether or not it is the cell's last value.

    Printed wrapped at :data:`PRINT_WIDTH`, its continuation lines indented,
    so that it fits the page's output box; the message itself is unchanged.
    """
    result = CheckResult(passed, message)
    for line in str(result).splitlines() or [""]:
        print(textwrap.fill(line, PRINT_WIDTH, subsequent_indent="  ", break_long_words=False, break_on_hyphens=False))
    return result


def named_by(message: str) -> str:
    """The words that name a mistake in one of a checker's messages: ``message`` up to the end of its first clause
    (the first ':' or ';' followed by a space), or the whole of it.

    A checker's table of mistakes holds each one's whole message; the
    :class:`~rlbook.exercises.registry.Mistake` registered from it (every
    chapter's exercises) says these first words, which hold whatever the runs'
    numbers are.
    """
    return re.split(r"[:;](?=\s)", message, maxsplit=1)[0].strip()


def not_answered(what: str) -> CheckResult:
    """The verdict for a stub the reader has not filled in yet."""
    return verdict(False, f"no answer yet: fill in {what} and run the cell again")


def not_a_function(name: str, value) -> CheckResult:
    """The verdict for an answer that should be a function and is not."""
    return verdict(False, f"`{name}` must be a function, got {type(value).__name__} {value!r:.60}")


@dataclass(frozen=True)
class Option:
    """One stated option of a multiple-choice question: its text, whether it is right, and what choosing it means."""

    text: str
    right: bool
    why: str


def listed(options: dict[str, Option]) -> str:
    """The options as one line each, ``(a) text``, for a message or a page."""
    return "\n".join(f"({key}) {option.text}" for key, option in options.items())


def check_choice(answer, options: dict[str, Option], name: str) -> CheckResult:
    """A reader's pick among ``options`` (a letter such as ``"b"`` or ``"(b)"``).

    With no answer yet, the message lists the options; a wrong pick is told
    what it gets wrong (its ``why``), never which letter is right.
    """
    if answer is None:
        return verdict(
            False,
            f"no answer yet: set `{name}` to the letter of one of these and run the cell again:\n" + listed(options),
        )
    key = answer.strip().strip("()").strip().lower() if isinstance(answer, str) else None
    if key not in options:
        return verdict(
            False, f"`{name}` must be one of the letters {', '.join(map(repr, options))}, got {answer!r:.30}"
        )
    option = options[key]
    return verdict(option.right, f"({key}) {option.why}")


def as_number(value) -> float | None:
    """``value`` as a float when it is a real number (a Python or NumPy number, a one-element array or tensor).

    Strings, booleans, None and containers of several values give None: an
    answer ``"0.5"`` or ``True`` is not a number, however ``float`` reads it.
    """
    if hasattr(value, "numel") and hasattr(value, "item"):  # a torch tensor
        value = value.item() if value.numel() == 1 and value.dim() == 0 else None
    elif hasattr(value, "shape") and hasattr(value, "item") and getattr(value, "shape", None) == ():
        value = value.item()  # a 0-d NumPy array
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    return float(value)


def apart(value: float, other, at_least: int = 3) -> str:
    """``value`` with as many decimals as it takes to differ from ``other`` when printed (``at_least`` or more).

    A checker prints the right value beside the reader's: 0.99999957 to 6
    decimals is "1.000000", and 0.0157 beside 0.0163 to 3 is "0.016" twice,
    which a reader cannot tell apart (exercises 5.3 and 6.1).
    """
    for digits in range(at_least, 18):
        text = f"{value:.{digits}f}"
        number = as_number(other)
        if number is None or text != f"{number:.{digits}f}":
            return text
    return repr(value)


def as_count(value) -> int | None:
    """``value`` as an int when it is a whole number (``32`` or ``32.0``, not ``True`` or ``"32"``)."""
    number = as_number(value)
    if number is None or not number.is_integer():
        return None
    return int(number)


def as_numbers(values) -> list[float] | None:
    """``values`` as a list of floats when it is a flat sequence of real numbers, else None.

    A list, tuple, 1-d array or tensor of numbers qualifies; text, a dict, a
    single number or a list holding a string (``["0.5"]``) does not.
    """
    if isinstance(values, (str, bytes, dict)) or not hasattr(values, "__iter__"):
        return None
    if hasattr(values, "tolist") and getattr(values, "ndim", 1) == 1:
        values = values.tolist()
    try:
        items = list(values)
    except TypeError:
        return None
    floats = [as_number(x) for x in items]
    return None if any(f is None for f in floats) else cast(list[float], floats)


ANSWER_SECONDS = 120
"""How long a check lets a reader's answer run: the slowest reference solution takes a few seconds."""


def close(a, b, tol: float = 1e-4) -> bool:
    """Whether two arrays a reader's function returned, or it and the truth, agree in shape and to ``tol``
    (chapters 3 and 4's checkers)."""
    a, b = torch.as_tensor(a, dtype=torch.float64), torch.as_tensor(b, dtype=torch.float64)
    return a.shape == b.shape and bool(torch.allclose(a, b, atol=tol, rtol=tol))


def call(fn: Callable, *args):
    """``fn(*args)`` and None, or None and what it raised, worded for the reader (never re-raised)."""
    try:
        return fn(*args), None
    except Exception as err:  # noqa: BLE001 - a reader's bug becomes a message
        return None, f"your function raised {type(err).__name__}: {err}"


class AnswerTooSlow(Exception):
    """A reader's answer ran past :data:`ANSWER_SECONDS`."""


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise :class:`AnswerTooSlow` in the block after ``seconds`` (main thread on Unix; elsewhere no limit)."""
    usable = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if not usable:
        yield
        return

    def stop(signum, frame):
        raise AnswerTooSlow

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def never_raises(check: F) -> F:
    """Wrap a checker so that an answer it cannot read becomes a NOT YET message instead of a traceback.

    The checkers validate their input themselves; this is the net under them,
    so that "Run All" in a reader's notebook never stops at a check.
    """

    @functools.wraps(check)
    def guarded(*args, **kwargs):
        try:
            with time_limit(ANSWER_SECONDS):
                return check(*args, **kwargs)
        except AnswerTooSlow:
            return verdict(
                False,
                f"the check stopped your answer after {ANSWER_SECONDS} s: look for a loop that never ends "
                "(a while whose condition never changes, say)",
            )
        except Exception as err:  # noqa: BLE001 - a check reports, it never raises
            return verdict(
                False,
                f"the check could not read your answer ({type(err).__name__}: {err}); "
                "compare its type and shape with what the exercise asks for",
            )

    return guarded  # type: ignore[return-value]
