"""The named runs and their cache (rlbook.runs), using the shared cached base and main runs of seed 0."""

from __future__ import annotations

import ast
import inspect
import re
import shutil
from dataclasses import fields, replace

import pytest

from rlbook import runs
from rlbook.core import source
from rlbook.core.rl import RLConfig
from rlbook.runs import cache, catalogue


def test_spec_of_an_unknown_name_lists_the_known_ones():
    with pytest.raises(ValueError, match="unknown run 'mian'") as err:
        runs.spec("mian")
    message = str(err.value)
    for name in ("base", "main", "exploit", "process-base", "process-shaped"):
        assert name in message


def test_main_is_written_out_in_full_in_the_catalogue():
    tree = ast.parse(inspect.getsource(catalogue))
    (call,) = [n.value for n in tree.body if isinstance(n, ast.Assign) and ast.unparse(n.targets[0]) == "MAIN"]
    assert isinstance(call, ast.Call) and not call.args
    assert sorted(k.arg for k in call.keywords) == sorted(f.name for f in fields(RLConfig))


def test_named_specs():
    assert runs.spec("main").parent == "base" and runs.spec("main").rl is runs.MAIN
    assert runs.spec("base").rl is None and runs.spec("base").pretrain is not None
    assert runs.spec("process-outcome").parent == "process-base"
    for name, s in runs.RUNS.items():
        assert s.name == name and s.description
        assert s.parent is not None or s.rl is None  # every RL run has a parent
        if s.parent:
            assert runs.RUNS[s.parent].rl is None  # every run continues a base run, never an RL run
    assert runs.spec("process-base").parent == "base" and runs.spec("process-base").rl is None


def test_cache_key_is_stable_and_changes_with_seed_threads_and_name():
    key = runs.cache_key("main", 0, 2)
    assert re.fullmatch(r"[0-9a-f]{16}", key)
    assert runs.cache_key("main", 0, 2) == key
    others = {
        runs.cache_key("main", 1, 2),
        runs.cache_key("main", 0, 1),
        runs.cache_key("pg", 0, 2),
        runs.cache_key("base", 0, 2),
    }
    assert key not in others and len(others) == 4


def test_cache_key_changes_with_the_config_and_the_parents_config(monkeypatch):
    main_key, base_key = runs.cache_key("main", 0, 2), runs.cache_key("base", 0, 2)
    monkeypatch.setitem(runs.RUNS, "main", replace(runs.RUNS["main"], rl=replace(runs.MAIN, lr=1e-3)))
    assert runs.cache_key("main", 0, 2) != main_key
    assert runs.cache_key("base", 0, 2) == base_key
    monkeypatch.undo()
    assert runs.cache_key("main", 0, 2) == main_key
    base_spec = runs.RUNS["base"]
    monkeypatch.setitem(runs.RUNS, "base", replace(base_spec, sft=replace(base_spec.sft, steps=401)))
    assert runs.cache_key("main", 0, 2) != main_key  # a child's key covers its parent's


def test_cache_key_changes_with_the_code(monkeypatch):
    key = runs.cache_key("main", 0, 2)
    monkeypatch.setattr(cache, "code_hash", lambda: "0" * 16)
    assert runs.cache_key("main", 0, 2) != key


TRAINING = {
    "rlbook.core.rl",
    "rlbook.core.train",
    "rlbook.core.policy",
    "rlbook.core.sampling",
    "rlbook.core.rewards",
    "rlbook.core.advantages",
    "rlbook.core.losses",
    "rlbook.core.adamw",
    "rlbook.core.world",
    "rlbook.core.evaluate",
    "rlbook.runs.training",
    "rlbook.runs.records",
    "rlbook.record.schema",
}


DISPLAY = {
    "rlbook.core.stats",
    "rlbook.record.display",
    "rlbook.analysis.reward_spec",
    "rlbook.analysis.workshop",
    "rlbook.cli",
    "rlbook.publish.build",
    "rlbook.runs.prefetch",
}


def test_the_key_hashes_the_training_code_and_no_display_code():
    closure = set(source.import_closure(cache.TRAINING_ENTRY))
    assert TRAINING <= closure
    assert not DISPLAY & closure
    assert not any(
        m.startswith(("rlbook.analysis", "rlbook.publish", "rlbook.trl", "rlbook.exercises")) for m in closure
    )
    assert re.fullmatch(r"[0-9a-f]{16}", runs.code_hash())


def _edited_copy(tmp_path, module: str, addition: str):
    """A copy of the package with ``addition`` appended to ``module``'s source."""
    root = tmp_path / "rlbook"
    shutil.copytree(source.ROOT, root, ignore=shutil.ignore_patterns("__pycache__"))
    path = source.module_path(module, root)
    path.write_text(path.read_text() + addition)
    return root


@pytest.mark.parametrize(
    "module", ["rlbook.core.losses", "rlbook.core.rl", "rlbook.runs.records", "rlbook.record.schema"]
)
def test_editing_training_code_changes_the_key(tmp_path, module):
    edited = _edited_copy(tmp_path, module, "\n_EDITED = 1\n")
    assert source.closure_hash(cache.TRAINING_ENTRY, edited) != source.closure_hash(cache.TRAINING_ENTRY)


@pytest.mark.parametrize("module", sorted(DISPLAY))
def test_editing_display_code_changes_nothing(tmp_path, module):
    edited = _edited_copy(tmp_path, module, "\n_EDITED = 1\n")
    assert source.closure_hash(cache.TRAINING_ENTRY, edited) == source.closure_hash(cache.TRAINING_ENTRY)


def test_the_catalogue_enters_the_key_by_value_not_by_its_text(tmp_path, monkeypatch):
    edited = _edited_copy(tmp_path, "rlbook.runs.catalogue", "\n_EDITED = 1\n")
    assert source.closure_hash(cache.TRAINING_ENTRY, edited, cache.BY_VALUE) == cache.code_hash()
    assert source.closure_hash(cache.TRAINING_ENTRY, edited) != source.closure_hash(cache.TRAINING_ENTRY)
    keys = {name: runs.cache_key(name, 0, 1) for name in ("base", "main", "rm")}
    monkeypatch.setitem(runs.RUNS, "extra", runs.RunSpec("extra", "a run added", "base", rl=RLConfig(steps=3)))
    assert {name: runs.cache_key(name, 0, 1) for name in keys} == keys  # adding a run retrains no other
    monkeypatch.setattr(cache, "JUDGE", replace(cache.JUDGE, steps=cache.JUDGE.steps + 1))
    assert runs.cache_key("rm", 0, 1) != keys["rm"] and runs.cache_key("main", 0, 1) == keys["main"]
    monkeypatch.setattr(cache, "PRETRAIN_SEED", cache.PRETRAIN_SEED + 1)
    assert runs.cache_key("base", 0, 1) != keys["base"] and runs.cache_key("main", 0, 1) != keys["main"]


def test_comments_and_docstrings_do_not_change_the_key(tmp_path):
    edited = _edited_copy(tmp_path, "rlbook.core.losses", '\n# a comment\ndef _f():\n    """A docstring."""\n')
    plain = _edited_copy(tmp_path / "b", "rlbook.core.losses", "\ndef _f():\n    pass\n")
    assert source.closure_hash(cache.TRAINING_ENTRY, edited) == source.closure_hash(cache.TRAINING_ENTRY, plain)


def test_cache_root_and_entry_path(monkeypatch, tmp_path):
    monkeypatch.setenv("RLBOOK_CACHE", str(tmp_path))
    assert runs.cache_root() == tmp_path
    path = runs.entry_path("main", 1, 2)
    assert path.parent == tmp_path and path.name == f"main-seed1-t2-{runs.cache_key('main', 1, 2)}"
    monkeypatch.delenv("RLBOOK_CACHE")
    assert runs.cache_root().name == ".rlbook-cache"


def test_pretrained_key_leaves_out_the_seed_and_follows_the_pretraining(monkeypatch):
    key = runs.pretrained_key("base", 1)
    assert re.fullmatch(r"[0-9a-f]{16}", key) and runs.pretrained_key("base", 2) != key
    assert runs.pretrained_key("process-base", 1) not in (key, runs.pretrained_key("process-base", 2))
    base_spec = runs.RUNS["base"]
    monkeypatch.setitem(runs.RUNS, "base", replace(base_spec, sft=replace(base_spec.sft, steps=1)))
    assert runs.pretrained_key("base", 1) == key  # SFT is not part of pretraining...
    process_key = runs.pretrained_key("process-base", 1)
    monkeypatch.setitem(runs.RUNS, "base", replace(base_spec, pretrain=replace(base_spec.pretrain, steps=1)))
    assert runs.pretrained_key("base", 1) != key  # ...pretraining is,
    assert runs.pretrained_key("process-base", 1) != process_key  # and so is the pretraining a run continues
    with pytest.raises(ValueError, match="not a base run"):
        runs.pretrained_key("main", 1)
