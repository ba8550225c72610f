"""Hashes of rlbook's own source code: what a run's cache key and a run record say about the code.

Two questions have two hashes:

- *Can this code change a run's result?* :func:`closure_hash` hashes the
  modules that the training code imports, directly or through others (its
  import closure, found by reading the import statements, at any depth of
  the code, without importing anything), with comments and docstrings left
  out. The cache key of every run (``rlbook.runs``) is built on it, so
  editing a chapter's table, a plot or the command line retrains nothing,
  while editing the engine retrains every run it could change.
- *Which code exactly was this?* :func:`package_hash` hashes every source
  file of the package byte for byte; the run record (chapter 5) and the
  build's page cache use it.
"""

from __future__ import annotations

import ast
import functools
import hashlib
from pathlib import Path
from typing import Any, cast

PACKAGE = "rlbook"
ROOT = Path(__file__).resolve().parents[1]


def module_path(name: str, root: Path = ROOT) -> Path | None:
    """The source file of rlbook module ``name`` under ``root`` (a package's ``__init__.py``), or None."""
    parts = name.split(".")
    if parts[0] != PACKAGE:
        return None
    base = root.joinpath(*parts[1:])
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _aliases() -> dict[str, str]:
    """The short names that ``from rlbook import <name>`` resolves (:data:`rlbook.MODULES`)."""
    import rlbook

    return rlbook.MODULES


def _is_package(name: str, root: Path) -> bool:
    path = module_path(name, root)
    return path is not None and path.name == "__init__.py"


def imported_modules(name: str, root: Path = ROOT, type_only: bool = False) -> set[str]:
    """The rlbook modules that module ``name`` imports anywhere in its code.

    Imports under ``if TYPE_CHECKING:`` (for annotations only) are left out,
    as the cache key needs, unless ``type_only`` asks for them too, as the
    layer test does: a type-only import is still an edge of the design.
    """
    path = module_path(name, root)
    if path is None:
        raise ValueError(f"{name!r} is not a module of {PACKAGE}")
    package = name if _is_package(name, root) else name.rpartition(".")[0]
    aliases = _aliases()
    found: set[str] = set()
    for base, level, names in _import_statements(path.read_text(), type_only):
        if level:
            anchor = package.split(".")[: len(package.split(".")) - (level - 1)]
            base = ".".join(anchor + ([base] if base else []))
        if base.split(".")[0] != PACKAGE:
            continue
        found.add(base)
        for alias in names:
            child = f"{base}.{alias}"
            if base == PACKAGE and alias in aliases:
                found.add(aliases[alias])
            elif module_path(child, root) is not None:
                found.add(child)
    return {m for m in found if module_path(m, root) is not None and m != PACKAGE}


@functools.lru_cache(maxsize=1024)
def _import_statements(text: str, type_only: bool) -> tuple[tuple[str, int, tuple[str, ...]], ...]:
    """The import statements of the source ``text``, as (module, level, names): ``import a.b`` is ("a.b", 0, ()).

    Parsing is what costs when the keys of every chapter are computed, and
    the chapters share most of their modules, so each text is parsed once
    per process; the cache is keyed on the text itself, so an edited file
    is parsed again.
    """
    tree = ast.parse(text)
    found: list[tuple[str, int, tuple[str, ...]]] = []
    for node in ast.walk(tree) if type_only else _runtime_nodes(tree):
        if isinstance(node, ast.Import):
            found.extend((a.name, 0, ()) for a in node.names if a.name.split(".")[0] == PACKAGE)
        elif isinstance(node, ast.ImportFrom):
            found.append((node.module or "", node.level, tuple(a.name for a in node.names)))
    return tuple(found)


def _runtime_nodes(tree: ast.AST):
    """Every node of ``tree`` except those under ``if TYPE_CHECKING:`` (imports for annotations only)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            stack.extend(node.orelse)
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def import_closure(entries: tuple[str, ...], root: Path = ROOT) -> list[str]:
    """The modules ``entries`` import, directly or through others, with the packages that hold them, sorted.

    A module's packages are in the closure because importing the module runs
    their ``__init__.py``; the root package is not, since it only maps short
    names to modules (:data:`rlbook.MODULES`) and runs no code of its own.
    """
    seen: set[str] = set()
    todo = list(entries)
    while todo:
        name = todo.pop()
        if name in seen or name == PACKAGE:
            continue
        seen.add(name)
        parts = name.split(".")
        todo.extend(".".join(parts[:i]) for i in range(2, len(parts)))
        todo.extend(imported_modules(name, root))
    return sorted(seen)


def _code_only(path: Path) -> str:
    """The syntax tree of ``path`` with every docstring removed, dumped as text (comments are never in it)."""
    return _code_of(path.read_text())


@functools.lru_cache(maxsize=1024)
def _code_of(text: str) -> str:
    """:func:`_code_only` of the source ``text``, computed once per process for each text (see :func:`_import_statements`)."""
    tree = ast.parse(text)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            cast(Any, node).body = body[1:] or [ast.Pass()]  # a node of any type that has a body
    return ast.dump(tree)


@functools.lru_cache(maxsize=8)
def closure_hash(entries: tuple[str, ...], root: Path = ROOT, by_value: tuple[str, ...] = ()) -> str:
    """Short SHA-256 of the code (not the comments or docstrings) of :func:`import_closure` of ``entries``.

    The modules in ``by_value`` are still followed for their imports, but
    their own code is left out: the caller puts what they define into its
    keys by value (the run catalogue, whose runs a key names one by one, so
    that adding a run retrains no other).
    """
    digest = hashlib.sha256()
    for name in import_closure(entries, root):
        digest.update(name.encode())
        if name not in by_value:
            path = module_path(name, root)
            assert path is not None  # import_closure lists only modules that have a file
            digest.update(_code_only(path).encode())
    return digest.hexdigest()[:16]


def package_hash() -> str:
    """Short SHA-256 of every source file of the package, byte for byte, with its path (chapter 5's record)."""
    digest = hashlib.sha256()
    for path in sorted(ROOT.rglob("*.py")):
        digest.update(path.relative_to(ROOT).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]
