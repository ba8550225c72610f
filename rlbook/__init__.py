"""rlbook: the engine of the book *Reinforcement Learning for Reasoning*.

The package is layered, and each layer imports only those below it:

- ``rlbook.core``: the engine (the world, the policy, sampling, verifiers,
  advantages, losses, the SFT and RL loops, evaluation, statistics);
- ``rlbook.record``: the run record (schema, files, display);
- ``rlbook.runs``: the book's named runs and their cache;
- ``rlbook.analysis``: the chapters' measurements, tables and figures;
- ``rlbook.trl``: the bridge to TRL (the appendix);
- ``rlbook.exercises``: the checkers of the exercises;
- ``rlbook.publish`` and ``rlbook.bench``: building the book, benchmarking it;
- ``rlbook.cli``: the command line.

The chapters import modules by their short names, ``from rlbook import runs,
world, advantages``: this module resolves each short name to its module on
first use, so importing ``rlbook`` alone loads nothing heavy. Importing it
pins the numerical configuration (:mod:`rlbook.core.numerics`).
"""

from __future__ import annotations

import importlib
from types import ModuleType

from rlbook.core import numerics

numerics.pin()  # before torch chooses a kernel: the same kernels, whatever the CPU would choose

#: Short name -> full module name, for ``from rlbook import <short name>``.
MODULES: dict[str, str] = {
    **{
        name: f"rlbook.core.{name}"
        for name in (
            "world",
            "policy",
            "adamw",
            "sampling",
            "rewards",
            "advantages",
            "losses",
            "train",
            "rl",
            "loop",
            "evaluate",
            "stats",
            "progress",
            "source",
            "reward_model",
            "preferences",
        )
    },
    **{
        name: f"rlbook.analysis.{name}"
        for name in ("workshop", "disagreement", "credit", "audit", "selection", "reward_spec", "passk", "judge")
    },
    "runs": "rlbook.runs",
    "prefetch": "rlbook.runs.prefetch",
    "book": "rlbook.book",
    "figures": "rlbook.figures",
    "record": "rlbook.record",
    "trl_bridge": "rlbook.trl",
    "exercises": "rlbook.exercises",
    "build": "rlbook.publish.build",
    "site": "rlbook.publish.site",
    "lint": "rlbook.publish.lint",
    "bench": "rlbook.bench",
    "cli": "rlbook.cli",
}

__all__ = sorted(MODULES)  # noqa: PLE0605 -- a list, computed from MODULES so the two never differ


def __getattr__(name: str) -> ModuleType:
    """Import the module that the short ``name`` stands for (PEP 562)."""
    try:
        full = MODULES[name]
    except KeyError:
        raise AttributeError(f"module 'rlbook' has no attribute {name!r}") from None
    module = importlib.import_module(full)
    globals()[name] = module
    return module


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(MODULES))
