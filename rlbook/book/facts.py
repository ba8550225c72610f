"""A chapter's facts as plain, frozen data: numbers that know how they read, and a read-only record.

Every chapter's facts module (:mod:`rlbook.book`) returns its facts as a
tree of plain values, which this module turns into JSON for the cache and
back into a :class:`Facts` record, read-only, with attribute access
(``F.main.heldout_end``). The same round trip is applied to freshly computed
facts, so a page sees the same record whether it was cached or not.

A number the prose prints is a :class:`Num`: a float that carries its own
format, so the page writes ```` `{python} F.lift` ```` and reads "0.24",
while a claim compares ``F.lift > 0.05`` on the full value.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from rlbook.book import wording
from rlbook.book.phrasing import approximately

if TYPE_CHECKING:
    from typing import Self

STYLES: dict[str, Callable[[float], str]] = {
    "sci": lambda x: f"{x:.0e}".replace("e-0", "e-").replace("e+0", "e"),
    "approx": approximately,
}
"""Formats beyond Python's own format specs: ``sci`` writes 3e-4, ``approx`` "about two million"."""


class Num(float):
    """A float that prints with its format: ``str(Num(0.4823, ".2f"))`` is "0.48".

    ``fmt`` is a Python format spec (``".2f"``, ``".0%"``, ``",.0f"``,
    ``"+.2f"``) or a name in :data:`STYLES`. Arithmetic and comparisons use
    the full value and return plain floats.
    """

    fmt: str

    def __new__(cls, value: float, fmt: str = ".2f") -> Self:
        number = super().__new__(cls, float(value))
        if fmt not in STYLES:
            format(0.5, fmt)  # a bad spec fails here, where the fact is made, not in the page
        number.fmt = fmt
        return number

    def __str__(self) -> str:
        return STYLES[self.fmt](float(self)) if self.fmt in STYLES else format(float(self), self.fmt)

    def __format__(self, spec: str) -> str:
        return format(float(self), spec) if spec else str(self)

    def __repr__(self) -> str:
        return f"Num({float(self)!r}, {self.fmt!r})"

    def _repr_markdown_(self) -> str:
        """What Quarto's inline ``{python}`` expressions show: the formatted number."""
        return str(self)

    def __reduce__(self):
        return (Num, (float(self), self.fmt))


class Facts(Mapping):
    """A read-only record of facts: ``F.name`` or ``F["name"]``, nested; lists are tuples.

    Asking for a fact it lacks names the facts it has, so a typo in a page
    fails with the right spelling at hand.
    """

    __slots__ = ("_data", "_path")

    def __init__(self, data: Mapping[Any, Any], path: str = "F") -> None:
        object.__setattr__(self, "_data", dict(data))
        object.__setattr__(self, "_path", path)

    def __getattr__(self, name: str) -> Any:
        try:
            return self._data[name]
        except KeyError:
            known = ", ".join(sorted(map(str, self._data)))
            raise AttributeError(f"{self._path} has no fact {name!r}; it has: {known}") from None

    def __getitem__(self, key: Any) -> Any:
        try:
            return self._data[key]
        except KeyError:
            known = ", ".join(sorted(map(str, self._data)))
            raise KeyError(f"{self._path} has no fact {key!r}; it has: {known}") from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("facts are read-only: change the chapter's facts module instead")

    def __iter__(self) -> Iterator[Any]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"Facts({', '.join(map(str, self._data))})"

    def __dir__(self) -> list[str]:
        return sorted(k for k in self._data if isinstance(k, str))

    def say(self, name: str, **wordings: str) -> wording.Words:
        """Choice ``name`` of these facts in the page's ``wordings``, one per case (:mod:`rlbook.book.wording`)."""
        return wording.say(name, self[name], wordings)

    def __reduce__(self):
        return (Facts, (self._data, self._path))


def _float(x: float) -> Any:
    return x if math.isfinite(x) else {"__float__": repr(x)}


def encode(value: Any, path: str = "F") -> Any:
    """``value`` as JSON-ready data; TypeError naming the path of anything that is not plain data.

    Plain data: None, bool, int, float, str, :class:`Num`, NumPy scalars and
    arrays (as lists), lists and tuples, dicts (with keys of those kinds), and
    :class:`Facts`.
    """
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, Num):
        return {"__num__": _float(float(value)), "fmt": value.fmt}
    if isinstance(value, (int, np.integer)) and not isinstance(value, np.bool_):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, (float, np.floating)):
        return _float(float(value))
    if isinstance(value, np.ndarray):
        return [encode(v, f"{path}[{i}]") for i, v in enumerate(value.tolist())]
    if isinstance(value, (list, tuple)):
        return [encode(v, f"{path}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, Mapping):
        if all(isinstance(k, str) for k in value):
            if any(k.startswith("__") and k.endswith("__") for k in value):
                raise TypeError(f"{path}: a fact's name may not look like {next(iter(value))!r}")
            return {k: encode(v, f"{path}.{k}") for k, v in value.items()}
        return {"__items__": [[encode(k, f"{path} key"), encode(v, f"{path}[{k!r}]")] for k, v in value.items()]}
    raise TypeError(f"{path} is a {type(value).__name__}, which the facts cache cannot hold as plain data")


def decode(data: Any, path: str = "F") -> Any:
    """The record :func:`encode` wrote: dicts as :class:`Facts`, lists as tuples, numbers as :class:`Num`."""
    if isinstance(data, list):
        return tuple(decode(v, f"{path}[{i}]") for i, v in enumerate(data))
    if isinstance(data, dict):
        if set(data) == {"__num__", "fmt"}:
            return Num(_unfloat(data["__num__"]), data["fmt"])
        if set(data) == {"__float__"}:
            return _unfloat(data)
        if set(data) == {"__items__"}:
            items = [(_hashable(decode(k)), v) for k, v in data["__items__"]]
            return Facts({k: decode(v, f"{path}[{k!r}]") for k, v in items}, path)
        return Facts({k: decode(v, f"{path}.{k}") for k, v in data.items()}, path)
    return data


def _unfloat(x: Any) -> float:
    if isinstance(x, dict):
        return float(x["__float__"])
    return float(x)


def _hashable(key: Any) -> Any:
    return tuple(_hashable(k) for k in key) if isinstance(key, tuple) else key


def dumps(value: Any) -> str:
    """``value`` as the JSON text of a facts cache entry (:func:`encode`, no NaN literals)."""
    return json.dumps(encode(value), indent=1, allow_nan=False, sort_keys=False)


def loads(text: str) -> Facts:
    """The record of a facts cache entry's JSON text; TypeError when it is not a record of facts."""
    record = decode(json.loads(text))
    if not isinstance(record, Facts):
        raise TypeError(f"a facts entry holds a record, not a {type(record).__name__}")
    return record


def freeze(value: Any) -> Facts:
    """Freshly computed facts as the record a cached entry gives (:func:`encode`, then :func:`decode`)."""
    return loads(dumps(value))
