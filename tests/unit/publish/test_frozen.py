"""Reusing an executed page (rlbook.publish.frozen): what its key reads, and the notebook kept under it."""

from __future__ import annotations

import nbformat

from rlbook.publish import frozen


def test_the_cache_listing_counts_entries_not_locks_holders_temporaries_or_wheels(tmp_path):
    (tmp_path / "main-seed0-t1-abc").mkdir()
    listed = frozen.cache_listing(tmp_path)
    (tmp_path / "wheels" / "key").mkdir(parents=True)  # the book's wheel, built after the pages
    for passing in ("main-seed0-t1-abc.lock", "main-seed0-t1-abc.lock.holder", ".x.tmp-12", "base.tmp-3"):
        (tmp_path / passing).write_text("")
    assert frozen.cache_listing(tmp_path) == listed
    (tmp_path / "facts-loop-seeds0-1-2-t1-def").mkdir()
    assert frozen.cache_listing(tmp_path) != listed
    assert frozen.cache_listing(tmp_path / "absent") == ""


def test_the_environment_holds_the_books_and_the_numerical_libraries_variables_only(monkeypatch):
    monkeypatch.setenv("RLBOOK_NUMERICS", "native")
    monkeypatch.setenv("MKL_CBWR", "AVX2")
    monkeypatch.setenv("UNRELATED_TO_THE_BOOK", "1")
    monkeypatch.setenv("RLBOOK_PROGRESS", "0")  # progress bars: no page draws one in a build
    text = frozen.environment_text()
    assert "RLBOOK_NUMERICS=native" in text and "MKL_CBWR=AVX2" in text
    assert "UNRELATED" not in text and "RLBOOK_PROGRESS" not in text


def test_the_key_changes_with_the_page_the_figures_and_what_every_page_reads():
    key = frozen.execution_key("# A page", "svg", "shared")
    assert key == frozen.execution_key("# A page", "svg", "shared")
    others = {frozen.execution_key(*args) for args in [("# A page.", "svg", "shared"), ("# A page", None, "shared")]}
    others.add(frozen.execution_key("# A page", "svg", "shared, and a new run"))
    assert key not in others and len(others) == 3


def test_a_notebook_is_reused_only_under_the_key_it_was_executed_under(tmp_path):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("The answer is 42.")])
    assert frozen.reusable(tmp_path, "01-first", "k1") is None  # never executed
    nbformat.write(nb, tmp_path / "01-first.ipynb")
    assert frozen.reusable(tmp_path, "01-first", "k1") is None  # executed, but under no recorded key
    frozen.record(tmp_path, "01-first", "k1")
    kept = frozen.reusable(tmp_path, "01-first", "k1")
    assert kept is not None and kept.cells[0].source == "The answer is 42."
    assert frozen.reusable(tmp_path, "01-first", "k2") is None
    (tmp_path / "01-first.ipynb").write_text("not a notebook")
    assert frozen.reusable(tmp_path, "01-first", "k1") is None
    frozen.forget(tmp_path, "01-first")
    assert not (tmp_path / "01-first.key").exists() and not list(tmp_path.glob(".*tmp-*"))
    frozen.forget(tmp_path, "01-first")  # forgetting twice is harmless


def test_the_inputs_every_page_shares_name_the_machine_and_the_libraries():
    assert "nbformat==" in frozen.libraries_text() and frozen.machine_text().strip()


def test_the_shared_inputs_follow_the_books_configuration_and_the_run_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("RLBOOK_CACHE", str(tmp_path / "cache"))
    (tmp_path / "_quarto.yml").write_text("project:\n  type: book\n")
    (tmp_path / "rlbook").mkdir()
    (tmp_path / "rlbook" / "__init__.py").write_text("")
    shared = frozen.shared_inputs(tmp_path)
    (tmp_path / "rlbook" / "__pycache__").mkdir()
    (tmp_path / "rlbook" / "__pycache__" / "x.pyc").write_bytes(b"\0")
    assert frozen.shared_inputs(tmp_path) == shared  # compiled caches are not the package
    (tmp_path / "rlbook" / "data.json").write_text("{}")
    assert frozen.shared_inputs(tmp_path) != shared
    (tmp_path / "rlbook" / "data.json").unlink()
    assert frozen.shared_inputs(tmp_path) == shared
    (tmp_path / "_quarto.yml").write_text("project:\n  type: book\nbibliography: references.bib\n")
    edited = frozen.shared_inputs(tmp_path)
    assert edited != shared
    (tmp_path / "cache" / "base-seed0-t1-abc").mkdir(parents=True)
    assert frozen.shared_inputs(tmp_path) != edited
