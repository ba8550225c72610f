"""Reading a record file that may be hostile (rlbook.record.reading), alone and through ``rlbook audit``.

Each hostile file of issue 36 (a device, a named pipe, an integer of 5,000
digits, deep nesting, a lone surrogate, NaN, a repeated key, line breaks and
terminal escapes in a value) is refused or shown escaped, with one line.
The property tests (hypothesis) feed ``rlbook audit`` arbitrary bytes,
arbitrary JSON and a valid record with fields replaced or added, and hold
that it either prints a record that stays on its rows and writes strict JSON
back, or exits 2 with one line; they report how many inputs they generated.
"""

from __future__ import annotations

import copy
import json
import os
import string
import tempfile
from pathlib import Path

import pytest
from cli_calls import assert_usage_error, call
from doubles import minimal_record
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rlbook import record as rec
from rlbook.record import RecordError
from rlbook.record.reading import MAX_BYTES, MAX_DEPTH, depth, load_record, parse, read_json


def _record() -> dict:
    r = minimal_record()
    rec.add_checkpoint(r, 0, 0, "log.pt#checkpoints[0]", "h0")
    rec.add_evaluation(r, 0, "heldout", 40, 1.0, 4, "expected_reward", 0.5)
    return rec.validate(r)


RECORD = _record()
TEXT = json.dumps(RECORD, indent=2)


def with_field(field: str, raw: str) -> str:
    """The valid record's JSON text with the value of top-level ``field`` replaced by the JSON text ``raw``."""
    head, sep, tail = TEXT.partition(f'"{field}": ')
    assert sep, field
    rest = json.JSONDecoder().raw_decode(tail)[1]
    return head + sep + raw + tail[rest:]


def refused(text: str, fragment: str) -> RecordError:
    with pytest.raises(RecordError) as caught:
        parse(text, "r.json")
    message = str(caught.value)
    assert "\n" not in message and message.startswith("r.json: ") and fragment in message, message
    return caught.value


def test_a_valid_record_reads_back_equal(tmp_path):
    path = tmp_path / "record.json"
    path.write_text(TEXT)
    assert load_record(path) == RECORD and type(read_json(path)["update"]) is dict


def test_an_integer_of_5000_digits_is_refused_naming_its_field():
    assert refused(with_field("seed", "9" * 5000), "field 'seed': an integer of 5000 digits").field == "seed"


@pytest.mark.parametrize(
    "raw, shown",
    [("NaN", "NaN"), ("-Infinity", "-Infinity"), ("Infinity", "Infinity"), ("1e999", "'1e999' is too large")],
)
def test_nan_and_infinities_are_refused_naming_their_field(raw, shown):
    err = refused(with_field("cost", f'{{"wall_seconds": {raw}, "generated_tokens": 0}}'), shown)
    assert err.field == "cost.wall_seconds"


def test_a_key_given_twice_is_refused_rather_than_the_last_one_winning():
    text = TEXT.replace('"seed": 0,', '"seed": 0,\n  "seed": 7,', 1)
    assert refused(text, "field 'seed': given twice in one object").field == "seed"
    inner = with_field("base_policy", '{"name": "a", "name": "b", "version": 1, "weights_hash": "h"}')
    assert refused(inner, "given twice").field == "base_policy.name"


def test_a_lone_surrogate_is_refused_in_a_value_and_in_a_key():
    refused(with_field("run_name", '"ma\\ud800in"'), "field 'run_name': holds a lone surrogate")
    err = refused(TEXT.replace('"seed": 0,', '"seed": 0, "x\\udc00": 1,', 1), "its name holds a lone surrogate")
    assert err.field == "'x\\udc00'"


@pytest.mark.parametrize("levels", [MAX_DEPTH + 1, 500, 900, 100_000])
def test_nesting_deeper_than_the_bound_is_refused_before_parsing(levels):
    refused(with_field("interrupted", "[" * levels + "]" * levels), f"nested more than {MAX_DEPTH} deep")


def test_brackets_inside_strings_are_not_nesting():
    assert depth('{"a": "[[[[{{{{\\"[[["}') == 1
    assert parse(json.dumps({"a": "[" * 1000}), "r.json") == {"a": "[" * 1000}


def test_a_device_a_named_pipe_and_a_folder_are_refused_before_reading(tmp_path):
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)  # no writer: reading it would wait forever
    for path, kind in [("/dev/zero", "a device"), (fifo, "a named pipe"), (tmp_path, "Is a directory")]:
        with pytest.raises(RecordError, match=kind):
            read_json(path)
    link = tmp_path / "zero.json"
    link.symlink_to("/dev/zero")
    with pytest.raises(RecordError, match="a device, not a regular file"):
        read_json(link)


def test_a_file_larger_than_the_bound_is_refused(tmp_path):
    path = tmp_path / "big.json"
    with open(path, "wb") as out:
        out.truncate(MAX_BYTES + 1)
    with pytest.raises(RecordError, match="too large to be a run record"):
        read_json(path)


def test_audit_refuses_each_hostile_file_with_one_line(tmp_path, capsys):
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    cases = [
        ("/dev/zero", "a device, not a regular file"),
        (str(fifo), "a named pipe"),
        (with_field("seed", "9" * 5000), "field 'seed': an integer of 5000 digits"),
        (with_field("interrupted", "[" * 900 + "]" * 900), "nested more than"),
        (with_field("run_name", '"\\ud800"'), "field 'run_name': holds a lone surrogate"),
        (with_field("cost", '{"wall_seconds": NaN}'), "field 'cost.wall_seconds': NaN is not a finite number"),
        (TEXT.replace('"seed": 0,', '"seed": 0, "seed": 1,', 1), "field 'seed': given twice"),
        (
            TEXT.replace('"seed": 0,', '"seed": 0, "x\\n\\u001b[2J": 1, "x\\n\\u001b[2J": 2,', 1),
            "field ''x\\n\\x1b[2J'': given twice",
        ),
    ]
    for i, (text, fragment) in enumerate(cases):
        path = text if not text.startswith("{") else str(tmp_path / f"{i}.json")
        if path != text:
            Path(path).write_text(text)
        for argv in (["audit", path], ["audit", path, "--json"]):
            code, out, err = call(argv, capsys)
            assert_usage_error(code, out, err, fragment)
            assert err.isascii() and "\x1b" not in err


def test_audit_escapes_line_breaks_and_terminal_escapes_in_what_it_prints(tmp_path, capsys):
    forged = "main\nstatus                      completed (FAKE ROW)\x1b[2J\u2028"
    path = tmp_path / "record.json"
    path.write_text(json.dumps(dict(RECORD, run_name=forged, **{"note\r": "\x07"})))
    code, out, err = call(["audit", str(path)], capsys)
    assert code == 0 and err == ""
    rows = out.splitlines()
    assert len(rows) == len(rec.display.as_table(load_record(path)))
    [name_row] = [r for r in rows if r.startswith("run_name")]
    assert name_row.split(None, 1)[1] == "main\\nstatus                      completed (FAKE ROW)\\x1b[2J\\u2028"
    assert "main\\nstatus" in out and "\\x1b[2J\\u2028" in out and "note\\r" in out and "\\x07" in out
    assert not any(c in out for c in "\x1b\r\x07\u2028") and sum(r.startswith("status") for r in rows) == 1
    code, out, _ = call(["audit", str(path), "--json"], capsys)
    assert code == 0 and out.isascii() and json.loads(out)["run_name"] == forged


# --- property tests over rlbook audit's input -----------------------------------------------------------------

counted: dict[str, int] = {}
outcomes = {"shown": 0, "refused": 0}
FOLDER = tempfile.TemporaryDirectory(prefix="rlbook-audit-")


def count(name: str) -> None:
    counted[name] = counted.get(name, 0) + 1


def strict_json(text: str):
    """``text`` parsed as JSON that holds no NaN or infinity (what ``--json`` must write)."""

    def refuse(constant):
        raise AssertionError(f"--json wrote {constant}")

    return json.loads(text, parse_constant=refuse)


def audit(data: bytes, capsys) -> None:
    """``rlbook audit`` of a file holding ``data``, in both modes: a clean table and strict JSON, or one line."""
    path = Path(FOLDER.name) / "record.json"
    path.write_bytes(data)
    code, out, err = call(["audit", str(path)], capsys)
    outcomes["shown" if code == 0 else "refused"] += 1
    if code != 0:
        assert_usage_error(code, out, err, str(path))
        assert all(c.isprintable() for c in err[:-1]), err
        assert call(["audit", str(path), "--json"], capsys)[0] == 2
        assert path.read_bytes() == data  # audit only reads
        return
    assert err == "" and all(c.isprintable() for row in out.splitlines() for c in row), out
    assert out.count("\n") == len(rec.display.as_table(load_record(path)))
    code, out, err = call(["audit", str(path), "--json"], capsys)
    assert code == 0 and err == "" and out.count("\n") == 1
    assert strict_json(out) == json.loads(data.decode("utf-8"))
    assert path.read_bytes() == data  # audit only reads


def test_audit_leaves_the_file_it_refuses_as_it_was(tmp_path, capsys):
    path = tmp_path / "record.json"
    data = with_field("seed", "9" * 5000).encode()
    path.write_bytes(data)
    before = path.stat()
    assert call(["audit", str(path)], capsys)[0] == 2
    assert path.read_bytes() == data and path.stat().st_mtime_ns == before.st_mtime_ns


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(10**30), max_value=10**30) | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@SETTINGS
@given(data=st.binary(max_size=200) | st.text(max_size=200).map(lambda t: t.encode("utf-8", "surrogatepass")))
def test_audit_of_arbitrary_bytes_is_a_record_or_one_line(data, capsys):
    count("bytes")
    audit(data, capsys)


@SETTINGS
@given(value=JSON_VALUES)
def test_audit_of_arbitrary_json_is_a_record_or_one_line(value, capsys):
    count("json value")
    audit(json.dumps(value).encode(), capsys)


@SETTINGS
@given(field=st.sampled_from(sorted(RECORD)), value=JSON_VALUES, extra=st.text(max_size=8), add=st.booleans())
def test_audit_of_a_record_with_a_field_replaced_or_added(field, value, extra, add, capsys):
    count("record field")
    changed = copy.deepcopy(RECORD)
    changed[extra if add else field] = value
    audit(json.dumps(changed).encode(), capsys)


@SETTINGS
@given(
    cut=st.integers(min_value=0, max_value=len(TEXT)),
    insert=st.text(alphabet=string.printable + '\x1b\u2028[{"\\', max_size=12),
    drop=st.integers(0, 6),
)
def test_audit_of_a_record_s_text_edited(cut, insert, drop, capsys):
    count("record text")
    audit((TEXT[:cut] + insert + TEXT[cut + drop :]).encode("utf-8", "surrogatepass"), capsys)


def test_the_property_tests_ran_their_inputs():
    """Reports how many inputs the properties above generated (run after them, in file order)."""
    print(f"\ngenerated inputs: {counted}, {sum(counted.values())} in all; audit {outcomes}")
    if counted:  # absent when this test is selected alone
        assert sum(counted.values()) >= 1000 and min(outcomes.values()) > 0
