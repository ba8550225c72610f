"""The run record's schema: one JSON file that says what a training run did and what it produced.

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

import math
import numbers
from dataclasses import dataclass
from datetime import datetime
from typing import Any

SCHEMA_VERSION = 1
RUN_STATUSES = ("running", "completed", "interrupted", "aborted")

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


def field_error(field: str, problem: str) -> RecordError:
    return RecordError(f"run record field '{field}': {problem}", field=field)


def _is_int(value: Any) -> bool:
    # ignored below: numbers.Real's stub declares < and <= but not >=, which every Integral type defines
    return isinstance(value, numbers.Integral) and not isinstance(value, bool) and value >= 0  # type: ignore[operator]


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
    "status": lambda v: v in RUN_STATUSES,
    "interval": _is_interval,
}
_KIND_NAMES = {
    "int": "a non-negative integer",
    "number": "a finite number",
    "counts": "a mapping of names to non-negative integers",
    "time": "an ISO 8601 time with a time zone",
    "status": "one of " + ", ".join(RUN_STATUSES),
    "interval": "a pair [lo, hi] with lo <= hi",
}


def check_field(field: str, value: Any, spec: Any) -> None:
    """Raise RecordError naming ``field`` (a path such as ``checkpoints[2].step``) if ``value`` does not match ``spec``."""
    if isinstance(spec, Nullable):
        if value is None:
            return
        spec = spec.spec
    if isinstance(spec, dict):
        if not isinstance(value, dict):
            raise field_error(field, f"expected an object with keys {', '.join(spec)}, got {value!r:.60}")
        for key, sub in spec.items():
            if key not in value:
                raise field_error(f"{field}.{key}", "missing")
            check_field(f"{field}.{key}", value[key], sub)
    elif isinstance(spec, list):
        if not isinstance(value, list):
            raise field_error(field, f"expected a list, got {value!r:.60}")
        for i, item in enumerate(value):
            check_field(f"{field}[{i}]", item, spec[0])
    else:
        kinds = spec.split("|")
        if not any(_KINDS[kind](value) for kind in kinds):
            wanted = " or ".join(_KIND_NAMES.get(kind, kind) for kind in kinds)
            raise field_error(field, f"expected {wanted}, got {value!r:.60}")


def _check_consistency(record: dict) -> None:
    """Rules that span fields or need more than a type: the schema alone cannot say them."""
    if record["schema_version"] != SCHEMA_VERSION:
        raise field_error(
            "schema_version", f"this rlbook reads version {SCHEMA_VERSION}, got {record['schema_version']}"
        )
    if not record["run_name"]:
        raise field_error("run_name", "must not be empty")
    if record["threads"] < 1:
        raise field_error("threads", "must be at least 1")
    steps = [c["step"] for c in record["checkpoints"]]
    for i in range(1, len(steps)):
        if steps[i] <= steps[i - 1]:
            raise field_error(f"checkpoints[{i}].step", f"steps must increase, got {steps[i]} after {steps[i - 1]}")
    if record["rollouts_used"] > record["rollouts_before_filtering"]:
        raise field_error(
            "rollouts_used",
            f"{record['rollouts_used']} exceeds rollouts_before_filtering ({record['rollouts_before_filtering']})",
        )
    if record["status"] == "interrupted" and record["interrupted"] is None:
        raise field_error("interrupted", "status is 'interrupted' but no interruption is recorded")


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
            raise field_error(field, "missing")
        check_field(field, record[field], spec)
    _check_consistency(record)
    return record
