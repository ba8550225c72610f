"""The ``rlbook`` command: what the chapters do, from a terminal.

``rlbook run``, ``sample``, ``verify``, ``eval``, ``audit``, ``build`` and
``bench``. A bad argument exits with status 2 and one line saying what is
wrong; nothing else imports this module.
"""

from __future__ import annotations

import argparse
import errno
import json
import math
import os
import re
import sys
import time
from pathlib import Path

from rlbook.core.arguments import DECIMAL, bounded_int, shown

EXIT_USAGE = 2
EXIT_BROKEN_PIPE = 141  # what a shell reports for a command stopped by SIGPIPE (128 + 13)
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
    from rlbook.core.world import parse_prompt

    if parse_prompt(text) is None:
        raise argparse.ArgumentTypeError(
            f"{shown(text)} is not a task prompt; write it like 'U:3+4?|A:' or 'U:3+4+5?|A:'"
        )
    return text


def build_parser() -> Parser:
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
        "package's rlbook/book/robustness.json, which the book's appendix shows",
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
    p.add_argument(
        "--step",
        type=bounded_int(0, MAX_STEP),
        default=None,
        help=f"checkpoint step (0 to {MAX_STEP}, default: the last)",
    )


def _temperature(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "-T",
        "--temperature",
        type=temperature,
        default=1.0,
        help=f"sampling temperature ({MIN_TEMPERATURE} to {MAX_TEMPERATURE:g}, default 1.0)",
    )


def cmd_run(args) -> int:
    from rlbook.runs import load

    started = time.perf_counter()
    run = load(args.name, seed=args.seed, threads=args.threads, rebuild=args.rebuild)
    first, last = run.evals[0], run.evals[-1]
    out = {
        "name": run.name,
        "seed": run.seed,
        "threads": run.threads,
        "status": run.record["status"],
        "heldout_expected_reward_before": first["heldout_expected_reward"],
        "heldout_expected_reward_after": last["heldout_expected_reward"],
        "heldout_greedy_accuracy_before": first["heldout_greedy_accuracy"],
        "heldout_greedy_accuracy_after": last["heldout_greedy_accuracy"],
        "weights_hash": run.log["checkpoints"][-1]["weights_hash"],
        "wall_seconds": round(time.perf_counter() - started, 3),
        "cached": run.cached,
        "record_path": str(run.path / "record.json"),
    }
    _emit(out, args.json)
    return 0


def _policy(args):
    from rlbook.runs import load

    run = load(args.run, seed=args.seed, threads=args.threads)
    if args.step is not None and args.step not in run.steps:
        raise UsageError(f"run {args.run!r} has no checkpoint at step {args.step}; its checkpoints are {run.steps}")
    return run, run.policy(args.step)


def cmd_sample(args) -> int:
    from rlbook.core.evaluate import evaluate
    from rlbook.core.world import parse_prompt

    task = parse_prompt(args.prompt)
    assert task is not None  # argparse read it with task_prompt, which refuses anything else
    run, policy = _policy(args)
    if task.world != run.record["prompt_split"]["world"]:
        raise UsageError(f"run {args.run!r} answers {run.record['prompt_template']} prompts, not {args.prompt!r}")
    budget = run.record["sampling"]["token_budget"]
    result = evaluate(policy, [task], n=args.n, temperature=args.temperature, budget=budget, seed=args.seed)
    answers = [{"completion": c, "count": k, "status": s} for c, k, s in result.answers(0)]
    out = {
        "prompt": args.prompt,
        "policy": policy.version,
        "n": args.n,
        "temperature": args.temperature,
        "expected_reward": result.expected_reward,
        "answers": answers,
    }
    if args.json:
        _emit(out, True)
    else:
        print(f"{args.prompt}  policy {policy.version}  n={args.n}  T={args.temperature}")
        for a in answers:
            print(f"  {a['completion']!r:10} x{a['count']:<3} {a['status']}")
        print(f"expected reward ~ {result.expected_reward:.3f}")
    return 0


def cmd_verify(args) -> int:
    from rlbook.core.rewards import get_verifier

    try:
        verifier = get_verifier(args.verifier, args.version)
    except ValueError as err:
        raise UsageError(str(err)) from None
    verdict = verifier(args.prompt, args.completion)
    out = {
        "reward": verdict.reward,
        "status": verdict.status,
        "reason": verdict.reason,
        "verifier": verdict.verifier,
        "verifier_version": verdict.version,
    }
    _emit(out, args.json)
    return 0


def cmd_eval(args) -> int:
    from rlbook.core.evaluate import evaluate, greedy_accuracy
    from rlbook.core.stats import mean_with_ci
    from rlbook.core.world import split

    run, policy = _policy(args)
    world = run.record["prompt_split"]["world"]
    budget = run.record["sampling"]["token_budget"]
    tasks = split(args.split, world) if world == "single" or args.split != "all" else split("heldout", world)
    result = evaluate(policy, tasks, n=args.n, temperature=args.temperature, budget=budget, seed=args.seed)
    est = mean_with_ci(result.rewards)
    out = {
        "run": args.run,
        "policy": policy.version,
        "split": args.split,
        "prompts": len(tasks),
        "n": args.n,
        "temperature": args.temperature,
        "token_budget": budget,
        "expected_reward": est.value,
        "ci95": [est.lo, est.hi],
        "greedy_accuracy": greedy_accuracy(policy, tasks, budget),
        "status_counts": result.status_counts(),
    }
    _emit(out, args.json)
    return 0


def cmd_audit(args) -> int:
    from rlbook.record import RecordError
    from rlbook.record.display import as_table, printable
    from rlbook.record.reading import load_record

    try:
        record = load_record(args.record)
    except RecordError as err:
        raise UsageError(printable(str(err))) from None
    if args.json:
        print(json.dumps(record, allow_nan=False))
    else:
        rows = [(printable(key), printable(value)) for key, value in as_table(record)]
        width = max(len(k) for k, _ in rows)
        for key, value in rows:
            print(f"{key:<{width}}  {value}")
    return 0


def cmd_build(args) -> int:
    from rlbook.publish.build import build_book

    return build_book(None, backend=args.backend, only=args.only, jobs=args.jobs, prefetch=True, strict=args.strict)


def cmd_claims(args) -> int:
    from rlbook import book
    from rlbook.book.check import check_all

    unknown = [c for c in args.chapters if c not in book.topics()]
    if unknown:
        raise UsageError(f"no chapter facts named {unknown[0]!r}; the chapters' facts are: {', '.join(book.topics())}")
    if args.seeds is None:
        if args.draws or args.write:
            raise UsageError("--draws and --write go with --seeds (the audit)")
        return 1 if check_all(args.chapters or None) else 0
    return _audit(args)


def _audit(args) -> int:
    import datetime
    import shlex

    from rlbook.book import check
    from rlbook.core import numerics

    try:
        seeds = check.parse_seeds(args.seeds)
    except ValueError as err:
        raise UsageError(str(err)) from None
    draws = [d.strip() for d in (args.draws or numerics.mode()).split(",") if d.strip()]
    if not draws or any(d not in numerics.MODES for d in draws):
        raise UsageError(f"--draws takes {' and '.join(numerics.MODES)}, comma-separated, not {args.draws!r}")
    if args.write and not Path(args.write).resolve().parent.is_dir():
        raise UsageError(f"--write: the folder of {args.write!r} does not exist")
    results = check.audit_draws(seeds, draws, args.chapters or None)
    command = "rlbook claims " + " ".join(shlex.quote(a) for a in sys.argv[2:])
    text = check.report(results, command, datetime.date.today().isoformat())
    if args.write:
        Path(args.write).write_text(text, encoding="utf-8")
        data = check.audit_data(results, command, datetime.date.today().isoformat())
        check.AUDIT_DATA.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(text)
    return 0


def cmd_fingerprint(args) -> int:
    from rlbook.book.prefetch import book_runs
    from rlbook.runs import fingerprint as fp

    pairs = book_runs()
    try:
        mine = fp.fingerprint(pairs)
    except fp.MissingRuns as err:
        print(f"rlbook fingerprint: {err}", file=sys.stderr)
        return 1
    found = {"fingerprint": mine, "runs": len(pairs), "draw": fp.draw()}
    if args.write:
        fp.PUBLISHED.write_text(json.dumps(found, indent=1) + "\n", encoding="utf-8")
    book = fp.published()
    if args.json:
        print(json.dumps({**found, "published": book["fingerprint"], "same": mine == book["fingerprint"]}))
    else:
        print(fp.compare(pairs))
    return 0


def cmd_bench(args) -> int:
    from rlbook.bench import main as bench_main

    if args.write is not None:
        _check_writable(Path(args.write))
    return bench_main(args)


def _check_writable(path: Path) -> None:
    """Raise UsageError unless a file can be written at ``path``: checked before a long measurement, not after."""
    folder = path.parent
    if path.is_dir():
        raise UsageError(f"--write {str(path)!r} is a folder; name a file")
    if not folder.is_dir():
        raise UsageError(f"--write {str(path)!r}: the folder {str(folder)!r} does not exist")
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise UsageError(f"--write {str(path)!r}: cannot write there (permission denied)")


def _emit(out: dict, as_json: bool) -> None:
    if as_json:
        print(json.dumps(out, default=str))
    else:
        for key, value in out.items():
            print(f"{key}: {value}")


COMMANDS = {
    "run": cmd_run,
    "sample": cmd_sample,
    "verify": cmd_verify,
    "eval": cmd_eval,
    "audit": cmd_audit,
    "build": cmd_build,
    "claims": cmd_claims,
    "fingerprint": cmd_fingerprint,
    "bench": cmd_bench,
}


KEPT = "what it finished is kept"
MARKED = "the run record is marked interrupted and the run resumes from its last checkpoint next time"
"""What an interrupted command says when training did mark a run's record (rlbook.runs.training.RunInterrupted)."""
INTERRUPTED = {
    "run": "a run stopped mid-training keeps its last checkpoint and resumes from there next time",
    "build": "the runs trained so far are cached and the previous _book/ was left as it was",
    "claims": "the runs trained so far are cached in the audit's cache",
}
"""What an interrupted command says it kept, by command (none claims more than it did)."""


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``rlbook`` command.

    Output that the terminal's encoding cannot show is written as backslash
    escapes rather than raising; a reader that stops reading (``| head``)
    ends the command quietly with status 141, as SIGPIPE would.
    """
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    parser = build_parser()
    args = parser.parse_args(argv)
    check_run_names(parser, args)
    if os.environ.get("RLBOOK_CACHE"):  # resolved once, here: page kernels and workers run in other folders
        os.environ["RLBOOK_CACHE"] = os.path.abspath(os.environ["RLBOOK_CACHE"])
    try:
        code = COMMANDS[args.command](args)
        sys.stdout.flush()
        return code
    except UsageError as err:
        print(f"rlbook {args.command}: error: {err}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        _quiet_stdout()
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt as err:
        kept = MARKED if hasattr(err, "record") else INTERRUPTED.get(args.command, KEPT)
        print(f"rlbook {args.command}: interrupted; {kept}", file=sys.stderr)
        return 130
    except OSError as err:  # the run cache's own errors (rlbook.runs.CacheError) and a full or read-only disk
        if err.errno == errno.EPIPE:
            _quiet_stdout()
            return EXIT_BROKEN_PIPE
        print(f"rlbook {args.command}: error: {_os_error(err)}", file=sys.stderr)
        return 1


def _os_error(err: OSError) -> str:
    """One line for an operating-system error: its own message, with the file it concerns."""
    if err.errno == errno.ENOSPC and "no space left" not in str(err).lower():
        return f"no space left on device ({err.filename or err})"
    if err.strerror and err.filename:
        return f"{err.filename}: {err.strerror}"
    return " ".join(str(err).split())


def _quiet_stdout() -> None:
    """Point stdout at /dev/null, so that Python's final flush of what is left does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # stdout is not a file (captured in tests)
        pass


if __name__ == "__main__":
    sys.exit(main())
