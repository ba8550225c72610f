"""Progress bars only where someone is watching (rlbook.core.progress)."""

from __future__ import annotations

import io
import sys

import pytest

from rlbook import progress as progress_module
from rlbook.core.progress import progress


class FakeTerminal(io.StringIO):
    """A captured stderr that claims to be (or not to be) a terminal."""

    def __init__(self, tty: bool):
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


@pytest.fixture
def stderr(monkeypatch):
    """Not in a notebook, no RLBOOK_* settings; returns a setter for a fake stderr."""
    monkeypatch.delenv("RLBOOK_PROGRESS", raising=False)
    monkeypatch.delenv("RLBOOK_BUILDING", raising=False)
    monkeypatch.setattr(progress_module, "_in_notebook", lambda: False)

    def use(tty: bool) -> FakeTerminal:
        fake = FakeTerminal(tty)
        monkeypatch.setattr(sys, "stderr", fake)
        return fake

    return use


def test_quiet_when_not_a_tty(stderr):
    fake = stderr(tty=False)
    items = [1, 2, 3]
    assert progress(items, desc="quiet") is items
    assert fake.getvalue() == ""


def test_a_bar_on_a_terminal(stderr):
    fake = stderr(tty=True)
    wrapped = progress(range(3), desc="training")
    assert list(wrapped) == [0, 1, 2]
    assert "training" in fake.getvalue()


def test_rlbook_progress_1_forces_a_bar(stderr, monkeypatch):
    fake = stderr(tty=False)
    monkeypatch.setenv("RLBOOK_PROGRESS", "1")
    items = ["a", "b"]
    wrapped = progress(items, desc="forced", total=2)
    assert wrapped is not items
    assert list(wrapped) == items
    assert "forced" in fake.getvalue()


@pytest.mark.parametrize("value", ["0", "", "false", "no"])
def test_rlbook_progress_off_silences_even_a_terminal(stderr, monkeypatch, value):
    stderr(tty=True)
    monkeypatch.setenv("RLBOOK_PROGRESS", value)
    items = (1, 2)
    assert progress(items) is items


def test_notebooks_show_a_bar_except_in_the_book_build(stderr, monkeypatch):
    stderr(tty=False)
    monkeypatch.setattr(progress_module, "_in_notebook", lambda: True)
    assert progress_module._watched() is True
    monkeypatch.setenv("RLBOOK_BUILDING", "1")
    assert progress_module._watched() is False
