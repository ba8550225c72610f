"""The ``rlbook`` command: what the chapters do, from a terminal.

``rlbook run``, ``sample``, ``verify``, ``eval``, ``audit``, ``build`` and
``bench``. A bad argument exits with status 2 and one line saying what is
wrong; nothing else imports this module.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

EXIT_USAGE = 2
MIN_TEMPERATURE = 0.01


class UsageError(Exception):
    """A bad argument discovered after parsing (unknown step, bad record file...)."""


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line on stderr and exit status 2."""

    def error(self, message: str):
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _whole_number(text: str, minimum: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"must be {'positive' if minimum == 1 else 'zero or more'}, got {value}")
    return value


def positive_int(text: str) -> int:
    return _whole_number(text, 1)


def non_negative_int(text: str) -> int:
    return _whole_number(text, 0)


def temperature(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive finite number, got {text}")
    if value < MIN_TEMPERATURE:
        raise argparse.ArgumentTypeError(f"must be at least {MIN_TEMPERATURE} (lower values overflow; use greedy "
                                         f"decoding via 'rlbook eval' instead), got {text}")
    return value


def run_name(text: str) -> str:
    from rlbook.runs import RUNS

    if text not in RUNS:
        raise argparse.ArgumentTypeError(f"unknown run {text!r}; known runs: {', '.join(RUNS)}")
    return text


def task_prompt(text: str) -> str:
    from rlbook.core.world import parse_prompt

    if parse_prompt(text) is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not a task prompt; write it like 'U:3+4?|A:' or 'U:3+4+5?|A:'")
    return text


def build_parser() -> Parser:
    parser = Parser(prog="rlbook", description="The executable book's runs, workshop, verifier and build.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)

    p = sub.add_parser("run", help="train (or load from the cache) one of the book's named runs")
    p.add_argument("name", type=run_name)
    _common(p, json_flag=True)
    p.add_argument("--rebuild", action="store_true", help="train this run again even if it is cached (its parent and shared pretraining stay cached)")

    p = sub.add_parser("sample", help="the workshop: sample a prompt n times and judge the answers")
    p.add_argument("prompt", type=task_prompt)
    p.add_argument("-n", type=positive_int, default=32, help="samples (default 32)")
    p.add_argument("-T", "--temperature", type=temperature, default=1.0, help="sampling temperature (default 1.0)")
    p.add_argument("--run", type=run_name, default="base", help="run whose policy to sample (default base)")
    p.add_argument("--step", type=non_negative_int, default=None, help="checkpoint step (default: the last)")
    _common(p, json_flag=True)

    p = sub.add_parser("verify", help="judge one completion with a verifier")
    p.add_argument("prompt")
    p.add_argument("completion")
    p.add_argument("--verifier", default="exact", help="exact, fail-open or exact+process (default exact)")
    p.add_argument("--version", default=None, help="verifier version (default: the verifier's own)")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("eval", help="expected reward and greedy accuracy of a checkpoint")
    p.add_argument("--run", type=run_name, default="main")
    p.add_argument("--step", type=non_negative_int, default=None)
    p.add_argument("-n", type=positive_int, default=32)
    p.add_argument("-T", "--temperature", type=temperature, default=1.0)
    p.add_argument("--split", choices=("heldout", "train", "validation", "test", "all"), default="heldout")
    _common(p, json_flag=True)

    p = sub.add_parser("audit", help="validate a run record file and print it as a table")
    p.add_argument("record", help="path to a record.json")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("build", help="execute the chapters and build the HTML book")
    p.add_argument("--backend", choices=("auto", "quarto", "pandoc"), default="auto")
    p.add_argument("--only", default=None, help="build only this chapter (file stem, e.g. 01-rl-loop)")
    p.add_argument("--jobs", type=int, default=None, help="pages executed at once, each in its own kernel (default 2), and runs trained at once "
                   "before them (default: one per usable core)")

    p = sub.add_parser("bench", help="measure the speed the book promises")
    p.add_argument("--json", action="store_true")
    p.add_argument("--quick", action="store_true", help="fewer repeats, smaller batches")
    p.add_argument("--peer", choices=("trl",), default=None, help="also time a peer trainer on the same batch")
    p.add_argument("--write", default=None, help="write the report to this Markdown file")
    p.add_argument("--browser", action="store_true",
                   help="measure chapter 1's web workshop in headless Chromium instead (needs chromium and playwright)")
    return parser


def _common(p: argparse.ArgumentParser, json_flag: bool) -> None:
    p.add_argument("--seed", type=non_negative_int, default=0)
    p.add_argument("--threads", type=positive_int, default=None, help="torch threads (default 1)")
    if json_flag:
        p.add_argument("--json", action="store_true", help="print one JSON object")


def cmd_run(args) -> int:
    from rlbook.runs import load

    started = time.perf_counter()
    run = load(args.name, seed=args.seed, threads=args.threads, rebuild=args.rebuild)
    first, last = run.evals[0], run.evals[-1]
    out = {"name": run.name, "seed": run.seed, "threads": run.threads, "status": run.record["status"],
           "heldout_expected_reward_before": first["heldout_expected_reward"],
           "heldout_expected_reward_after": last["heldout_expected_reward"],
           "heldout_greedy_accuracy_before": first["heldout_greedy_accuracy"],
           "heldout_greedy_accuracy_after": last["heldout_greedy_accuracy"],
           "weights_hash": run.log["checkpoints"][-1]["weights_hash"],
           "wall_seconds": round(time.perf_counter() - started, 3), "cached": run.cached,
           "record_path": str(run.path / "record.json")}
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
    run, policy = _policy(args)
    if task.world != run.record["prompt_split"]["world"]:
        raise UsageError(f"run {args.run!r} answers {run.record['prompt_template']} prompts, not {args.prompt!r}")
    budget = run.record["sampling"]["token_budget"]
    result = evaluate(policy, [task], n=args.n, temperature=args.temperature, budget=budget, seed=args.seed)
    answers = [{"completion": c, "count": k, "status": s} for c, k, s in result.answers(0)]
    out = {"prompt": args.prompt, "policy": policy.version, "n": args.n, "temperature": args.temperature,
           "expected_reward": result.expected_reward, "answers": answers}
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
    out = {"reward": verdict.reward, "status": verdict.status, "reason": verdict.reason,
           "verifier": verdict.verifier, "verifier_version": verdict.version}
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
    out = {"run": args.run, "policy": policy.version, "split": args.split, "prompts": len(tasks), "n": args.n,
           "temperature": args.temperature, "token_budget": budget, "expected_reward": est.value,
           "ci95": [est.lo, est.hi], "greedy_accuracy": greedy_accuracy(policy, tasks, budget),
           "status_counts": result.status_counts()}
    _emit(out, args.json)
    return 0


def cmd_audit(args) -> int:
    from rlbook.record import RecordError, load
    from rlbook.record.display import as_table

    try:
        record = load(Path(args.record))
    except RecordError as err:
        raise UsageError(str(err).splitlines()[0]) from None
    if args.json:
        _emit(record, True)
    else:
        rows = as_table(record)
        width = max(len(k) for k, _ in rows)
        for key, value in rows:
            print(f"{key:<{width}}  {value}")
    return 0


def cmd_build(args) -> int:
    from rlbook.publish.build import build_book

    return build_book(None, backend=args.backend, only=args.only, jobs=args.jobs, prefetch=True)


def cmd_bench(args) -> int:
    from rlbook.bench import main as bench_main

    return bench_main(args)


def _emit(out: dict, as_json: bool) -> None:
    if as_json:
        print(json.dumps(out, default=str))
    else:
        for key, value in out.items():
            print(f"{key}: {value}")


COMMANDS = {"run": cmd_run, "sample": cmd_sample, "verify": cmd_verify, "eval": cmd_eval, "audit": cmd_audit,
            "build": cmd_build, "bench": cmd_bench}


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``rlbook`` command."""
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except UsageError as err:
        print(f"rlbook {args.command}: error: {err}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(f"rlbook {args.command}: interrupted; the run record is marked interrupted and the run resumes "
              "from its last checkpoint next time", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
