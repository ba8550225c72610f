"""A reference solution as code a reader can paste into the answer cell: its imports, its definition, its answer.

An exercise's solution box (:func:`rlbook.exercises.registry.solution`) shows
the code that :func:`pasteable` writes. The reference is defined in its
checker's module, where ``np``, ``parse_prompt`` or a module constant are
already imported; pasted alone into a page it would stop at the first of
those names. So the box starts with one import line for each name the
reference reads from its module (:func:`imports`), defines the function
under the name the answer cell asks for, and, when the answer is a value,
ends by assigning it to the answer cell's variable. The tests paste every box
into its answer cell on its page and run the check (``tests/book``).
"""

from __future__ import annotations

import ast
import builtins
import re
import sys
import textwrap
import types
from collections import defaultdict
from collections.abc import Callable


def read_names(source: str) -> set[str]:
    """Every name that ``source`` reads (``np`` in ``np.mean``, a name in an annotation), bound there or not."""
    return {node.id for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Name)}


def _import_line(name: str, value: object, home: str) -> str:
    """The line that binds ``name`` to ``value`` in a fresh namespace; ``home`` is the reference's module."""
    if isinstance(value, types.ModuleType):
        package, _, leaf = value.__name__.rpartition(".")
        if not package:
            return f"import {leaf}" if leaf == name else f"import {leaf} as {name}"
        return f"from {package} import {leaf}" + ("" if leaf == name else f" as {name}")
    origin = getattr(value, "__module__", None)
    if isinstance(origin, str) and getattr(sys.modules.get(origin), name, None) is value:
        home = origin
    return f"from {home} import {name}"


def imports(fn: Callable, source: str) -> list[str]:
    """The import lines a fresh notebook needs to run ``source``, the text of ``fn``: one per global it reads.

    A name the function binds itself (a parameter, a local) is read from its
    own scope and needs none; nor does a builtin. A module is imported as
    itself (``import numpy as np``); anything else from the module that
    defines it where that module has it under the same name, else from the
    function's own module, which holds it under that name.
    """
    own = set(fn.__code__.co_varnames) | {fn.__name__}
    plain, taken = set(), defaultdict(list)
    for name in sorted(read_names(source) - own):
        if name not in fn.__globals__ or hasattr(builtins, name):
            continue
        line = _import_line(name, fn.__globals__[name], fn.__module__)
        if line.startswith("import "):
            plain.add(line)
        else:
            module, _, what = line.removeprefix("from ").partition(" import ")
            taken[module].append(what)
    return sorted(plain) + [
        f"from {module} import {', '.join(sorted(names))}" for module, names in sorted(taken.items())
    ]


def renamed(source: str, old: str, new: str) -> str:
    """``source`` with its top-level ``def old(`` renamed ``def new(``."""
    return re.sub(rf"^def {re.escape(old)}\(", f"def {new}(", source, count=1, flags=re.MULTILINE)


def pasteable(fn: Callable, source: str, answer: str, call: str | None = None) -> str:
    """The solution box's code: imports, ``fn`` defined as ``answer`` or, given ``call``, ``answer = fn(call)``.

    ``source`` is ``fn``'s text as the page lays it out; ``call`` is the
    argument list the answer cell passes on (``""`` for none), given when the
    answer is a value rather than the function itself.
    """
    body = textwrap.dedent(source).rstrip("\n") + "\n"
    if call is None and fn.__name__ != answer:
        body = renamed(body, fn.__name__, answer)
    head = imports(fn, body)  # the names the shown code reads
    tail = "" if call is None else f"\n\n{answer} = {fn.__name__}({call})\n"
    return ("\n".join(head) + "\n\n\n" if head else "") + body + tail
