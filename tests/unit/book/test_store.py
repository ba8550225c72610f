"""rlbook.book: facts cached beside the runs, keyed by their code and their runs, never served damaged."""

from __future__ import annotations

import shutil
import sys
import types

import pytest

from rlbook import book
from rlbook.book import facts, store
from rlbook.book.claims import Claim, ClaimError
from rlbook.book.needs import Need, on_seeds
from rlbook.core import source


@pytest.fixture
def toy(monkeypatch, tmp_path):
    """A facts module 'toy' that counts how often it computes, over a cache in tmp_path."""
    monkeypatch.setenv("RLBOOK_CACHE", str(tmp_path))
    module = types.ModuleType("rlbook.book.toy")
    module.PAGE, module.calls = "chapters/toy.qmd", []
    module.needs = lambda seeds: on_seeds(["base"], seeds)
    module.compute = lambda seeds: module.calls.append(seeds) or {"seeds": list(seeds), "x": facts.Num(0.5)}
    module.CLAIMS = (Claim("half", "x is a half", lambda F: F.x == 0.5, kind="law"),)
    monkeypatch.setitem(sys.modules, "rlbook.book.toy", module)
    monkeypatch.setattr(book, "topics", lambda: ["toy"])
    monkeypatch.setattr(store, "code_key", lambda module, root=source.ROOT: "c0de")
    return module


def test_facts_are_computed_once_then_served_from_the_cache(toy, tmp_path):
    first = book.load("toy", seeds=(0, 1))
    second = book.load("toy", seeds=(0, 1))
    assert first == second and str(second.x) == "0.50" and toy.calls == [(0, 1)]
    entry = next(p for p in tmp_path.glob("facts-toy-seeds0-1-t1-*") if p.is_dir())  # not the entry's lock file
    assert sorted(p.name for p in entry.iterdir()) == ["facts.json", "manifest.json", "needs.json"]
    assert "base seed 1" in (entry / "needs.json").read_text()


@pytest.mark.parametrize("damage", ["truncate", "edit", "remove manifest"])
def test_a_damaged_entry_is_recomputed_with_a_notice(toy, tmp_path, damage):
    book.load("toy")
    entry = next(tmp_path.glob("facts-toy-*[!k]"))
    text = (entry / "facts.json").read_text()
    if damage == "truncate":
        (entry / "facts.json").write_text(text[: len(text) // 2])
    elif damage == "edit":
        (entry / "facts.json").write_text(text.replace("0.5", "0.9"))
    else:
        (entry / "manifest.json").unlink()
    with pytest.warns(UserWarning, match="damaged"):
        again = book.load("toy")
    assert again.x == 0.5 and len(toy.calls) == 2


def test_the_key_follows_code_seeds_and_the_runs_read(toy, monkeypatch):
    needs = on_seeds(["base"], (0,))
    key = store.facts_key("rlbook.book.toy", (0,), 1, needs)
    assert store.facts_key("rlbook.book.toy", (0, 1), 1, needs) != key
    assert store.facts_key("rlbook.book.toy", (0,), 1, on_seeds(["main"], (0,))) != key
    monkeypatch.setattr(store, "code_key", lambda module, root=source.ROOT: "edited")
    assert store.facts_key("rlbook.book.toy", (0,), 1, needs) != key


def test_a_retrained_run_changes_the_key_of_the_facts_that_read_it(toy, monkeypatch):
    needs = on_seeds(["base"], (0,))
    key = store.facts_key("rlbook.book.toy", (0,), 1, needs)
    monkeypatch.setattr(Need, "key", lambda self, threads: "retrained")
    assert store.facts_key("rlbook.book.toy", (0,), 1, needs) != key


def test_a_broken_law_fails_a_strict_load_and_is_a_notice_otherwise(toy, monkeypatch):
    toy.CLAIMS = (Claim("third", "x is a third", lambda F: F.x == 1 / 3, lambda F: F.x, kind="law"),)
    monkeypatch.setenv("RLBOOK_STRICT", "1")
    with pytest.raises(ClaimError, match="(?s)chapter 'toy' .*law 'third' does not hold: x is a third; saw 0.50"):
        book.load("toy")
    monkeypatch.delenv("RLBOOK_STRICT")
    assert "did not hold (saw 0.50)" in book.load("toy").law("third")
    assert book.load("toy", check=False).x == 0.5


def test_an_unknown_topic_or_run_is_named():
    with pytest.raises(ValueError, match="no chapter facts named 'nope'"):
        book.chapter("nope")
    with pytest.raises(ValueError, match="unknown run"):
        Need("nope", 0)


def _edited_copy(tmp_path, module: str):
    root = tmp_path / "rlbook"
    shutil.copytree(source.ROOT, root, ignore=shutil.ignore_patterns("__pycache__"))
    path = source.module_path(module, root)
    path.write_text(path.read_text() + "\n_EDITED = 1\n")
    return root


@pytest.mark.parametrize("edited", ["rlbook.analysis.workshop", "rlbook.analysis.passk", "rlbook.book.phrasing"])
def test_editing_analysis_code_changes_only_the_facts_that_import_it(tmp_path, edited):
    root = _edited_copy(tmp_path, edited)
    for topic in book.topics():
        module = f"rlbook.book.{topic}"
        depends = edited in source.import_closure((module,))
        changed = store.code_key(module, root) != store.code_key(module)
        assert changed == depends, f"{topic}: imports {edited}: {depends}, key changed: {changed}"


def test_a_new_run_in_the_catalogue_changes_no_chapters_code_key(tmp_path):
    root = _edited_copy(tmp_path, "rlbook.runs.catalogue")  # as adding a RunSpec would
    assert all(store.code_key(f"rlbook.book.{t}", root) == store.code_key(f"rlbook.book.{t}") for t in book.topics())
