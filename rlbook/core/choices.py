"""Configurations that refuse typos: a choice field must hold one of its allowed values (every config of the engine).

A misspelt choice would otherwise train silently with some other behaviour
(``selection="acepted"`` trained with centred advantages while the record
said "selection"); each configuration checks its choice fields when it is
built, and the error names the field and the values it allows.
"""

from __future__ import annotations

from collections.abc import Iterable


def check_choice(config: object, field: str, allowed: Iterable) -> None:
    """Raise ValueError naming ``config``'s class, ``field`` and ``allowed`` when the field's value is not allowed."""
    value = getattr(config, field)
    allowed = tuple(allowed)
    if not any(value == choice and type(value) is type(choice) for choice in allowed):
        raise ValueError(f"{type(config).__name__}.{field} = {value!r} is not one of {allowed}")
