"""Writing and reading run records: a new record with the environment filled in, entries added, saved atomically
as JSON, loaded and validated (chapter 5; :mod:`rlbook.record.schema` defines what a record holds).
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import platform
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from rlbook.core.events import aborted_update, intervention
from rlbook.core.source import package_hash
from rlbook.core.world import SPLITS, TEMPLATES, split

from .reading import load_record
from .schema import RECORD_SCHEMA, SCHEMA_VERSION, RecordError, check_field, field_error, validate


def _installed_version(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def environment_versions() -> dict[str, str]:
    """Versions of rlbook (and its source hash), torch, Python and numpy, for the record's ``versions`` (chapter 5).

    torch's version is read from its installed metadata, so this does not import torch.
    """
    return {
        "rlbook": _installed_version("rlbook"),
        "source_hash": package_hash(),
        "torch": _installed_version("torch"),
        "python": platform.python_version(),
        "numpy": np.__version__,
    }


def new_record(run_name: str, **fields: Any) -> dict:
    """A run record for a run that is starting now, with defaults for everything a run accumulates (chapter 5).

    Defaults: status "running", ``created`` the current UTC time, a random
    ``run_id``, empty lists of checkpoints, evaluations, aborted updates and
    interventions, zero counts and cost, selection rule "none", no process
    labels, no interruption, and the current ``environment_versions()``.
    The caller supplies the run's configuration as keyword arguments (seed,
    threads, base_policy, prompt_template, prompt_split, sampling, verifier,
    advantage, update, reference), which override the defaults; each given
    field is checked against the schema at once, and ``validate`` (called by
    ``save``) checks that none is missing.
    """
    record: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "run_name": run_name,
        "run_id": uuid.uuid4().hex[:12],
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "status": "running",
        "outcome_labels": {},
        "process_labels": None,
        "checkpoints": [],
        "evaluations": [],
        "cost": {"wall_seconds": 0.0, "generated_tokens": 0, "rollouts": 0, "gradient_steps": 0},
        "rollouts_before_filtering": 0,
        "rollouts_used": 0,
        "selection_rule": "none",
        "failures": {"by_status": {}, "verifier_errors": 0},
        "versions": environment_versions(),
        "aborted_updates": [],
        "interventions": [],
        "interrupted": None,
    }
    record.update(fields)
    for field, value in record.items():
        if field in RECORD_SCHEMA:
            check_field(field, value, RECORD_SCHEMA[field])
    return record


def task_fields(world: str, trained_on: str) -> dict:
    """The record's fields about the task, for any trainer: the world's prompt template and its splits' sizes.

    ``trained_on`` names the split the run learned from ("sft" for a base
    run, "train" for RL). The book's runs and the TRL bridge both fill their
    records' task from here, with the template and split names of
    :mod:`rlbook.core.world`.
    """
    return {
        "prompt_template": TEMPLATES[world],
        "prompt_split": {
            "world": world,
            "train": trained_on,
            "counts": {name: len(split(name, world)) for name in SPLITS if name != "all"},
        },
    }


def base_policy(name: str, checkpoint: dict) -> dict:
    """The record's ``base_policy``: the run a policy started from and one of its checkpoints (its version and hash)."""
    return {"name": name, "version": checkpoint["version"], "weights_hash": checkpoint["weights_hash"]}


def add_checkpoint(record: dict, step: int, policy_version: int, path: str, weights_hash: str) -> dict:
    """Append a checkpoint entry to ``record`` and return it; steps must increase (chapter 5)."""
    entry = {"step": step, "policy_version": policy_version, "path": str(path), "weights_hash": weights_hash}
    index = len(record["checkpoints"])
    check_field(f"checkpoints[{index}]", entry, RECORD_SCHEMA["checkpoints"][0])
    if record["checkpoints"] and step <= record["checkpoints"][-1]["step"]:
        raise field_error(
            f"checkpoints[{index}].step", f"steps must increase, got {step} after {record['checkpoints'][-1]['step']}"
        )
    record["checkpoints"].append(entry)
    return entry


def add_evaluation(
    record: dict,
    step: int,
    split: str,
    n: int,
    temperature: float,
    token_budget: int,
    metric: str,
    value: float,
    ci: tuple[float, float] | None = None,
) -> dict:
    """Append an independent evaluation (a metric on ``n`` prompts of ``split`` at checkpoint ``step``) and return it (chapter 5)."""
    entry = {
        "step": step,
        "split": split,
        "n": n,
        "temperature": temperature,
        "token_budget": token_budget,
        "metric": metric,
        "value": value,
        "ci": None if ci is None else [ci[0], ci[1]],
    }
    check_field(f"evaluations[{len(record['evaluations'])}]", entry, RECORD_SCHEMA["evaluations"][0])
    record["evaluations"].append(entry)
    return entry


def add_aborted_update(record: dict, step: int, reason: str, measurement: float | str | dict) -> dict:
    """Record that the update at ``step`` was skipped, why, and the measurement that triggered it (chapters 4 and 5)."""
    entry = aborted_update(step, reason, measurement)
    check_field(f"aborted_updates[{len(record['aborted_updates'])}]", entry, RECORD_SCHEMA["aborted_updates"][0])
    record["aborted_updates"].append(entry)
    return entry


def add_intervention(
    record: dict, step: int, kind: str, reason: str, metric: str, value: float, threshold: float, affected: int | list
) -> dict:
    """Record an intervention during training and return it (chapters 4 and 5).

    An intervention (pausing updates, excluding a batch, lowering the
    temperature, reverting to a checkpoint...) must name its triggering
    measurement, ``metric`` with its ``value`` and the ``threshold`` it
    crossed, and the rollouts it affected, as a count or a list of ids, so
    that later behaviour can be traced to the policy update or to the change
    in the training signal.
    """
    entry = intervention(step, kind, reason, metric, value, threshold, affected)
    check_field(f"interventions[{len(record['interventions'])}]", entry, RECORD_SCHEMA["interventions"][0])
    record["interventions"].append(entry)
    return entry


def _to_json(value: Any) -> Any:
    """JSON encoder hook: numpy scalars and arrays become plain Python numbers and lists."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON-serialisable")


def save(record: dict, path: str | os.PathLike) -> Path:
    """Validate ``record`` and write it to ``path`` as JSON, atomically; return the path (chapter 5).

    The text goes to a temporary file in the same directory, which then
    replaces ``path`` in one step (``os.replace``), so a crash mid-write
    leaves either the old record or the new one, never half a file, and a
    failed write removes the temporary file. The file gets the permissions
    of any new file (``0o666`` less the umask).
    """
    target = Path(path)
    try:
        validate(record)
    except RecordError as err:
        raise RecordError(f"{target}: {err}", field=err.field) from None
    try:
        text = json.dumps(record, indent=2, default=_to_json, allow_nan=False) + "\n"
    except (TypeError, ValueError) as err:
        raise RecordError(f"{target}: run record cannot be written as JSON: {err}") from None
    target.parent.mkdir(parents=True, exist_ok=True)
    temp = target.with_name(f".{target.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        # 0o666 less the umask, like every other file: mkstemp would make it 0600 while the run log is 0644.
        handle = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, target)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    return target


def load(path: str | os.PathLike) -> dict:
    """Read and validate the run record at ``path`` (chapter 5).

    A missing file, anything but a regular file, text that is not JSON or
    that JSON cannot write back (NaN, a repeated key, a lone surrogate...),
    or an invalid record raises RecordError with a one-line message that
    starts with the path (:func:`rlbook.record.reading.load_record`).
    """
    return load_record(path)
