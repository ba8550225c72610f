"""The package's layers import one way only (rlbook's docstring; ARCHITECTURE.md, section 2).

Read from the source, as the cache key is (rlbook.core.source): every import
statement at any depth counts, imports for annotations only (under ``if
TYPE_CHECKING:``) included, so a type cannot hide a cycle.
"""

from __future__ import annotations

import pytest

from rlbook.core import source

#: Layer -> the layers its modules may import.
ALLOWED = {
    "core": {"core"},
    "figures": {"figures", "core"},
    "record": {"record", "core"},
    "runs": {"runs", "core", "record"},
    "analysis": {"analysis", "core", "runs", "record", "figures"},
    "trl": {"trl", "core", "runs", "record", "analysis", "figures"},
    "book": {"book", "core", "runs", "record", "analysis", "trl"},
    "exercises": {"exercises", "core", "runs", "record", "analysis", "trl", "book"},
    "publish": {"publish", "core", "runs", "figures"},
    "bench": {"bench", "core", "runs", "record", "trl", "publish", "book"},
    "cli": {"cli", "core", "runs", "record", "analysis", "trl", "publish", "bench", "book", "figures", "exercises"},
}


def all_modules() -> list[str]:
    names = []
    for path in sorted(source.ROOT.rglob("*.py")):
        parts = path.relative_to(source.ROOT).with_suffix("").parts
        if parts[-1] == "__main__":
            continue
        parts = parts[:-1] if parts[-1] == "__init__" else parts
        if parts:
            names.append(".".join(("rlbook", *parts)))
    return names


def layer(module: str) -> str:
    return module.split(".")[1]


def test_every_module_belongs_to_a_layer():
    assert {layer(m) for m in all_modules()} == set(ALLOWED)


@pytest.mark.parametrize("module", all_modules())
def test_a_module_imports_only_the_layers_below_it(module):
    bad = sorted(m for m in source.imported_modules(module, type_only=True) if layer(m) not in ALLOWED[layer(module)])
    assert not bad, f"{module} ({layer(module)}) may import only {sorted(ALLOWED[layer(module)])}, not {bad}"


def test_there_are_no_import_cycles():
    graph = {m: source.imported_modules(m, type_only=True) for m in all_modules()}
    done: set[str] = set()

    def visit(module: str, path: list[str]) -> None:
        if module in path:
            raise AssertionError("import cycle: " + " -> ".join(path[path.index(module) :] + [module]))
        if module in done:
            return
        for child in sorted(graph.get(module, ())):
            # A module importing its own package's __init__ (a relative "from . import x"), or a package
            # importing its own submodules by their full name, is not a cycle.
            if child != module and not module.startswith(child + "."):
                visit(child, path + [module])
        done.add(module)

    for module in graph:
        visit(module, [])
