"""What each subcommand of ``rlbook`` does, once its arguments are parsed: :data:`COMMANDS`, by name.

Each ``cmd_*`` function takes the parsed arguments and returns the exit
status, printing its result (one JSON object with ``--json``); an argument
found wrong only now (an unknown step, a bad record file) raises
:class:`rlbook.cli.options.UsageError`. The heavy modules are imported inside
each command, so that ``rlbook --help`` and a bad argument never load torch.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from rlbook.cli.options import UsageError

if TYPE_CHECKING:
    from rlbook.core.policy import Policy
    from rlbook.runs import Run


def cmd_run(args: argparse.Namespace) -> int:
    """``rlbook run``: load one of the book's named runs (training it if it is not cached) and print its summary."""
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


def _policy(args: argparse.Namespace) -> tuple[Run, Policy]:
    """The run and the checkpoint's policy that ``--run``, ``--seed`` and ``--step`` name (``sample``, ``eval``)."""
    from rlbook.runs import load

    run = load(args.run, seed=args.seed, threads=args.threads)
    if args.step is not None and args.step not in run.steps:
        raise UsageError(f"run {args.run!r} has no checkpoint at step {args.step}; its checkpoints are {run.steps}")
    return run, run.policy(args.step)


def cmd_sample(args: argparse.Namespace) -> int:
    """``rlbook sample``: chapter 1's workshop: a prompt sampled n times from a run's policy, each answer judged."""
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


def cmd_verify(args: argparse.Namespace) -> int:
    """``rlbook verify``: one completion judged by a verifier: its reward, status and reason."""
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


def cmd_eval(args: argparse.Namespace) -> int:
    """``rlbook eval``: a checkpoint's expected reward, with its 95% interval, and greedy accuracy on a split."""
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


def cmd_audit(args: argparse.Namespace) -> int:
    """``rlbook audit``: check a run record file against the schema and print it as a table (or as JSON)."""
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


def cmd_build(args: argparse.Namespace) -> int:
    """``rlbook build``: execute the chapters and build the website (:func:`rlbook.publish.build.build_book`)."""
    from rlbook.publish.build import build_book

    return build_book(
        None, backend=args.backend, only=args.only, jobs=args.jobs, prefetch=True, strict=args.strict, fresh=args.fresh
    )


def cmd_claims(args: argparse.Namespace) -> int:
    """``rlbook claims``: judge the chapters' laws and findings on this machine's runs, or audit them on more seeds."""
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


def _audit(args: argparse.Namespace) -> int:
    """``rlbook claims --seeds``: the audit of the claims on more seeds and draws (ROBUSTNESS.md)."""
    import datetime
    import shlex

    from rlbook.book import check
    from rlbook.core import numerics
    from rlbook.exercises import audit

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
    exercises = audit.audit_draws(seeds, draws, args.chapters or ())
    command = "rlbook claims " + " ".join(shlex.quote(a) for a in sys.argv[2:])
    data = check.audit_data(results, command, datetime.date.today().isoformat(), check.machine_words())
    data["exercises"] = audit.audit_data(exercises)
    if args.write and args.chapters and check.AUDIT_DATA.exists():
        # An audit of some chapters goes into the book's audit in place of theirs; the other chapters keep theirs.
        try:
            data = check.merge(check.read_audit(), data)
        except ValueError as err:
            raise UsageError(str(err)) from None
    text = check.report_data(data) + "\n" + audit.report_data(data["exercises"], data["draws"])
    if args.write:
        Path(args.write).write_text(text, encoding="utf-8")
        check.AUDIT_DATA.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(text)
    return 0


def cmd_fingerprint(args: argparse.Namespace) -> int:
    """``rlbook fingerprint``: one digest of every run the book reads, compared with the published one."""
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


def cmd_bench(args: argparse.Namespace) -> int:
    """``rlbook bench``: measure the speed the book promises (:mod:`rlbook.bench`), its report's file checked first."""
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
    """Print a command's result: one JSON object, or one ``key: value`` line per item."""
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
