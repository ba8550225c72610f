"""The ``rlbook`` command: what the chapters do, from a terminal.

``rlbook run``, ``sample``, ``verify``, ``eval``, ``audit``, ``build``,
``claims``, ``fingerprint`` and ``bench``. This package holds the entry
point, :func:`main`, and how a command ends: the parser is in
:mod:`rlbook.cli.options`, what each command does in
:mod:`rlbook.cli.commands`. A bad argument exits with status 2 and one line
saying what is wrong; nothing else imports this package.
"""

from __future__ import annotations

import errno
import os
import sys

from rlbook.cli.commands import COMMANDS
from rlbook.cli.options import EXIT_USAGE, UsageError, build_parser, check_run_names

EXIT_BROKEN_PIPE = 141  # what a shell reports for a command stopped by SIGPIPE (128 + 13)


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
