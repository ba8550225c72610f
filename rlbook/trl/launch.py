"""``python -m rlbook.trl``: the appendix's TRL run as a script, on one process or several (appendix).

A launcher (``torchrun``, or ``accelerate launch`` with a multi-GPU
configuration) starts one copy of :func:`main` per process; each trains on
its share of every step's batch, and the first process writes the run record.
:func:`run_processes` runs it on the CPU over gloo, as the appendix and the
tests do; :func:`accelerate_yaml` and :func:`launch_command` give the same
script on GPUs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
import warnings
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from rlbook.core.arguments import bounded_int
from rlbook.core.processes import run_group
from rlbook.core.source import closure_hash
from rlbook.core.world import split
from rlbook.runs.catalogue import MAIN

PACKAGE_ROOT = Path(__file__).resolve().parents[2]
"""The folder that holds this ``rlbook`` package: launched processes import it from there."""

OUTPUTS = ("record.json", "metrics.json", "processes.json")
"""What the first process writes into ``--out``."""


def accelerate_yaml(processes: int = 8, machines: int = 1) -> str:
    """An accelerate config for ``processes`` GPUs on ``machines`` machines, as YAML text (appendix).

    Data parallel (``MULTI_GPU``), full float32 to match the book's runs. The
    book runs the same script on CPU processes (:func:`run_processes`); it has
    no GPU to run this configuration on.
    """
    import yaml

    config = {
        "compute_environment": "LOCAL_MACHINE",
        "distributed_type": "MULTI_GPU",
        "num_machines": machines,
        "num_processes": processes,
        "machine_rank": 0,
        "gpu_ids": "all",
        "mixed_precision": "no",
        "main_training_function": "main",
        "rdzv_backend": "static",
        "same_network": True,
        "use_cpu": False,
    }
    return yaml.safe_dump(config, sort_keys=False)


def launch_command(processes: int = 8, steps: int = 100, config_file: str = "multi_gpu.yaml") -> str:
    """The ``accelerate launch`` command line that runs :func:`main` on several GPUs (appendix)."""
    return (
        f"accelerate launch --config_file {config_file} --num_processes {processes} "
        f"-m rlbook.trl --steps {steps} --processes {processes} --out trl-run"
    )


def started_processes(environ: Mapping[str, str] | None = None) -> int:
    """How many processes the launcher started: ``WORLD_SIZE`` (torchrun and accelerate set it), else 1."""
    return int((os.environ if environ is None else environ).get("WORLD_SIZE", "1"))


def process_check(asked: int | None, environ: dict | None = None) -> tuple[bool, str | None]:
    """Whether a run may start, and the one line to print about its processes (or None).

    ``asked`` is ``--processes``: a run that asked for N processes and got
    another number refuses. Without it, a lone process started by ``accelerate
    launch`` says so, since accelerate's plain launcher starts one process even
    when told ``--num_processes 2`` (it needs a multi-GPU configuration, or
    ``torchrun`` on CPUs).
    """
    env = os.environ if environ is None else environ
    started = started_processes(env)
    if asked is not None and asked != started:
        return False, (
            f"python -m rlbook.trl: --processes {asked} asked for, {started} started "
            f"(on CPUs use torchrun --standalone --nproc_per_node {asked}; accelerate launch starts one "
            "process unless its configuration is multi-GPU); nothing was trained"
        )
    if asked is None and started == 1 and any(key.startswith("ACCELERATE_") for key in env):
        return True, (
            "python -m rlbook.trl: accelerate launch started 1 process; if you asked for more, pass "
            "--processes N to refuse such a run, or use torchrun on CPUs"
        )
    return True, None


def say(line: str) -> None:
    """Print ``line`` in one write: two processes printing at once on one pipe never run their lines together."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def main(argv: list[str] | None = None) -> int:
    """``python -m rlbook.trl``: a TRL run of the book's ``main`` configuration; writes its record (appendix).

    Under a launcher every process runs this; each trains on its share of
    the batch, prints one line, and the first process writes ``record.json``,
    ``metrics.json`` and ``processes.json`` (what each process trained on)
    into ``--out``. With ``--processes N`` a run that did not get N processes
    stops before training, exit 2.
    """
    parser = argparse.ArgumentParser(prog="python -m rlbook.trl", description=main.__doc__)
    parser.add_argument("--steps", type=bounded_int(1, 100_000), default=MAIN.steps, help="RL steps (1 to 100000)")
    prompts = len(split("train", MAIN.world))
    parser.add_argument(
        "--prompts",
        type=bounded_int(0, prompts),
        default=0,
        help=f"prompts per step (0 to {prompts}; default 0: every train prompt)",
    )
    parser.add_argument("--seed", type=bounded_int(0, 2**32 - 1), default=0, help="random seed (0 to 4294967295)")
    parser.add_argument(
        "--eval-every",
        type=bounded_int(0, 100_000),
        default=10,
        help="steps between evaluations (0 to 100000; 0 evaluates never)",
    )
    parser.add_argument(
        "--processes",
        type=bounded_int(1, 100_000),
        default=None,
        help="the number of processes the launcher must have started (default: any)",
    )
    parser.add_argument("--out", default="trl-run")
    args = parser.parse_args(argv)
    go, line = process_check(args.processes)
    if line:
        say(line)
    if not go:
        return 2
    import torch

    from rlbook import record as rec

    from .audit import trl_record
    from .spec import TRLSpec
    from .trainer import run_grpo

    processes = started_processes()
    spec = TRLSpec("trl-main", replace(MAIN, steps=args.steps), args.prompts, args.eval_every)
    run = run_grpo(spec, args.seed, use_cpu=not torch.cuda.is_available(), processes=processes)
    rank = int(os.environ.get("RANK", "0"))
    mine = next(p for p in run.processes if p["rank"] == rank)
    low, high = min(mine["rollouts_per_step"]), max(mine["rollouts_per_step"])
    say(
        f"rank {rank} of {processes}: {mine['optimizer_steps']} optimiser steps, "
        f"{low if low == high else f'{low} to {high}'} completions a step"
    )
    if rank == 0:
        out = Path(args.out)
        rec.save(trl_record(run), out / "record.json")
        (out / "metrics.json").write_text(json.dumps(run.metrics, indent=1))
        (out / "processes.json").write_text(json.dumps(run.processes, indent=1))
        say(f"wrote {', '.join(str(out / name) for name in OUTPUTS)}")
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        # Every process waits for the others, then leaves the group: a process that exited while another still
        # used it was once killed by gloo's teardown (SIGABRT) after the run had finished and been written.
        torch.distributed.barrier()
        torch.distributed.destroy_process_group()
    return 0


def torchrun_command(processes: int, steps: int, prompts: int, out: str) -> list[str]:
    """The ``torchrun`` command line of :func:`run_processes` (the ``torchrun`` beside this Python)."""
    runner = Path(sys.executable).with_name("torchrun")
    return [
        str(runner) if runner.is_file() else "torchrun",
        "--standalone",
        "--nproc_per_node",
        str(processes),
        "-m",
        "rlbook.trl",
        "--steps",
        str(steps),
        "--prompts",
        str(prompts),
        "--eval-every",
        "0",
        "--processes",
        str(processes),
        "--out",
        out,
    ]


def run_processes(out: Path, processes: int = 2, steps: int = 3, prompts: int = 4, timeout: float = 600) -> dict:
    """Run :func:`main` on ``processes`` CPU processes over gloo with ``torchrun``; return what it did (appendix).

    Returns ``command`` (as a reader types it, the output folder shown as
    ``trl-run``), ``lines`` (what the processes printed, in order),
    ``warnings`` (what they wrote to standard error: the libraries' advice), ``code``
    (the exit status) and the files the first process wrote into ``out``,
    read back: ``record``, ``metrics``, ``processes`` (absent if not
    written). The processes import this very ``rlbook`` and share the run cache.
    """
    out.mkdir(parents=True, exist_ok=True)
    command = torchrun_command(processes, steps, prompts, str(out))
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(PACKAGE_ROOT), os.environ.get("PYTHONPATH", "")]),
        "RLBOOK_PROGRESS": "0",
        "OMP_NUM_THREADS": "1",
        "TOKENIZERS_PARALLELISM": "false",
    }
    done = run_group(command, timeout, env=env)  # a launch that times out takes its workers with it

    def lines(text: str) -> list[str]:
        return [line.replace(str(out), "trl-run") for line in text.splitlines() if line.strip()]

    shown = ["torchrun", *command[1:-1], "trl-run"]
    result = {
        "command": " ".join(shown),
        "lines": lines(done.stdout),
        "warnings": lines(done.stderr),
        "code": done.returncode,
    }
    for name in OUTPUTS:
        if (out / name).is_file():
            result[name.removesuffix(".json")] = json.loads((out / name).read_text())
    return result


def run_accelerate_cpu(processes: int = 2, timeout: float = 300) -> dict:
    """``accelerate launch --cpu --num_processes N -m rlbook.trl --processes N``: what happens (appendix).

    accelerate's plain launcher starts one process for this command, so the
    script stops before training. Returns ``command``, ``lines`` (what the
    script printed), ``warnings`` (standard error) and ``code``.
    """
    runner = Path(sys.executable).with_name("accelerate")
    tail = [
        "launch",
        "--cpu",
        "--num_processes",
        str(processes),
        "-m",
        "rlbook.trl",
        "--steps",
        "1",
        "--processes",
        str(processes),
        "--out",
        "trl-run",
    ]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(PACKAGE_ROOT), os.environ.get("PYTHONPATH", "")])}
    with tempfile.TemporaryDirectory() as folder:
        done = run_group([str(runner) if runner.is_file() else "accelerate", *tail], timeout, cwd=folder, env=env)
    return {
        "command": " ".join(["accelerate", *tail]),
        "lines": done.stdout.splitlines(),
        "warnings": done.stderr.splitlines(),
        "code": done.returncode,
    }


def processes_key(processes: int, steps: int, prompts: int) -> str:
    """Cache key of :func:`load_processes_run`: the arguments, the code of the bridge and the rlbook modules it
    imports (:func:`rlbook.core.source.closure_hash`: comments, docstrings and layout left out), the base run and
    TRL's versions."""
    from rlbook import runs

    from .model import trl_versions

    modules = tuple(f"rlbook.trl.{p.stem}" for p in sorted(Path(__file__).parent.glob("*.py")) if p.stem != "__init__")
    sources = closure_hash(modules)
    text = json.dumps(
        [processes, steps, prompts, sources, runs.cache_key("base", 0, runs.DEFAULT_THREADS), trl_versions()]
    )
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def load_processes_run(processes: int = 2, steps: int = 3, prompts: int = 4) -> dict:
    """:func:`run_processes`' result from the run cache, or run now and cached when it succeeded (appendix).

    Under ``accelerate_cpu`` it also holds :func:`run_accelerate_cpu`'s, the
    launch that starts too few processes.

    Cached beside the book's runs under :func:`processes_key`, so a change to
    the bridge, the base run or TRL runs it again.
    """
    from rlbook import runs

    path = runs.cache_root() / f"trl-processes{processes}-{processes_key(processes, steps, prompts)}.json"
    if path.is_file():
        try:
            kept = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(kept, dict) and kept.get("code") == 0 and "accelerate_cpu" in kept:
                return kept
            problem = "it is not a finished run's result"
        except (OSError, ValueError) as err:
            problem = " ".join(str(err).split())[:160]
        warnings.warn(f"the cached TRL launch {path} is damaged ({problem}); it is run again", stacklevel=2)
    with tempfile.TemporaryDirectory() as folder:
        result = run_processes(Path(folder) / "trl-run", processes, steps, prompts)
    result["accelerate_cpu"] = run_accelerate_cpu(processes)
    if result["code"] == 0:
        path.parent.mkdir(parents=True, exist_ok=True)
        temp = path.with_name(f".{path.name}.tmp-{os.getpid()}")  # two builds writing at once never share a file
        try:
            temp.write_text(json.dumps(result), encoding="utf-8")
            os.replace(temp, path)
        finally:
            temp.unlink(missing_ok=True)
    return result
