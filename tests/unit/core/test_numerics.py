"""rlbook.core.numerics: the pinned configuration overrides the environment and repeats a training bit for bit.

The cross-machine check runs a short training of the book's policy in fresh
processes: once as a reader's machine would run it, and once with the
environment asking for other kernels and hiding this CPU's AVX-512 from MKL,
oneDNN and glibc (what an older processor would offer). The pinned
configuration gives the same weights in both; without the pin, oneDNN alone
changed them on the book's AVX-512 machine (the commit that added the pin).
"""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

from rlbook.core import numerics

TRAIN = """
import torch
from rlbook.core import numerics
from rlbook.core.policy import Policy, weights_hash
torch.manual_seed(0)
policy = Policy()
opt = torch.optim.AdamW(policy.parameters(), lr=1e-2)
ids = torch.randint(0, policy.cfg.vocab_size, (64, 12))
for _ in range(30):
    logits = policy(ids[:, :-1])[0]
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
print(weights_hash(policy), numerics.draw())
"""

OLDER_CPU = {
    "ATEN_CPU_CAPABILITY": "default",
    "MKL_CBWR": "COMPATIBLE",
    "ONEDNN_MAX_CPU_ISA": "AVX512_CORE",
    "MKL_ENABLE_INSTRUCTIONS": "AVX2",
    "GLIBC_TUNABLES": "glibc.cpu.hwcaps=-AVX512F,-AVX512VL,-AVX512BW,-AVX512DQ,-AVX512CD",
}


def train(**env: str) -> tuple[str, str]:
    import os

    base = {k: v for k, v in os.environ.items() if k not in OLDER_CPU and k != numerics.SWITCH}
    done = subprocess.run(
        [sys.executable, "-c", TRAIN], env={**base, **env}, capture_output=True, text=True, check=True, timeout=300
    )
    digest, draw = done.stdout.split()
    return digest, draw


def test_pin_sets_the_three_variables_over_what_was_there():
    environ = {"ATEN_CPU_CAPABILITY": "avx512", "MKL_CBWR": "AUTO"}
    numerics.pin(environ)
    assert environ == numerics.PINNED


def test_native_leaves_the_environment_alone_and_a_bad_value_is_named():
    environ = {numerics.SWITCH: "native", "MKL_CBWR": "AUTO"}
    numerics.pin(environ)
    assert environ == {numerics.SWITCH: "native", "MKL_CBWR": "AUTO"}
    with pytest.raises(ValueError, match="RLBOOK_NUMERICS must be one of pinned, native, not 'fast'"):
        numerics.mode({numerics.SWITCH: "fast"})


@pytest.mark.skipif(
    platform.machine().lower() not in ("x86_64", "amd64"),
    reason="the pin holds x86-64 kernels; elsewhere the draw is the machine's",
)
def test_the_pinned_configuration_trains_the_same_weights_whatever_the_cpu_would_choose():
    mine = train()
    older = train(**OLDER_CPU)
    assert mine[1] == "pinned-avx2"
    assert older == mine
    assert train(**OLDER_CPU, RLBOOK_NUMERICS="native")[0] != mine[0]  # the masks do change unpinned kernels
