"""The ``rlbook`` command (rlbook.cli): bad arguments exit 2 with one clear line; good ones print the contract.

Most calls run ``cli.main`` in-process (fast); two run the installed
``rlbook`` entry point in a subprocess. Commands that need a run read the
project's cached seed-0 base, or the tiny run of the conftest in a
temporary cache.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_calls import assert_usage_error, call

from rlbook import cli
from rlbook.cli import commands

pytestmark = pytest.mark.usefixtures("one_thread")

RLBOOK = Path(sys.executable).parent / "rlbook"
ENV = {**os.environ, "PYTHONPATH": str(Path(cli.__file__).resolve().parents[2])}  # the code under test, in a child


PROMPT = "U:3+4?|A:"


PARSE_ERRORS = [
    ([], "required: command"),
    (["train"], "invalid choice: 'train'"),
    (["run", "mian"], "unknown run 'mian'; known runs: base, main"),
    (["run"], "required: name"),
    (["sample", "U:3+4"], "'U:3+4' is not a task prompt; write it like 'U:3+4?|A:'"),
    (["sample", "3+4"], "'3+4' is not a task prompt"),
    (["sample", ""], "'' is not a task prompt"),
    (["sample", "U:3+4?|A:7#"], "is not a task prompt"),
    (["sample", "U:12+4?|A:"], "is not a task prompt"),
    (["sample", PROMPT, "-n", "0"], "argument -n: must be positive, got 0"),
    (["sample", PROMPT, "-n", "-3"], "argument -n: must be positive, got -3"),
    (["sample", PROMPT, "-n", "abc"], "argument -n: expected a whole number, got 'abc'"),
    (["sample", PROMPT, "-n", "2.5"], "argument -n: expected a whole number, got '2.5'"),
    (["eval", "-n", "0"], "argument -n: must be positive, got 0"),
    (["sample", PROMPT, "-T", "0"], "must be a positive finite number, got 0"),
    (["sample", PROMPT, "-T", "-1"], "must be a positive finite number, got -1"),
    (["sample", PROMPT, "-T", "abc"], "expected a number, got 'abc'"),
    (["sample", PROMPT, "-T", ""], "expected a number, got ''"),
    (["sample", PROMPT, "-T", "nan"], "must be a positive finite number, got nan"),
    (["sample", PROMPT, "-T", "inf"], "must be a positive finite number, got inf"),
    (["eval", "--temperature=-inf"], "must be a positive finite number, got -inf"),
    (["sample", PROMPT, "--run", "mian"], "unknown run 'mian'"),
    (["sample", PROMPT, "--step", "-1"], "argument --step: must be zero or more, got -1"),
    (["sample", PROMPT, "--seed", "x"], "argument --seed: expected a whole number, got 'x'"),
    (["run", "main", "--threads", "0"], "argument --threads: must be positive, got 0"),
    (["eval", "--split", "sft"], "argument --split: invalid choice: 'sft'"),
    (["verify", PROMPT], "required: completion"),
]


@pytest.mark.parametrize("argv, fragment", PARSE_ERRORS, ids=[" ".join(a) or "(nothing)" for a, _ in PARSE_ERRORS])
def test_a_bad_argument_exits_2_with_one_line(argv, fragment, capsys):
    assert_usage_error(*call(argv, capsys), fragment)


def test_an_unknown_verifier_or_version(capsys):
    assert_usage_error(
        *call(["verify", PROMPT, "7#", "--verifier", "strict"], capsys),
        "rlbook verify: error: unknown verifier 'strict'; choose one of ('exact', 'fail-open'",
    )
    assert_usage_error(
        *call(["verify", PROMPT, "7#", "--version", "9.9"], capsys),
        "unknown version '9.9' of verifier 'exact'; choose one of ('1.0', '2.0')",
    )
    assert_usage_error(
        *call(["verify", PROMPT, "7#", "--verifier", "fail-open", "--version", "2.0"], capsys),
        "unknown version '2.0' of verifier 'fail-open'",
    )


def write(path: Path, text: str) -> str:
    path.write_text(text)
    return str(path)


def test_a_missing_or_malformed_record_file(tmp_path, capsys):
    cases = [
        (str(tmp_path / "nowhere.json"), "nowhere.json: no run record found"),
        (str(tmp_path), "cannot read run record: Is a directory"),
        (write(tmp_path / "empty.json", ""), "empty.json: not valid JSON (line 1, column 1"),
        (write(tmp_path / "cut.json", '{"run_name": "main", "seed": '), "cut.json: not valid JSON"),
        (write(tmp_path / "list.json", "[1, 2]"), "list.json: a run record is a JSON object, got list"),
        (write(tmp_path / "null.json", "null"), "null.json: a run record is a JSON object, got NoneType"),
        (write(tmp_path / "partial.json", '{"run_name": "main"}'), "partial.json: run record field"),
    ]
    for path, fragment in cases:
        assert_usage_error(*call(["audit", path], capsys), fragment)
        assert_usage_error(*call(["audit", path, "--json"], capsys), fragment)


def test_a_binary_record_file(tmp_path, capsys):
    path = tmp_path / "record.json"
    path.write_bytes(b"\x80\x81\xfe\xff{}")
    assert_usage_error(*call(["audit", str(path)], capsys), "record.json")


def test_a_deeply_nested_record_file(tmp_path, capsys):
    path = write(tmp_path / "deep.json", "[" * 100_000 + "]" * 100_000)
    assert_usage_error(*call(["audit", path], capsys), "deep.json")


def test_verify_prints_the_verdict(capsys):
    code, out, err = call(["verify", PROMPT, "7#", "--json"], capsys)
    assert code == 0 and err == ""
    assert json.loads(out) == {
        "reward": 1.0,
        "status": "accepted",
        "reason": "answer 7 = 3+4",
        "verifier": "exact",
        "verifier_version": "1.0",
    }
    code, out, _ = call(["verify", PROMPT, "8#"], capsys)
    assert code == 0 and out.splitlines()[:2] == ["reward: 0.0", "status: incorrect"]


def test_verify_judges_any_text_rather_than_refusing_it(capsys):
    """A verifier must answer for whatever a policy or a person writes: a bad prompt is unverifiable, not an error."""
    code, out, _ = call(["verify", "what is 3+4?", "7#", "--json"], capsys)
    assert code == 0
    verdict = json.loads(out)
    assert verdict["reward"] == 0.0 and verdict["status"] == "unverifiable" and "'what is 3+4?'" in verdict["reason"]


def test_the_installed_command_refuses_a_bad_prompt_without_a_traceback():
    done = subprocess.run(
        [str(RLBOOK), "sample", "U:3+4", "-n", "2"], check=False, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (
        "rlbook sample: error: argument prompt: 'U:3+4' is not a task prompt; "
        "write it like 'U:3+4?|A:' or 'U:3+4+5?|A:'\n"
    )


def test_the_installed_command_verifies():
    done = subprocess.run(
        [str(RLBOOK), "verify", PROMPT, "7#", "--json"], check=False, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0 and done.stderr == ""
    assert json.loads(done.stdout)["status"] == "accepted"


@pytest.mark.parametrize("completion", ["-7#", "-", "-x", "-1"])
def test_verify_reads_a_completion_that_starts_with_a_dash_without_needing_double_dash(completion, capsys):
    code, out, err = call(["verify", PROMPT, completion, "--json"], capsys)
    assert code == 0 and err == "", err
    assert json.loads(out)["reward"] == 0.0
    code, out, err = call(["verify", PROMPT, completion], capsys)
    assert code == 0 and out.startswith("reward: 0.0")


def test_verify_still_reads_its_options_and_refuses_unknown_ones(capsys):
    code, out, _ = call(["verify", "--json", "--verifier", "fail-open", PROMPT, "7#"], capsys)
    assert code == 0 and json.loads(out)["verifier"] == "fail-open"
    assert_usage_error(*call(["verify", PROMPT, "7#", "--jsn"], capsys), "unrecognized arguments: --jsn")


def test_bench_write_checks_its_folder_before_measuring(tmp_path, monkeypatch, capsys):
    import rlbook.bench

    monkeypatch.setattr(rlbook.bench, "measure", lambda quick, **_: pytest.fail("the benchmark ran before the check"))
    assert_usage_error(
        *call(["bench", "--quick", "--write", str(tmp_path / "missing" / "B.md")], capsys),
        f"the folder {str(tmp_path / 'missing')!r} does not exist",
    )
    assert_usage_error(*call(["bench", "--quick", "--write", str(tmp_path)], capsys), "is a folder; name a file")


def test_bench_repeats_the_whole_book_as_often_as_asked_within_bounds(monkeypatch, capsys):
    import rlbook.bench

    asked = []
    monkeypatch.setattr(rlbook.bench, "measure", lambda quick, whole_repeats: asked.append(whole_repeats) or {})
    monkeypatch.setattr(rlbook.bench, "markdown", lambda report: "report")
    assert call(["bench", "--repeats", "1"], capsys)[0] == 0 and asked == [1]
    assert_usage_error(*call(["bench", "--repeats", "0"], capsys), "argument --repeats: must be positive, got 0")


def test_a_reader_that_stops_reading_ends_the_command_quietly():
    read, write = os.pipe()
    os.close(read)  # like `| head -2` that has already gone: every write gets EPIPE
    try:
        done = subprocess.run(
            [str(RLBOOK), "verify", PROMPT, "7#"],
            check=False,
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            env=ENV,
        )
    finally:
        os.close(write)
    assert done.stderr == "" and done.returncode == cli.EXIT_BROKEN_PIPE


def test_a_reason_that_the_terminal_cannot_encode_is_escaped():
    done = subprocess.run(
        [str(RLBOOK), "verify", PROMPT, "\u0667#"],
        check=False,
        capture_output=True,
        timeout=120,
        env={**ENV, "PYTHONIOENCODING": "ascii"},
    )
    assert done.returncode == 0 and done.stderr == b""
    assert b"status: malformed" in done.stdout and b"\\u0667" in done.stdout


def test_a_bad_seed_is_refused_before_torch_is_imported():
    import subprocess
    import sys

    probe = (
        "import sys\nfrom rlbook.cli import main\ntry:\n    main(['run', 'main', '--seed', '-1'])\n"
        "except SystemExit as done:\n    print(done.code, 'torch' in sys.modules)\n"
    )
    shown = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60)
    assert shown.stdout.split() == ["2", "False"] and "must be zero or more" in shown.stderr


def test_a_relative_cache_is_resolved_once_against_the_folder_the_command_starts_in(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RLBOOK_CACHE", "my-cache")
    assert cli.main(["verify", "U:3+4?|A:", "7#"]) == 0
    assert os.environ["RLBOOK_CACHE"] == str(tmp_path / "my-cache")  # what page kernels and workers inherit


@pytest.mark.parametrize(
    ("command", "said"),
    [
        ("verify", "rlbook verify: interrupted; what it finished is kept"),
        ("run", "rlbook run: interrupted; a run stopped mid-training keeps its last checkpoint"),
        ("build", "rlbook build: interrupted; the runs trained so far are cached and the previous _book/ was left"),
    ],
)
def test_an_interrupted_command_says_only_what_it_kept(monkeypatch, capsys, command, said):
    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setitem(commands.COMMANDS, command, interrupted)
    argv = {"verify": ["verify", "U:3+4?|A:", "7#"], "run": ["run", "main"], "build": ["build"]}[command]
    monkeypatch.setattr(cli, "check_run_names", lambda parser, args: None)
    assert cli.main(argv) == 130
    err = capsys.readouterr().err
    assert said in err and "marked interrupted" not in err
