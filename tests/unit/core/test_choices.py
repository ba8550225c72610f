"""Configurations refuse typos: every choice field checked when the configuration is built (rlbook.core.choices)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from rlbook.core import advantages, losses, rewards, world
from rlbook.core.choices import check_choice
from rlbook.core.config import SELECTIONS, RLConfig
from rlbook.core.guard import FAULT_KINDS
from rlbook.core.reward_model import JudgeVerifier
from rlbook.core.train import PretrainConfig

CHOICES = {
    "world": world.WORLDS,
    "loss": tuple(losses.LOSSES),
    "aggregation": losses.AGGREGATIONS,
    "advantage": tuple(advantages.ADVANTAGE_METHODS),
    "verifier": (*rewards.VERIFIERS, JudgeVerifier.name),
    "selection": SELECTIONS,
    "kl_estimator": losses.KL_ESTIMATORS,
}


@pytest.mark.parametrize("name", CHOICES)
def test_every_allowed_value_builds_and_a_typo_names_the_field_and_the_values(name):
    for value in CHOICES[name]:
        assert getattr(RLConfig(**{name: value}), name) == value
    with pytest.raises(ValueError) as err:
        RLConfig(**{name: "acepted"})
    assert str(err.value) == f"RLConfig.{name} = 'acepted' is not one of {CHOICES[name]}"


def test_the_misspelt_selection_of_the_issue_is_refused_also_through_replace():
    with pytest.raises(ValueError, match=r"RLConfig.selection = 'acepted' is not one of \('none', 'accepted'\)"):
        replace(RLConfig(), selection="acepted")


def test_a_value_of_another_type_is_refused_even_when_it_compares_equal():
    class Loose(str):
        pass

    with pytest.raises(ValueError, match="RLConfig.loss"):
        RLConfig(loss=Loose("ppo"))
    with pytest.raises(ValueError, match="Holder.flag = 1 is not one of"):
        check_choice(type("Holder", (), {"flag": 1})(), "flag", (True, False))


def test_a_verifier_version_must_be_one_of_that_verifiers_versions():
    for name, cls in rewards.VERIFIERS.items():
        for version in cls.VERSIONS:
            RLConfig(verifier=name, verifier_version=version)
    assert RLConfig(verifier_version=None).verifier_version is None
    with pytest.raises(ValueError, match=r"RLConfig.verifier_version = '9.9' is not one of \('1.0', '2.0'\)"):
        RLConfig(verifier_version="9.9")


def test_faults_are_step_kind_pairs_of_known_kinds():
    assert RLConfig(faults=tuple((s, kind) for s, kind in enumerate(FAULT_KINDS, 1))).faults[0] == (1, FAULT_KINDS[0])
    with pytest.raises(ValueError, match="'nan_los' is not one of"):
        RLConfig(faults=((3, "nan_los"),))
    with pytest.raises(ValueError, match="holds \\(step, kind\\) pairs"):
        RLConfig(faults=("nan_loss",))


def test_the_pretraining_world_is_checked_too():
    assert PretrainConfig(world="multi").world == "multi"
    with pytest.raises(
        ValueError, match=r"PretrainConfig.world = 'singel' is not one of \('single', 'multi', 'worked'\)"
    ):
        PretrainConfig(world="singel")
