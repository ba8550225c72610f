"""The run record: one JSON file that says what a training run did and what it produced.

Chapter 5 builds on it. Holding only this file, a reviewer can tell whether a
policy really improved, or whether the reward, the sampler or the benchmark
moved under it: it names the starting checkpoint, the prompts and template,
the sampling settings, the verifier, the advantage and update choices, the
reference constraint, every checkpoint and independent evaluation, the cost,
and the parts of the run that went wrong or were filtered out (rollouts before
filtering, failures, aborted updates, interventions, interruptions).

``RUN_RECORD_FIELDS`` describes every required top-level field in one line;
``RECORD_SCHEMA`` gives each field's shape, which ``validate`` checks. All
integers in a record are non-negative. Extra top-level fields are allowed and
kept, so a later version can add information without breaking older readers.
"""
from __future__ import annotations

import hashlib
import importlib.metadata
import json
import math
import numbers
import os
import platform
import tempfile
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

SCHEMA_VERSION = 1
STATUSES = ("running", "completed", "interrupted", "aborted")

RUN_RECORD_FIELDS: dict[str, str] = {
    "schema_version": "version of this record format, so old records stay readable",
    "run_name": "the named configuration that was run (e.g. main, exploit)",
    "run_id": "unique id of this particular run",
    "created": "when the run started (UTC, ISO 8601)",
    "status": "running, completed, interrupted or aborted",
    "seed": "random seed of sampling, initialisation and data order",
    "threads": "CPU threads used; a different count gives a different run",
    "base_policy": "starting checkpoint: name, version id, hash of its weights",
    "prompt_template": "the chat template every rollout prompt was written in",
    "prompt_split": "which tasks the run trained on, and how many prompts each split holds",
    "sampling": "temperature, group size, prompts per step and token budget of the rollouts",
    "verifier": "outcome verifier: name, version and implementation (qualified name)",
    "outcome_labels": "how many rollouts received each verifier status over the run",
    "process_labels": "process scorer used for step labels (name, version), or null",
    "advantage": "advantage method and its normalisation (eps, ddof)",
    "update": "loss, clip or cap parameters, aggregation, lr, optimizer, steps, updates per batch, schedule",
    "reference": "KL coefficient, KL estimator and reference policy, or beta 0 and null",
    "checkpoints": "saved checkpoints: step, policy version, path, weights hash",
    "evaluations": "independent evaluations: step, split, n, temperature, token budget, metric, value, CI",
    "cost": "wall-clock seconds, generated tokens, rollouts and gradient steps",
    "rollouts_before_filtering": "rollouts generated, before any filter or selection",
    "rollouts_used": "rollouts the optimiser actually trained on",
    "selection_rule": "which rollouts were kept for the update (e.g. none, keep accepted)",
    "failures": "reward and parser failures by status, and verifier errors",
    "versions": "versions of rlbook (with source hash), torch, python and numpy",
    "aborted_updates": "updates that were skipped: step, reason and the measurement behind it",
    "interventions": "changes made during the run: step, kind, reason, trigger, affected rollouts",
    "interrupted": "null, or where the run stopped: step and last checkpoint",
}


@dataclass(frozen=True)
class Nullable:
    """Schema marker: the value may be null, or else must match ``spec``."""

    spec: Any


# A spec is a kind name ("str", "int", "number|null", ...; "|" separates
# alternatives), a dict (a JSON object with exactly these required keys), a
# one-element list (a JSON array whose entries all match that element), or
# Nullable(spec).
RECORD_SCHEMA: dict[str, Any] = {
    "schema_version": "int",
    "run_name": "str",
    "run_id": "str",
    "created": "time",
    "status": "status",
    "seed": "int",
    "threads": "int",
    "base_policy": {"name": "str", "version": "int|str", "weights_hash": "str"},
    "prompt_template": "str",
    "prompt_split": {"world": "str", "train": "str", "counts": "counts"},
    "sampling": {"temperature": "number", "group_size": "int", "prompts_per_step": "int", "token_budget": "int"},
    "verifier": {"name": "str", "version": "str", "implementation": "str"},
    "outcome_labels": "counts",
    "process_labels": Nullable({"name": "str", "version": "str"}),
    "advantage": {"method": "str", "eps": "number|null", "ddof": "int|null"},
    "update": {
        "loss": "str",
        "clip": "number|dict|null",
        "aggregation": "str",
        "lr": "number",
        "optimizer": "str",
        "steps": "int",
        "updates_per_batch": "int",
        "schedule": "str|dict",
    },
    "reference": {"kl_beta": "number", "estimator": "str|null", "policy": "str|null"},
    "checkpoints": [{"step": "int", "policy_version": "int", "path": "str", "weights_hash": "str"}],
    "evaluations": [
        {
            "step": "int",
            "split": "str",
            "n": "int",
            "temperature": "number",
            "token_budget": "int",
            "metric": "str",
            "value": "number",
            "ci": "interval|null",
        }
    ],
    "cost": {"wall_seconds": "number", "generated_tokens": "int", "rollouts": "int", "gradient_steps": "int"},
    "rollouts_before_filtering": "int",
    "rollouts_used": "int",
    "selection_rule": "str",
    "failures": {"by_status": "counts", "verifier_errors": "int"},
    "versions": {"rlbook": "str", "source_hash": "str", "torch": "str", "python": "str", "numpy": "str"},
    "aborted_updates": [{"step": "int", "reason": "str", "measurement": "number|str|dict"}],
    "interventions": [
        {
            "step": "int",
            "kind": "str",
            "reason": "str",
            "trigger": {"metric": "str", "value": "number", "threshold": "number"},
            "affected_rollouts": "int|list",
        }
    ],
    "interrupted": Nullable({"step": "int", "last_checkpoint": "str|null"}),
}


class RecordError(ValueError):
    """A run record that is missing, unreadable or invalid; ``field`` names the bad field if there is one."""

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.field = field


def _bad(field: str, problem: str) -> RecordError:
    return RecordError(f"run record field '{field}': {problem}", field=field)


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool) and value >= 0


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)


def _is_time(value: Any) -> bool:
    try:
        return isinstance(value, str) and datetime.fromisoformat(value).tzinfo is not None
    except ValueError:
        return False


def _is_interval(value: Any) -> bool:
    return (
        isinstance(value, (list, tuple))
        and len(value) == 2
        and all(_is_number(v) for v in value)
        and value[0] <= value[1]
    )


_KINDS = {
    "str": lambda v: isinstance(v, str),
    "int": _is_int,
    "number": _is_number,
    "null": lambda v: v is None,
    "dict": lambda v: isinstance(v, dict),
    "list": lambda v: isinstance(v, list),
    "counts": lambda v: isinstance(v, dict) and all(isinstance(k, str) and _is_int(n) for k, n in v.items()),
    "time": _is_time,
    "status": lambda v: v in STATUSES,
    "interval": _is_interval,
}
_KIND_NAMES = {
    "int": "a non-negative integer",
    "number": "a finite number",
    "counts": "a mapping of names to non-negative integers",
    "time": "an ISO 8601 time with a time zone",
    "status": "one of " + ", ".join(STATUSES),
    "interval": "a pair [lo, hi] with lo <= hi",
}


def _check(field: str, value: Any, spec: Any) -> None:
    """Raise RecordError naming ``field`` (a path such as ``checkpoints[2].step``) if ``value`` does not match ``spec``."""
    if isinstance(spec, Nullable):
        if value is None:
            return
        spec = spec.spec
    if isinstance(spec, dict):
        if not isinstance(value, dict):
            raise _bad(field, f"expected an object with keys {', '.join(spec)}, got {value!r:.60}")
        for key, sub in spec.items():
            if key not in value:
                raise _bad(f"{field}.{key}", "missing")
            _check(f"{field}.{key}", value[key], sub)
    elif isinstance(spec, list):
        if not isinstance(value, list):
            raise _bad(field, f"expected a list, got {value!r:.60}")
        for i, item in enumerate(value):
            _check(f"{field}[{i}]", item, spec[0])
    else:
        kinds = spec.split("|")
        if not any(_KINDS[kind](value) for kind in kinds):
            wanted = " or ".join(_KIND_NAMES.get(kind, kind) for kind in kinds)
            raise _bad(field, f"expected {wanted}, got {value!r:.60}")


def _check_consistency(record: dict) -> None:
    """Rules that span fields or need more than a type: the schema alone cannot say them."""
    if record["schema_version"] != SCHEMA_VERSION:
        raise _bad("schema_version", f"this rlbook reads version {SCHEMA_VERSION}, got {record['schema_version']}")
    if not record["run_name"]:
        raise _bad("run_name", "must not be empty")
    if record["threads"] < 1:
        raise _bad("threads", "must be at least 1")
    steps = [c["step"] for c in record["checkpoints"]]
    for i in range(1, len(steps)):
        if steps[i] <= steps[i - 1]:
            raise _bad(f"checkpoints[{i}].step", f"steps must increase, got {steps[i]} after {steps[i - 1]}")
    if record["rollouts_used"] > record["rollouts_before_filtering"]:
        raise _bad(
            "rollouts_used",
            f"{record['rollouts_used']} exceeds rollouts_before_filtering ({record['rollouts_before_filtering']})",
        )
    if record["status"] == "interrupted" and record["interrupted"] is None:
        raise _bad("interrupted", "status is 'interrupted' but no interruption is recorded")


def validate(record: dict) -> dict:
    """Check that ``record`` is a complete, well-formed run record and return it (chapter 5).

    Fields are checked in the order of ``RUN_RECORD_FIELDS``: presence and
    shape (``RECORD_SCHEMA``), then the rules across fields: the schema
    version this code reads, a non-empty run name, at least one thread,
    strictly increasing checkpoint steps, no more rollouts used than
    generated, and an ``interrupted`` entry when the status says so. Raises
    RecordError naming the first bad field, e.g. ``interventions[0].trigger``.
    """
    if not isinstance(record, dict):
        raise RecordError(f"a run record is a JSON object, got {type(record).__name__}")
    for field, spec in RECORD_SCHEMA.items():
        if field not in record:
            raise _bad(field, "missing")
        _check(field, record[field], spec)
    _check_consistency(record)
    return record


def source_hash() -> str:
    """Short SHA-256 of the rlbook package's source files: it changes whenever the code changes (chapter 5)."""
    digest = hashlib.sha256()
    package = Path(__file__).resolve().parent
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


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
        "source_hash": source_hash(),
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
            _check(field, value, RECORD_SCHEMA[field])
    return record


def add_checkpoint(record: dict, step: int, policy_version: int, path: str, weights_hash: str) -> dict:
    """Append a checkpoint entry to ``record`` and return it; steps must increase (chapter 5)."""
    entry = {"step": step, "policy_version": policy_version, "path": str(path), "weights_hash": weights_hash}
    index = len(record["checkpoints"])
    _check(f"checkpoints[{index}]", entry, RECORD_SCHEMA["checkpoints"][0])
    if record["checkpoints"] and step <= record["checkpoints"][-1]["step"]:
        raise _bad(f"checkpoints[{index}].step", f"steps must increase, got {step} after {record['checkpoints'][-1]['step']}")
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
    _check(f"evaluations[{len(record['evaluations'])}]", entry, RECORD_SCHEMA["evaluations"][0])
    record["evaluations"].append(entry)
    return entry


def add_aborted_update(record: dict, step: int, reason: str, measurement: float | str | dict) -> dict:
    """Record that the update at ``step`` was skipped, why, and the measurement that triggered it (chapters 4 and 5)."""
    entry = {"step": step, "reason": reason, "measurement": measurement}
    _check(f"aborted_updates[{len(record['aborted_updates'])}]", entry, RECORD_SCHEMA["aborted_updates"][0])
    record["aborted_updates"].append(entry)
    return entry


def add_intervention(
    record: dict,
    step: int,
    kind: str,
    reason: str,
    metric: str,
    value: float,
    threshold: float,
    affected: int | list,
) -> dict:
    """Record an intervention during training and return it (chapters 4 and 5).

    An intervention (pausing updates, excluding a batch, lowering the
    temperature, reverting to a checkpoint...) must name its triggering
    measurement, ``metric`` with its ``value`` and the ``threshold`` it
    crossed, and the rollouts it affected, as a count or a list of ids, so
    that later behaviour can be traced to the policy update or to the change
    in the training signal.
    """
    entry = {
        "step": step,
        "kind": kind,
        "reason": reason,
        "trigger": {"metric": metric, "value": value, "threshold": threshold},
        "affected_rollouts": list(affected) if isinstance(affected, (list, tuple)) else affected,
    }
    _check(f"interventions[{len(record['interventions'])}]", entry, RECORD_SCHEMA["interventions"][0])
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
    leaves either the old record or the new one, never half a file.
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
    handle, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return target


def load(path: str | os.PathLike) -> dict:
    """Read and validate the run record at ``path`` (chapter 5).

    A missing file, text that is not JSON, or an invalid record raises
    RecordError with a one-line message that starts with the path.
    """
    source = Path(path)
    try:
        text = source.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RecordError(f"{source}: no run record found") from None
    except UnicodeDecodeError:
        raise RecordError(f"{source}: not a UTF-8 text file") from None
    except OSError as err:
        raise RecordError(f"{source}: cannot read run record: {err.strerror}") from None
    try:
        record = json.loads(text)
    except json.JSONDecodeError as err:
        raise RecordError(f"{source}: not valid JSON (line {err.lineno}, column {err.colno}: {err.msg})") from None
    except RecursionError:
        raise RecordError(f"{source}: JSON nested too deeply to be a run record") from None
    try:
        return validate(record)
    except RecordError as err:
        raise RecordError(f"{source}: {err}", field=err.field) from None


def _summary(value: Any, max_items: int = 3) -> str:
    """Short text for one value of the table: numbers to 4 significant digits, long lists cut to their first items."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        text = f"{value:.4g}"
        return text if any(mark in text for mark in ".ein") else text + ".0"
    if isinstance(value, dict):
        return "(" + ", ".join(f"{k}={_summary(v, max_items)}" for k, v in value.items()) + ")"
    if isinstance(value, (list, tuple)):
        if not value:
            return "none"
        shown = "; ".join(_summary(item, max_items) for item in value[:max_items])
        more = "; …" if len(value) > max_items else ""
        return f"{len(value)} {'entry' if len(value) == 1 else 'entries'}: {shown}{more}"
    return str(value)


def _rows(prefix: str, value: Any) -> list[tuple[str, str]]:
    if isinstance(value, dict) and value:
        return [row for key, sub in value.items() for row in _rows(f"{prefix}.{key}", sub)]
    if isinstance(value, dict):
        return [(prefix, "none")]
    return [(prefix, _summary(value))]


def as_table(record: dict) -> list[tuple[str, str]]:
    """The record as (field, value) rows for chapter 5's table.

    Nested objects are flattened into dotted rows (``update.lr``), lists are
    summarised by their length and first entries, and fields appear in the
    order of ``RUN_RECORD_FIELDS`` followed by any extra fields.
    """
    order = list(RUN_RECORD_FIELDS) + [field for field in record if field not in RUN_RECORD_FIELDS]
    return [row for field in order if field in record for row in _rows(field, record[field])]


def _normalise(name: str) -> str:
    return name.strip().lower().replace(" ", "_").replace("-", "_").split(".")[0]


def missing_fields(field_names: Iterable[str]) -> list[str]:
    """Required top-level fields that ``field_names`` lacks, in schema order (chapter 5, exercise 10).

    Names are compared ignoring case, surrounding spaces and the difference
    between spaces, hyphens and underscores; a dotted name such as
    ``update.lr`` counts for its top-level field.
    """
    given = {_normalise(name) for name in field_names}
    return [field for field in RUN_RECORD_FIELDS if field not in given]
