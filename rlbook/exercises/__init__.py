"""Checkers for the book's exercises, one module per chapter (``rlbook.exercises.ch1`` ...).

Every check returns a :class:`CheckResult` and prints its message: it never
raises on a wrong or missing answer, so a reader's notebook keeps running.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CheckResult:
    """The verdict on a reader's answer: whether it passed and what to fix."""

    passed: bool
    message: str

    def __str__(self) -> str:
        return ("PASSED: " if self.passed else "NOT YET: ") + self.message

    def _repr_markdown_(self) -> str:
        return ("**Passed.** " if self.passed else "**Not yet.** ") + self.message


def verdict(passed: bool, message: str) -> CheckResult:
    """A CheckResult, printed so the reader sees it whether or not it is the cell's last value."""
    result = CheckResult(passed, message)
    print(result)
    return result


def not_answered(what: str) -> CheckResult:
    """The verdict for a stub the reader has not filled in yet."""
    return verdict(False, f"no answer yet: fill in {what} and run the cell again")
