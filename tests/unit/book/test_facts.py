"""rlbook.book.facts: numbers that know their format, and a frozen record that round-trips through JSON."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rlbook.book.facts import Facts, Num, decode, dumps, encode, freeze, loads


def test_num_prints_with_its_format_and_computes_with_its_value():
    x = Num(0.4823, ".2f")
    assert str(x) == "0.48" and f"{x}" == "0.48" and f"{x:.3f}" == "0.482"
    assert x > 0.48 and x + 1 == pytest.approx(1.4823) and type(x + 1) is float
    assert str(Num(3e-4, "sci")) == "3e-4" and str(Num(0.25, ".0%")) == "25%"
    assert str(Num(2.3e6, "approx")) == "about two million"
    assert x._repr_markdown_() == "0.48"


def test_num_refuses_a_bad_format_where_it_is_made():
    with pytest.raises(ValueError):
        Num(1.0, ".2q")


def test_round_trip_keeps_every_kind_of_plain_data():
    value = {
        "n": Num(0.5, ".1f"),
        "i": np.int64(3),
        "b": np.bool_(True),
        "f": np.float32(0.25),
        "a": np.arange(3),
        "t": (1, "x", None),
        "nested": {"k": [1.5, float("nan")]},
        "by_seed": {0: "zero", 1: "one"},
        "pairs": {(0, 1): 2.0},
    }
    record = freeze(value)
    assert isinstance(record, Facts)
    assert record.n == 0.5 and str(record.n) == "0.5" and isinstance(record.n, Num)
    assert record.i == 3 and record.b is True and record.f == 0.25 and record.a == (0, 1, 2)
    assert record.t == (1, "x", None) and math.isnan(record.nested.k[1])
    assert record.by_seed[1] == "one" and record.pairs[(0, 1)] == 2.0


def test_the_record_is_read_only_and_names_what_it_has():
    record = freeze({"alpha": 1, "beta": {"gamma": 2}})
    with pytest.raises(AttributeError, match="read-only"):
        record.alpha = 2
    with pytest.raises(AttributeError, match="has no fact 'alpa'; it has: alpha, beta"):
        _ = record.alpa
    with pytest.raises(KeyError, match=r"F\.beta has no fact 'delta'"):
        _ = record.beta["delta"]
    assert dict(record.beta) == {"gamma": 2} and len(record) == 2 and "alpha" in record


def test_encode_names_the_path_of_what_is_not_plain_data():
    with pytest.raises(TypeError, match=r"F\.runs\[1\] is a object"):
        encode({"runs": [1, object()]})
    with pytest.raises(TypeError, match="may not look like"):
        encode({"__num__": 1})


def test_json_has_no_nan_literal_and_loads_refuses_a_non_record():
    assert "NaN" not in dumps({"x": float("nan")})
    with pytest.raises(TypeError, match="holds a record"):
        loads("[1, 2]")
    assert decode({"__float__": "inf"}) == math.inf
