"""The ``rlbook`` command's parser: its subcommands, their options, and the bounds on every argument.

:func:`build_parser` reads the command line of :func:`rlbook.cli.main`. Every
number it reads is bounded and written in ASCII digits, and a bad argument
exits with status 2 and one line saying what is wrong (:class:`Parser`); a
run's name is checked against the catalogue only once every other argument
has passed (:func:`check_run_names`), since knowing the runs imports torch.
"""

from __future__ import annotations

import argparse
import math
import re

from rlbook.core.arguments import DECIMAL, bounded_int, shown

EXIT_USAGE = 2
MIN_TEMPERATURE = 0.01
MAX_TEMPERATURE = 100.0
MAX_SEED = 2**32 - 1
MAX_THREADS = 256
MAX_SAMPLE_N = 100_000
"""``sample -n``: one prompt; 100,000 answers take about 2 s and 100 MB."""
MAX_EVAL_N = 2_000
"""``eval -n``: per prompt; 2,000 on the 100 prompts of ``--split all`` take about 8 s and 250 MB."""
MAX_STEP = 1_000_000
MAX_JOBS = 64


class UsageError(Exception):
    """A bad argument discovered after parsing (unknown step, bad record file...)."""


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line on stderr and exit status 2."""

    commands: dict[str, Parser]
    """The subcommands' parsers, by name (set by :func:`build_parser`)."""

    def error(self, message: str):
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def temperature(text: str) -> float:
    """An argparse type: a sampling temperature in ASCII digits, from :data:`MIN_TEMPERATURE` to :data:`MAX_TEMPERATURE`."""
    if not DECIMAL.fullmatch(text):
        raise argparse.ArgumentTypeError(f"expected a number, got {shown(text)}")
    value, written = float(text), text if len(text) <= 40 else text[:40] + "..."
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive finite number, got {written}")
    if value < MIN_TEMPERATURE:
        raise argparse.ArgumentTypeError(
            f"must be at least {MIN_TEMPERATURE} (lower values overflow; use greedy "
            f"decoding via 'rlbook eval' instead), got {written}"
        )
    if value > MAX_TEMPERATURE:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_TEMPERATURE:g}, got {written}")
    return value


def run_name(text: str) -> str:
    """A run's name as given; :func:`check_run_names` checks it once every other argument has passed.

    Knowing the runs means importing torch (seconds on a busy machine), so a
    bad ``--seed`` is refused before that.
    """
    return text


#: (command, destination, how the argument is written): the run names :func:`check_run_names` checks.
RUN_ARGUMENTS = (("run", "name", "name"), ("sample", "run", "--run"), ("eval", "run", "--run"))


def check_run_names(parser: Parser, args: argparse.Namespace) -> None:
    """Refuse, as argparse would (exit 2, one line), a run name that is not in the catalogue."""
    for command, dest, written in RUN_ARGUMENTS:
        if args.command == command:
            from rlbook.runs import RUNS

            value = getattr(args, dest)
            if value not in RUNS:
                parser.commands[command].error(
                    f"argument {written}: unknown run {shown(value)}; known runs: {', '.join(RUNS)}"
                )


def task_prompt(text: str) -> str:
    """An argparse type: a prompt of the task's form, such as ``U:3+4?|A:`` (``rlbook sample``'s prompt)."""
    from rlbook.core.world import parse_prompt

    if parse_prompt(text) is None:
        raise argparse.ArgumentTypeError(
            f"{shown(text)} is not a task prompt; write it like 'U:3+4?|A:' or 'U:3+4+5?|A:'"
        )
    return text


def build_parser() -> Parser:
    """The parser of the ``rlbook`` command line: one subparser per command, kept in ``parser.commands``."""
    parser = Parser(prog="rlbook", description="The executable book's runs, workshop, verifier and build.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    parser.commands = sub.choices

    p = sub.add_parser("run", help="train (or load from the cache) one of the book's named runs")
    p.add_argument("name", type=run_name)
    _common(p, json_flag=True)
    p.add_argument(
        "--rebuild",
        action="store_true",
        help="train this run again even if it is cached (its parent and shared pretraining stay cached)",
    )

    p = sub.add_parser("sample", help="the workshop: sample a prompt n times and judge the answers")
    p.add_argument("prompt", type=task_prompt)
    p.add_argument(
        "-n", type=bounded_int(1, MAX_SAMPLE_N), default=32, help=f"samples (1 to {MAX_SAMPLE_N}, default 32)"
    )
    _temperature(p)
    p.add_argument("--run", type=run_name, default="base", help="run whose policy to sample (default base)")
    _step(p)
    _common(p, json_flag=True)

    p = sub.add_parser("verify", help="judge one completion with a verifier")
    # A completion is any text, '-7#' included: only '--name' is read as an option here.
    p._negative_number_matcher = re.compile(r"^-(?!-)")
    p.add_argument("prompt")
    p.add_argument("completion")
    p.add_argument("--verifier", default="exact", help="exact, fail-open or exact+process (default exact)")
    p.add_argument("--version", default=None, help="verifier version (default: the verifier's own)")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("eval", help="expected reward and greedy accuracy of a checkpoint")
    p.add_argument("--run", type=run_name, default="main")
    _step(p)
    p.add_argument(
        "-n", type=bounded_int(1, MAX_EVAL_N), default=32, help=f"samples per prompt (1 to {MAX_EVAL_N}, default 32)"
    )
    _temperature(p)
    p.add_argument("--split", choices=("heldout", "train", "validation", "test", "all"), default="heldout")
    _common(p, json_flag=True)

    p = sub.add_parser("audit", help="validate a run record file and print it as a table")
    p.add_argument("record", help="path to a record.json")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("build", help="execute the chapters and build the HTML book")
    p.add_argument("--backend", choices=("auto", "quarto", "pandoc"), default="auto")
    p.add_argument("--only", default=None, help="build only this chapter (file stem, e.g. 01-rl-loop)")
    p.add_argument(
        "--jobs",
        type=bounded_int(1, MAX_JOBS),
        default=None,
        help=f"pages executed at once, each in its own kernel (1 to {MAX_JOBS}, default 2), and runs "
        "trained at once before them (default: one per usable core)",
    )

    p.add_argument(
        "--strict",
        action="store_true",
        help="fail when a law of the book does not hold on this machine's runs (make test and CI do)",
    )
    p.add_argument(
        "--fresh",
        action="store_true",
        help="execute every page, even one whose page, package, runs, environment and libraries are unchanged "
        "since it was last executed (reused by default)",
    )

    p = sub.add_parser(
        "claims", help="judge every chapter's laws and findings on this machine's runs, or audit them on more seeds"
    )
    p.add_argument("chapters", nargs="*", help="the chapters' facts to check (default: all), e.g. loop")
    p.add_argument(
        "--seeds", default=None, help="audit on these seeds, e.g. 0-9, in a cache of its own (default: the book's)"
    )
    p.add_argument(
        "--draws",
        default=None,
        help="with --seeds: the numerical draws to audit, e.g. pinned,native (default: this process's)",
    )
    p.add_argument(
        "--write",
        default=None,
        help="with --seeds: write the audit's table to this Markdown file (ROBUSTNESS.md), and its data to the "
        "package's rlbook/book/robustness.json, which the book's appendix shows; with chapters named, their rows "
        "replace theirs in the book's audit (same seeds and draws) and the other chapters keep theirs",
    )
    p = sub.add_parser("fingerprint", help="one digest of every run the book reads: equal to the book's, bit for bit?")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--write", action="store_true", help="record this build's fingerprint as the published one")
    p = sub.add_parser("bench", help="measure the speed the book promises")
    p.add_argument("--json", action="store_true")
    p.add_argument("--quick", action="store_true", help="fewer repeats, smaller batches")
    p.add_argument("--peer", choices=("trl",), default=None, help="also time a peer trainer on the same batch")
    p.add_argument("--write", default=None, help="write the report to this Markdown file (its folder must exist)")
    p.add_argument(
        "--repeats",
        type=bounded_int(1, 9),
        default=3,
        help="how often to repeat each whole-book measurement (1 to 9, default 3; each takes minutes)",
    )
    p.add_argument(
        "--browser",
        action="store_true",
        help="measure chapter 1's web workshop in headless Chromium instead (needs chromium and playwright)",
    )
    return parser


def _common(p: argparse.ArgumentParser, json_flag: bool) -> None:
    """Add ``--seed``, ``--threads`` and, with ``json_flag``, ``--json`` to a command that loads a run."""
    p.add_argument("--seed", type=bounded_int(0, MAX_SEED), default=0, help=f"random seed (0 to {MAX_SEED}, default 0)")
    p.add_argument(
        "--threads",
        type=bounded_int(1, MAX_THREADS),
        default=None,
        help=f"torch threads (1 to {MAX_THREADS}, default 1)",
    )
    if json_flag:
        p.add_argument("--json", action="store_true", help="print one JSON object")


def _step(p: argparse.ArgumentParser) -> None:
    """Add ``--step``, the checkpoint of the run to read, to a command."""
    p.add_argument(
        "--step",
        type=bounded_int(0, MAX_STEP),
        default=None,
        help=f"checkpoint step (0 to {MAX_STEP}, default: the last)",
    )


def _temperature(p: argparse.ArgumentParser) -> None:
    """Add ``-T``/``--temperature``, bounded by :func:`temperature`, to a command that samples."""
    p.add_argument(
        "-T",
        "--temperature",
        type=temperature,
        default=1.0,
        help=f"sampling temperature ({MIN_TEMPERATURE} to {MAX_TEMPERATURE:g}, default 1.0)",
    )
