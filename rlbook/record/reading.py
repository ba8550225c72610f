"""Reading a run record's JSON from a file that may be hostile (``rlbook audit``, chapter 5).

A record file can come from anyone, so the reading refuses, each with one
line that names the file and, where there is one, the field:

- anything but a regular file (a device such as ``/dev/zero``, a named pipe,
  a folder), checked on the opened file before a byte is read, and a file
  larger than :data:`MAX_BYTES`, of which at most one byte more is read;
- text that is not UTF-8, or not JSON;
- nesting deeper than :data:`MAX_DEPTH`, measured before parsing;
- an integer longer than :data:`MAX_DIGITS` digits, ``NaN``, ``Infinity``
  or a number too large for a float, which JSON cannot write back;
- a key given twice in one object (JSON parsers keep the last silently);
- a lone surrogate (``"\\ud800"``) in a string or a key, which is no text.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from pathlib import Path
from typing import Any, cast

import numpy as np

from .schema import RecordError, field_error, validate

MAX_BYTES = 16 * 2**20
"""The largest record file read: the book's records are below 20 KB."""
MAX_DEPTH = 64
"""The deepest nesting of arrays and objects read: a record's own fields are at most 4 deep."""
MAX_DIGITS = 20
"""The longest integer read, in digits: seeds and counts have at most 20."""

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_SURROGATE = re.compile("[\ud800-\udfff]")


class _Refused:
    """A JSON value that parsing kept aside, to be refused by :func:`_check` with the path of its field."""

    def __init__(self, problem: str):
        self.problem = problem


class _Object(dict):
    """A JSON object, with the first key it repeated (or None)."""

    repeated: str | None = None


def _object(pairs: list[tuple[str, Any]]) -> _Object:
    found = _Object()
    for key, value in pairs:
        if key in found and found.repeated is None:
            found.repeated = key
        found[key] = value
    return found


def _integer(text: str) -> int | _Refused:
    digits = len(text.lstrip("-"))
    return int(text) if digits <= MAX_DIGITS else _Refused(f"an integer of {digits} digits (at most {MAX_DIGITS})")


def _float(text: str) -> float | _Refused:
    value = float(text)
    return value if math.isfinite(value) else _Refused(f"{text[:40]!r} is too large for a finite number")


def _constant(text: str) -> _Refused:
    return _Refused(f"{text} is not a finite number")


def _read_bytes(source: Path) -> bytes:
    """The bytes of ``source`` when it is a regular file of at most :data:`MAX_BYTES`; RecordError otherwise."""
    try:
        handle = os.open(source, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise RecordError(f"{source}: no run record found") from None
    except OSError as err:
        raise RecordError(f"{source}: cannot read run record: {err.strerror}") from None
    try:
        mode = os.fstat(handle).st_mode
        if stat.S_ISDIR(mode):
            raise RecordError(f"{source}: cannot read run record: Is a directory")
        if not stat.S_ISREG(mode):
            kind = (
                "a named pipe"
                if stat.S_ISFIFO(mode)
                else "a device"
                if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
                else "a socket"
                if stat.S_ISSOCK(mode)
                else "not a file"
            )
            raise RecordError(f"{source}: cannot read run record: {kind}, not a regular file")
        chunks, size = [], 0
        while size <= MAX_BYTES:
            chunk = os.read(handle, MAX_BYTES + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > MAX_BYTES:
            raise RecordError(f"{source}: larger than {MAX_BYTES // 2**20} MB, too large to be a run record")
        return b"".join(chunks)
    except OSError as err:
        raise RecordError(f"{source}: cannot read run record: {err.strerror}") from None
    finally:
        os.close(handle)


def depth(text: str) -> int:
    """The deepest nesting of ``[`` and ``{`` in JSON ``text``, brackets inside strings left out."""
    marks = np.frombuffer(re.sub(r"[^\[\]{}]", "", _STRING.sub("", text)).encode("ascii"), dtype=np.uint8)
    levels = np.cumsum(np.where((marks == ord("[")) | (marks == ord("{")), 1, -1))
    return int(levels.max(initial=0))


def parse(text: str, source: Path | str = "record") -> Any:
    """The JSON value of ``text``, refused (RecordError naming ``source`` and the field) as the module says."""
    if depth(text) > MAX_DEPTH:
        raise RecordError(f"{source}: JSON nested more than {MAX_DEPTH} deep, too deep to be a run record")
    try:
        value = json.loads(
            text, object_pairs_hook=_object, parse_int=_integer, parse_float=_float, parse_constant=_constant
        )
    except json.JSONDecodeError as err:
        raise RecordError(f"{source}: not valid JSON (line {err.lineno}, column {err.colno}: {err.msg})") from None
    except RecursionError:
        raise RecordError(f"{source}: JSON nested too deeply to be a run record") from None
    try:
        _check(value)
    except RecordError as err:
        raise RecordError(f"{source}: {err}", field=err.field) from None
    return value


def _check(value: Any) -> None:
    """Raise the field error of the first refused value, repeated key or lone surrogate in ``value``, in file order."""
    todo: list[tuple[str, Any]] = [("", value)]
    while todo:
        path, item = todo.pop()
        if isinstance(item, _Refused):
            raise field_error(path or "(top level)", item.problem)
        if isinstance(item, str) and _SURROGATE.search(item):
            raise field_error(path or "(top level)", "holds a lone surrogate, which is not text")
        if isinstance(item, dict):
            for key in item:
                if _SURROGATE.search(key):
                    raise field_error(_member(path, key), "its name holds a lone surrogate, which is not text")
            repeated = cast(_Object, item).repeated  # every JSON object is parsed by the _object hook
            if repeated is not None:
                raise field_error(_member(path, repeated), "given twice in one object")
            todo.extend(reversed([(_member(path, key), sub) for key, sub in item.items()]))
        elif isinstance(item, list):
            todo.extend(reversed([(f"{path}[{i}]", sub) for i, sub in enumerate(item)]))


def _member(path: str, key: str) -> str:
    """The path of member ``key`` of the object at ``path``; a key that is not printable is shown escaped."""
    name = key if key.isprintable() else ascii(key)
    return f"{path}.{name}" if path else name


def read_json(path: str | os.PathLike) -> Any:
    """The JSON value in the file at ``path``, read with every check of the module (RecordError otherwise)."""
    source = Path(path)
    data = _read_bytes(source)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise RecordError(f"{source}: not a UTF-8 text file") from None
    return _plain(parse(text, source))


def _plain(value: Any) -> Any:
    """``value`` with every :class:`_Object` made a plain dict, so that what is returned is ordinary JSON data."""
    if isinstance(value, dict):
        return {key: _plain(sub) for key, sub in value.items()}
    if isinstance(value, list):
        return [_plain(sub) for sub in value]
    return value


def load_record(path: str | os.PathLike) -> dict:
    """The valid run record in the file at ``path`` (:func:`read_json`, then the schema's ``validate``).

    Every error is a RecordError of one line that starts with the path.
    """
    record = read_json(path)
    try:
        return validate(record)
    except RecordError as err:
        raise RecordError(f"{path}: {err}", field=err.field) from None
