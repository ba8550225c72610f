"""The numerical configuration the book's runs train under: pinned to AVX2 kernels, so that CPUs repeat them.

A CPU is a numerical draw of its own. PyTorch picks its vectorised kernels
by what the processor offers (``ATEN_CPU_CAPABILITY``), MKL picks its matrix
kernels by CPU generation (``MKL_CBWR``) and oneDNN does the same for the
matrix products it takes over (``ONEDNN_MAX_CPU_ISA``). A difference in the
last bit of one product grows over training, so the same seed gave other
weights on an AVX-512 machine than on an AVX2 one. Setting all three to
AVX2, which nearly every x86-64 CPU of the last decade runs at full speed,
gave the same weights on the machines the book was built on, whatever the
processor would have chosen (``tests/unit/core/test_numerics.py`` trains
under masks that make this machine look like an older one, and
``BENCHMARKS.md`` has the cost). It is not enough everywhere: a Xeon with
AVX512-FP16 and AMX drew other weights under the same pin (README).

:func:`pin` sets the three variables; ``import rlbook`` calls it, before
torch has chosen a kernel, so every page kernel and every worker that trains
a run is pinned. ``RLBOOK_NUMERICS=native`` leaves the machine's own choice
(the audit's second draw, ``ROBUSTNESS.md``). On ARM, or with another BLAS,
the variables do nothing and the draw is the machine's own: there the laws,
not the digits, carry the book. This module imports nothing heavy, so it can
run before torch is loaded.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping

SWITCH = "RLBOOK_NUMERICS"
"""The environment variable that chooses the configuration: ``pinned`` (the default) or ``native``."""

MODES = ("pinned", "native")

PINNED = {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "AVX2", "ONEDNN_MAX_CPU_ISA": "AVX2"}
"""What the pinned configuration sets: PyTorch's, MKL's and oneDNN's kernels at AVX2 (measured: all three matter)."""


def mode(environ: MutableMapping[str, str] = os.environ) -> str:
    """``pinned`` or ``native``, from ``RLBOOK_NUMERICS``; ValueError naming the choices for anything else."""
    value = environ.get(SWITCH, "pinned").strip().lower() or "pinned"
    if value not in MODES:
        raise ValueError(f"{SWITCH} must be one of {', '.join(MODES)}, not {environ[SWITCH]!r}")
    return value


def pin(environ: MutableMapping[str, str] = os.environ) -> None:
    """Set :data:`PINNED` in ``environ`` (overriding what was there) unless ``RLBOOK_NUMERICS`` is ``native``.

    It takes effect in a process whose torch has not yet run a kernel, and in
    every process started after it (the build's workers and page kernels).
    """
    if mode(environ) == "pinned":
        environ.update(PINNED)


def draw() -> str:
    """The numerical draw this process computes in: ``pinned-avx2``, or ``native-<capability>``.

    ``pinned-avx2`` only when the pin is asked for and in effect: torch runs
    its AVX2 kernels and MKL and oneDNN are held to AVX2. A process whose
    torch chose its kernels before :func:`pin` ran (a notebook that used torch
    before importing rlbook) is a native draw, and its runs are kept apart in
    the cache (the run key holds the draw).
    """
    import torch

    capability = torch.backends.cpu.get_cpu_capability().lower()
    held = all(os.environ.get(k) == v for k, v in PINNED.items())
    if mode() == "pinned" and held and capability == "avx2":
        return "pinned-avx2"
    return f"native-{capability}"
