"""Fixtures of the web workshop's Node tests: the exported data and a way to ask the JavaScript.

``numerics.mjs`` imports the workshop's ES modules from
``rlbook/publish/assets/workshop/`` and answers a JSON request; the tests
compare its answers with what ``rlbook`` computes on the same inputs.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from rlbook.publish import checkpoints

HARNESS = Path(__file__).with_name("numerics.mjs")


@pytest.fixture(scope="session")
def workshop_data() -> dict:
    """What the page is given: the seed-0 checkpoints, the splits, the recipe and main's seeds (from the run cache)."""
    return checkpoints.export_data()


@pytest.fixture(scope="session")
def node(tmp_path_factory):
    """``node(request) -> answer``: run the JavaScript on one JSON request."""
    binary = shutil.which("node")
    if binary is None:
        pytest.skip("Node.js is not installed: the web workshop's numerics cannot be run")
    folder = tmp_path_factory.mktemp("node")
    count = iter(range(10**6))

    def ask(request: dict) -> dict:
        k = next(count)
        question, answer = folder / f"request-{k}.json", folder / f"answer-{k}.json"
        question.write_text(json.dumps(request))
        done = subprocess.run(
            [binary, str(HARNESS), str(question), str(answer)], capture_output=True, text=True, check=False, timeout=600
        )
        assert done.returncode == 0, f"node failed:\n{done.stderr}"
        return json.loads(answer.read_text())

    return ask
