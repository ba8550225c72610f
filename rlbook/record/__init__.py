"""The run record: one JSON file that says what a training run did and what it produced (chapter 5).

- :mod:`~rlbook.record.schema`: the fields, their shapes and :func:`validate`;
- :mod:`~rlbook.record.io`: a new record, its entries, :func:`save` and :func:`load`;
- :mod:`~rlbook.record.reading`: a record file that may be hostile, read with bounds and checks
  (``rlbook audit``);
- :mod:`~rlbook.record.display`: the record as a table for people (imported on its own,
  ``from rlbook.record import display``, so that it stays out of the training code).
"""

from __future__ import annotations

from .io import (
    add_aborted_update,
    add_checkpoint,
    add_evaluation,
    add_intervention,
    base_policy,
    environment_versions,
    load,
    new_record,
    save,
    task_fields,
)
from .schema import RECORD_SCHEMA, RUN_RECORD_FIELDS, RUN_STATUSES, SCHEMA_VERSION, Nullable, RecordError, validate

__all__ = [
    "RECORD_SCHEMA",
    "RUN_RECORD_FIELDS",
    "RUN_STATUSES",
    "SCHEMA_VERSION",
    "Nullable",
    "RecordError",
    "add_aborted_update",
    "add_checkpoint",
    "add_evaluation",
    "add_intervention",
    "base_policy",
    "environment_versions",
    "load",
    "new_record",
    "save",
    "task_fields",
    "validate",
]
