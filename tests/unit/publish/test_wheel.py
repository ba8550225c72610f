"""rlbook.publish.wheel: the book's package as a wheel beside the notebooks, and the notebook's first cell."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from rlbook.publish.config import Page
from rlbook.publish.execute import qmd_to_notebook
from rlbook.publish.jupyter import student_notebooks
from rlbook.publish.render import pandoc_path
from rlbook.publish.wheel import (
    book_wheel,
    build_wheel,
    install_line,
    package_version,
    requirement_cell,
    source_key,
    wheel_name,
)

ROOT = Path(__file__).resolve().parents[3]
WHEEL = "rlbook-0.1.0+0123456789abcdef-py3-none-any.whl"

RUN_CELL = """
import importlib.metadata, json, sys
if {hide}:
    sys.modules["rlbook"] = None  # what importlib finds on a machine without the package
if {installed!r}:
    importlib.metadata.version = lambda name: {installed!r}  # what another download of the book installed
from IPython.core.interactiveshell import InteractiveShell
result = InteractiveShell.instance().run_cell(json.loads(sys.argv[1]))
print("error:", type(result.error_in_exec).__name__ if result.error_in_exec else None)
"""


def run_in_ipython(source: str, hide: bool, installed: str = "") -> list[str]:
    """What IPython shows for one cell, with ``rlbook`` importable or not (and of version ``installed``)."""
    done = subprocess.run(
        [sys.executable, "-c", RUN_CELL.format(hide=hide, installed=installed), json.dumps(source)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return [line for line in done.stdout.splitlines() if line.strip()]


def test_without_rlbook_the_first_cell_shows_one_line_naming_the_wheel_and_where_it_is():
    shown = run_in_ipython(requirement_cell(WHEEL), hide=True)
    assert shown == [install_line(WHEEL), "error: RlbookMissing"]  # one line, no traceback, Run All stops
    assert f"pip install {WHEEL}" in shown[0] and "notebooks/ folder" in shown[0]


def test_with_rlbook_the_first_cell_shows_nothing():
    assert run_in_ipython(requirement_cell(WHEEL), hide=False) == ["error: None"]
    assert run_in_ipython(requirement_cell(WHEEL), hide=False, installed="0.1.0+0123456789abcdef") == ["error: None"]


def test_another_build_of_the_book_installed_stops_the_notebook_with_the_version_it_needs():
    shown = run_in_ipython(requirement_cell(WHEEL), hide=False, installed="0.1.0+fedcba9876543210")
    assert shown[-1] == "error: RlbookMissing"
    assert shown[0].startswith("rlbook 0.1.0+fedcba9876543210 is installed; this notebook was built with 0.1.0+0123")


def test_a_page_that_needs_an_extra_names_it_in_the_line():
    assert f'pip install "{WHEEL}[trl]"' in install_line(WHEEL, "trl")
    assert 'pip install -e ".[trl]"' in install_line(WHEEL, "trl")


def test_the_wheel_name_comes_from_pyproject(tmp_path):
    assert wheel_name(ROOT) == f"rlbook-{package_version(ROOT)}+{source_key(ROOT)}-py3-none-any.whl"
    (tmp_path / "pyproject.toml").write_text('[build-system]\nrequires = []\n\n[project]\nname = "x"\n')
    with pytest.raises(ValueError, match="no version"):
        package_version(tmp_path)


def test_each_student_notebook_starts_with_the_check_and_names_its_pages_extra(tmp_path):
    (tmp_path / "chapters").mkdir()
    plain, extra = Page("chapters/01-a.qmd", "main", "1", "A"), Page("chapters/appendix-b.qmd", "appendix", "A", "B")
    (tmp_path / plain.source).write_text("# A\n\nText.\n\n```{python}\nx = 1\n```\n")
    (tmp_path / extra.source).write_text(
        "---\nrlbook-needs:\n  extra: trl\n  packages: [trl]\n---\n\n# B\n\n```{python}\ny = 2\n```\n"
    )
    executed = {p.stem: qmd_to_notebook((tmp_path / p.source).read_text()) for p in (plain, extra)}
    notebooks = student_notebooks(tmp_path, [plain, extra], executed, pandoc_path(), None, WHEEL)
    for stem, extra_name in (("01-a", None), ("appendix-b", "trl")):
        code = [c for c in notebooks[stem].cells if c.cell_type == "code"]
        assert code[0].source == requirement_cell(WHEEL, extra_name) and code[0].execution_count is None
        assert code[0].metadata["jupyter"] == {"source_hidden": True} and code[1].source in ("x = 1", "y = 2")
    without = student_notebooks(tmp_path, [plain], executed, pandoc_path(), None)
    assert [c.source for c in without["01-a"].cells if c.cell_type == "code"] == ["x = 1"]


def test_the_wheel_holds_the_package_and_its_assets_and_leaves_the_checkout_clean(tmp_path):
    before = sorted(path.name for path in ROOT.iterdir())
    wheel = build_wheel(ROOT, tmp_path)
    assert wheel.name == wheel_name(ROOT) and sorted(path.name for path in ROOT.iterdir()) == before
    names = zipfile.ZipFile(wheel).namelist()
    assert "rlbook/__init__.py" in names and "rlbook/publish/assets/workshop/page.js" in names
    assert not any("__pycache__" in name for name in names)


def test_the_book_wheel_is_built_once_per_version_of_the_sources(tmp_path, monkeypatch):
    monkeypatch.setenv("RLBOOK_CACHE", str(tmp_path / "cache"))
    first = book_wheel(tmp_path / "a")
    kept = tmp_path / "cache" / "wheels" / source_key() / first.name
    assert kept.is_file() and first.read_bytes() == kept.read_bytes()
    stamp = kept.stat().st_mtime_ns
    assert book_wheel(tmp_path / "b").read_bytes() == first.read_bytes() and kept.stat().st_mtime_ns == stamp


def test_a_damaged_kept_wheel_is_rebuilt_and_never_published(tmp_path, monkeypatch):
    monkeypatch.setenv("RLBOOK_CACHE", str(tmp_path / "cache"))
    good = book_wheel(tmp_path / "a").read_bytes()
    kept = tmp_path / "cache" / "wheels" / source_key() / wheel_name(ROOT)
    kept.write_bytes(good[: len(good) // 2])  # a truncated download
    with pytest.warns(UserWarning, match="damaged; building it again"):
        again = book_wheel(tmp_path / "b")
    assert zipfile.ZipFile(again).testzip() is None and kept.read_bytes() == again.read_bytes()


def test_the_wheel_version_follows_the_code(tmp_path):
    import shutil

    copy = tmp_path / "copy"
    (copy / "rlbook").mkdir(parents=True)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, copy / name)
    (copy / "rlbook" / "__init__.py").write_text("x = 1\n")
    first = wheel_name(copy)
    (copy / "rlbook" / "__init__.py").write_text("x = 2\n")
    assert wheel_name(copy) != first and first.startswith(f"rlbook-{package_version(ROOT)}+")
