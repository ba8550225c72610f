"""Every number the ``rlbook`` command reads (rlbook.cli) is bounded, written in ASCII digits, and says its limit.

The property tests (hypothesis) parse each numeric option of each command
from arbitrary text, from integers far beyond the limits and from every
kind of float: a value is either accepted, inside its bounds and exactly
what the text says, or refused with exit status 2 and one line. Only the
parser runs, so no run is loaded or trained.
"""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rlbook.cli import options

PROMPT = "U:3+4?|A:"
# (command line before the option, option, smallest, largest)
WHOLE_OPTIONS = [
    (["run", "main"], "--seed", 0, options.MAX_SEED),
    (["run", "main"], "--threads", 1, options.MAX_THREADS),
    (["sample", PROMPT], "-n", 1, options.MAX_SAMPLE_N),
    (["sample", PROMPT], "--step", 0, options.MAX_STEP),
    (["sample", PROMPT], "--seed", 0, options.MAX_SEED),
    (["sample", PROMPT], "--threads", 1, options.MAX_THREADS),
    (["eval"], "-n", 1, options.MAX_EVAL_N),
    (["eval"], "--step", 0, options.MAX_STEP),
    (["eval"], "--seed", 0, options.MAX_SEED),
    (["eval"], "--threads", 1, options.MAX_THREADS),
    (["build"], "--jobs", 1, options.MAX_JOBS),
]
TEMPERATURE_OPTIONS = [["sample", PROMPT], ["eval"]]
DEST = {"-n": "n", "--seed": "seed", "--threads": "threads", "--step": "step", "--jobs": "jobs"}
IDS = [f"{argv[0]} {option}" for argv, option, _, _ in WHOLE_OPTIONS]


PARSER = options.build_parser()  # parsing leaves the parser as it was, so one serves every example


def parse(argv: list[str], capsys) -> tuple[object, int, str]:
    """The parsed arguments (or None), the exit status argparse chose (0 if none) and what it wrote to stderr."""
    try:
        args, code = PARSER.parse_args(argv), 0
    except SystemExit as stop:
        args, code = None, stop.code
    return args, code, capsys.readouterr().err


def refused(code: int, err: str) -> bool:
    """Exit 2 with one line on stderr and no traceback."""
    return code == 2 and err.count("\n") == 1 and err.startswith("rlbook") and "Traceback" not in err


def option_argv(prefix: list[str], option: str, text: str) -> list[str]:
    # The joined form, so that a text starting with '-' reaches the option rather than being read as one.
    return [*prefix, f"{option}={text}"] if option.startswith("--") else [*prefix, option, text]


def check_whole(prefix, option, lo, hi, text, capsys) -> None:
    args, code, err = parse(option_argv(prefix, option, text), capsys)
    if args is None:
        assert refused(code, err), err
        return
    value = getattr(args, DEST[option])
    assert re.fullmatch(r"[0-9]+", text), f"{text!r} was read as {value}"
    assert value == int(text) and lo <= value <= hi


counted: dict[str, int] = {}


def count(name: str) -> None:
    counted[name] = counted.get(name, 0) + 1


@pytest.mark.parametrize("prefix, option, lo, hi", WHOLE_OPTIONS, ids=IDS)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    text=st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30)
    | st.from_regex(r"\A-?[0-9_ ]{1,25}\Z")
    | st.sampled_from(["０", "٠", " 0 ", "0_0", "+5", "1e3", "0x10", "007"])
)
def test_a_whole_number_option_accepts_only_ascii_digits_within_its_bounds(prefix, option, lo, hi, text, capsys):
    count("whole text")
    check_whole(prefix, option, lo, hi, text, capsys)


@pytest.mark.parametrize("prefix, option, lo, hi", WHOLE_OPTIONS, ids=IDS)
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=st.integers(min_value=-(2**70), max_value=2**70) | st.integers(min_value=-3, max_value=3))
def test_a_whole_number_option_is_accepted_exactly_within_its_bounds(prefix, option, lo, hi, value, capsys):
    count("whole integer")
    args, code, err = parse(option_argv(prefix, option, str(value)), capsys)
    if lo <= value <= hi:
        assert args is not None and getattr(args, DEST[option]) == value, err
    else:
        assert args is None and refused(code, err), err
        assert (f"must be at most {hi}" if value > hi else "must be") in err


@pytest.mark.parametrize("prefix", TEMPERATURE_OPTIONS, ids=lambda p: p[0])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(x=st.floats(allow_nan=True, allow_infinity=True) | st.floats(min_value=0.0, max_value=200.0))
def test_a_temperature_is_accepted_exactly_within_its_bounds(prefix, x, capsys):
    count("temperature float")
    args, code, err = parse([*prefix, f"--temperature={x!r}"], capsys)
    if math.isfinite(x) and options.MIN_TEMPERATURE <= x <= options.MAX_TEMPERATURE:
        assert args is not None and args.temperature == x, err
    else:
        assert args is None and refused(code, err), err


@pytest.mark.parametrize("prefix", TEMPERATURE_OPTIONS, ids=lambda p: p[0])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    text=st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30)
    | st.sampled_from(["１.５", "1_0", " 1.5", "1.5 ", "+1.5", "٠.٥", "1.5e0", ".5", "5.", "0x1p0"])
)
def test_a_temperature_accepts_only_ascii_decimals(prefix, text, capsys):
    count("temperature text")
    args, code, err = parse([*prefix, f"--temperature={text}"], capsys)
    if args is None:
        assert refused(code, err), err
        return
    assert re.fullmatch(r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?", text), f"{text!r} was read"
    assert args.temperature == float(text) and options.MIN_TEMPERATURE <= args.temperature <= options.MAX_TEMPERATURE


def test_the_property_tests_ran_their_inputs():
    """Reports how many inputs the properties above generated (run after them, in file order)."""
    print(f"\ngenerated inputs: {counted}, {sum(counted.values())} in all")
    if counted:  # absent when this test is selected alone
        assert sum(counted.values()) >= 2000


NON_ASCII = [
    ("--seed", "０"),
    ("--seed", "٠"),
    ("--seed", " 0 "),
    ("--seed", "0_0"),
    ("--seed", "+0"),
    ("--threads", "١"),
    ("-n", "３２"),
    ("--step", "²"),
]


@pytest.mark.parametrize("option, text", NON_ASCII, ids=[f"{o} {t!r}" for o, t in NON_ASCII])
def test_digits_of_other_scripts_spaces_and_underscores_are_refused(option, text, capsys):
    args, code, err = parse(option_argv(["sample", PROMPT], option, text), capsys)
    assert args is None and refused(code, err) and "expected a whole number" in err


@pytest.mark.parametrize("text", ["１.５", "1_0.5", " 1.5 ", "٠.٥"])
def test_a_temperature_in_other_digits_is_refused(text, capsys):
    args, code, err = parse(["sample", PROMPT, f"--temperature={text}"], capsys)
    assert args is None and refused(code, err) and "expected a number" in err


def test_the_issue_s_numbers_are_refused_with_their_limit(capsys):
    for argv, limit in (
        [["run", "main", "--seed", str(2**64)], f"must be at most {options.MAX_SEED}"],
        [["run", "main", "--threads", str(2**31)], f"must be at most {options.MAX_THREADS}"],
        [["sample", PROMPT, "-n", "1000000000"], f"must be at most {options.MAX_SAMPLE_N}"],
        [["eval", "-n", "1000000000"], f"must be at most {options.MAX_EVAL_N}"],
        [["sample", PROMPT, "--seed", "9" * 5000], "a number of 5000 digits"],
        [["sample", PROMPT, "-T", "1e6"], "must be at most 100"],
        [["build", "--jobs", "0"], "must be positive"],
    ):
        args, code, err = parse(argv, capsys)
        assert args is None and refused(code, err) and limit in err, err


HELP = [
    (["run", "--help"], ["0 to 4294967295", "1 to 256"]),
    (
        ["sample", "--help"],
        [f"1 to {options.MAX_SAMPLE_N}", f"0 to {options.MAX_STEP}", "0.01 to 100", "0 to 4294967295"],
    ),
    (["eval", "--help"], [f"1 to {options.MAX_EVAL_N}", f"0 to {options.MAX_STEP}", "0.01 to 100", "1 to 256"]),
    (["build", "--help"], [f"1 to {options.MAX_JOBS}"]),
]


@pytest.mark.parametrize("argv, limits", HELP, ids=[a[0] for a, _ in HELP])
def test_help_states_every_limit(argv, limits, capsys):
    with pytest.raises(SystemExit) as stop:
        PARSER.parse_args(argv)
    assert stop.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    for limit in limits:
        assert limit in text
