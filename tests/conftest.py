"""Fixtures shared by every suite."""

from __future__ import annotations

import pytest
import torch


@pytest.fixture(scope="module")
def one_thread():
    """Evaluate on one thread: on a busy two-core machine that is many times faster for these tiny batches."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
