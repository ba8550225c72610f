"""The world at a glance: each table is computed from the package."""

from __future__ import annotations

import re
from dataclasses import fields, replace
from pathlib import Path

import pytest

from rlbook.analysis import glance
from rlbook.core import rl, world
from rlbook.core.policy import Policy, PolicyConfig
from rlbook.runs import RUNS, RunSpec
from rlbook.runs.preference import LEARNERS, Learner

CHAPTERS = Path(__file__).resolve().parents[3] / "chapters"


def test_split_facts_count_the_splits_and_check_how_they_nest(monkeypatch):
    assert glance.split_facts("single") == {"sft": 30, "train": 60, "heldout": 40, "validation": 20, "test": 20}
    real = world.split
    monkeypatch.setattr(world, "split", lambda name, w="single": real("train" if name == "test" else name, w))
    with pytest.raises(ValueError, match="held-out"):
        glance.split_facts("single")


def test_the_model_card_is_read_from_the_policy():
    policy = Policy(PolicyConfig(n_layer=3, d_model=16))
    card = glance.model_card(policy)
    assert card["parameters"] == sum(p.numel() for p in policy.parameters())
    assert (card["layers"], card["width"], card["attention heads"]) == (3, 16, 4)


def test_each_run_is_compared_with_its_reference_and_its_changes_are_computed():
    assert glance.reference_of("base") is None and glance.reference_of("main") is None
    assert glance.reference_of("ppo") == "main" and glance.reference_of("process-shaped") == "process-outcome"
    assert glance.reference_of("process-base") == "base"
    assert glance.changes("ppo") == ["60 steps", "4 updates per batch"]
    assert glance.changes("process-shaped") == ["rewarded by the exact verifier plus 0.5 × the process score"]
    assert "SFT: 200 full-batch steps on the SFT examples" in glance.changes("process-base")


def test_a_new_run_shows_up_with_its_change():
    catalogue = dict(RUNS, lower=RunSpec("lower", "", "base", rl=replace(RUNS["main"].rl, lr=1e-4)))
    row = next(r for r in glance.runs_rows(catalogue) if r[0] == "`lower`")
    assert row == ["`lower`", "`base`", "`main`", "like `main`, but learning rate 0.0001"]
    same = dict(RUNS, again=RunSpec("again", "", "base", rl=RUNS["main"].rl))
    assert next(r for r in glance.runs_rows(same) if r[0] == "`again`")[3] == "the same settings as `main`"


def test_the_recipe_says_base_and_main_in_words_and_the_folded_box_lists_every_setting():
    lines = glance.recipe_lines(RUNS["base"], RUNS["main"])
    assert [line.split("**")[1] for line in lines] == ["pretraining", "SFT", "RL"]
    assert "groups of 16 answers" in lines[2] and "1,100 steps" in lines[0]
    assert "cispo" not in lines[2].lower() and "`" not in lines[2].split(":", 1)[1]
    settings = glance.settings_lines(RUNS["base"], RUNS["main"])
    assert "`group_size` 16" in settings[2] and "`steps` 1100" in settings[0]


def test_the_algorithm_names_functions_of_the_package_in_order():
    steps = glance.algorithm_steps(rl.RLConfig())
    assert all(glance.qualified(fn).startswith("rlbook.core.") for _, fn in steps)
    box = glance.algorithm_markdown(rl.RLConfig())
    assert box.startswith("1. pick the prompts") and "`rlbook.core.losses.ppo_clip_loss`" in box
    assert "def update(" in glance.source_of(rl.update)


def test_notation_names_real_settings_and_objects():
    names = {f.name for f in fields(rl.RLConfig)}
    for _, _, where in glance.NOTATION:
        assert where in names if isinstance(where, str) else callable(where)
    rows = glance.notation_rows(rl.RLConfig())
    assert ["$G$", "answers sampled per prompt (a group)", "`RLConfig.group_size` (`main`: 16)"] in rows


def _section(label: str) -> str:
    for path in CHAPTERS.glob("*.qmd"):
        text = path.read_text(encoding="utf-8")
        match = re.search(rf"^(#+) .*\{{#{label}[ }}]", text, re.MULTILINE)
        if match:
            rest = text[match.end() :]
            end = re.search(rf"^#{{1,{len(match.group(1))}}} ", rest, re.MULTILINE)
            return rest[: end.start()] if end else rest
    raise AssertionError(f"no section {label}")


def test_each_learner_from_pairs_is_said_from_its_own_settings():
    rows = glance.learners_markdown().splitlines()[2:]
    assert [row.split("|")[1].strip() for row in rows] == [f"`{name}`" for name in LEARNERS]
    made_up = Learner("x", "dpo", replace(LEARNERS["dpo"].cfg, beta=0.3, noise=0.1, steps=7))
    words = glance.learner_words(made_up)
    assert words.startswith("DPO with beta 0.3: 7 steps") and "10% of them swapped" in words
    assert glance.learner_words(LEARNERS["bt"]).startswith("a Bradley–Terry reward model")


def test_chapter_11_s_scorer_and_runs_are_listed_with_their_settings():
    from rlbook.runs import process_model

    rows = glance.process_runs_markdown().splitlines()[2:]
    assert [row.split("|")[1].strip() for row in rows] == ["step scorer", *(f"`{r}`" for r in process_model.REWARDS)]
    scorer = process_model.SCORER
    assert f"{scorer.steps} updates of {scorer.batch} answers" in rows[0] and f"{scorer.answers:,}" in rows[0]
