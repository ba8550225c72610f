"""rlbook.analysis.setting_words: every setting said in words, only where it acts, and what a run changes."""

from __future__ import annotations

from dataclasses import fields, replace

import pytest

from rlbook.analysis import setting_words as words
from rlbook.core import advantages, losses, rewards
from rlbook.core.config import FAULT_KINDS, SELECTIONS, RLConfig
from rlbook.core.reward_model import JudgeVerifier
from rlbook.core.train import PretrainConfig, SFTConfig
from rlbook.core.world import WORLDS


@pytest.mark.parametrize("stage", [PretrainConfig, SFTConfig, RLConfig])
def test_every_setting_of_every_stage_has_its_words(stage):
    assert set(words.WORDS[stage]) == {f.name for f in fields(stage)}


def test_every_choice_a_setting_can_take_has_its_words():
    assert set(words.WORLD_WORDS) == set(WORLDS)
    assert set(words.LOSS_WORDS) == set(losses.LOSSES)
    assert set(words.AGGREGATION_WORDS) == set(losses.AGGREGATIONS)
    assert set(words.ADVANTAGE_WORDS) == set(advantages.ADVANTAGE_METHODS)
    assert set(words.KL_WORDS) == set(losses.KL_ESTIMATORS)
    assert set(words.VERIFIER_WORDS) == {*rewards.VERIFIERS, JudgeVerifier.name}
    assert set(words.SELECTION_WORDS) == set(SELECTIONS)
    assert set(words.FAULT_WORDS) == set(FAULT_KINDS)


def test_a_recipe_leaves_out_what_does_not_act_and_what_changes_nothing():
    said = words.recipe_words(RLConfig())
    assert "PPO's clipped ratio" in said and "upper clip bound 1 + 0.2" in said
    assert not any("capped at" in s or "k3" in s or "rewards times" in s or "faults" in s for s in said)
    cispo = words.recipe_words(RLConfig(loss="cispo", cispo_cap=5.0, kl_beta=0.1))
    assert "the ratio capped at 5" in cispo and not any("clip bound" in s for s in cispo)
    assert "the KL estimated per token by k3" in cispo
    assert not any("chains" in s for s in words.recipe_words(PretrainConfig()))
    assert "30% of the lines three-term chains" in words.recipe_words(PretrainConfig(world="multi"))


def test_a_change_names_the_new_value_and_the_settings_it_brings_into_play():
    main = RLConfig()
    assert words.change_words(main, replace(main, updates_per_batch=4, steps=60)) == ["60 steps", "4 updates per batch"]
    assert words.change_words(main, replace(main, loss="cispo")) == [
        "CISPO's capped ratio as a weight",
        "the ratio capped at 4",
    ]
    assert words.change_words(main, replace(main, eps_high=0.3, loss="pg")) == [words.LOSS_WORDS["pg"]]
    assert words.change_words(main, main) == []
    assert words.change_words(SFTConfig(), SFTConfig(replay=0.0)) == ["no replay"]
    with pytest.raises(TypeError):
        words.change_words(SFTConfig(), main)


def test_faults_are_said_by_kind_with_their_steps_run_together():
    faults = ((8, "verifier_outage"), (15, "nan_loss"), *((s, "verifier_outage") for s in range(10, 13)))
    assert words.faults_words(faults) == "the verifier down at steps 8 and 10 to 12, a non-finite loss at step 15"
    assert words.faults_words(()) == "no planned faults"
