"""Chapter 11's named scorer and runs (rlbook.runs.process_model): their settings come from the catalogue's worked
world, an unknown run is refused by name, and the module stays outside the RL runs' training closure."""

from __future__ import annotations

import pytest

from rlbook.core.source import import_closure
from rlbook.runs import process_model as pm
from rlbook.runs.cache import TRAINING_ENTRY
from rlbook.runs.catalogue import WORKED, spec


def test_the_runs_start_from_worked_base_whose_answers_the_scorer_learns_from():
    assert pm.PARENT == spec("worked").parent == "worked-base"
    assert pm.SCORER.budget == WORKED.budget
    assert pm.prompts("train") and set(pm.prompts("train")).isdisjoint(pm.prompts("heldout"))


def test_an_unknown_run_is_refused_with_the_names_it_could_be():
    with pytest.raises(KeyError, match="prm, process-exact"):
        pm.train("prm-typo", 0)


def test_editing_this_module_retrains_no_run_of_the_catalogue():
    modules = import_closure(TRAINING_ENTRY)
    assert "rlbook.runs.process_model" not in modules and "rlbook.core.process_model" not in modules
