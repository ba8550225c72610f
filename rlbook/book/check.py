"""``rlbook claims``: every chapter's claims judged on any seeds and numerical draws; the audit of ``ROBUSTNESS.md``.

Without ``--seeds`` it judges the book's own facts (seeds 0 to 2, this
machine's draw) and prints a line per claim. With ``--seeds 0-9`` it is the
audit: it trains the runs every chapter's facts read on those seeds, in a
cache of its own beside the book's (:func:`audit_cache`), computes the facts
on all of them at once and prints, for every claim, on how many seeds it
held. ``--draws pinned,native`` repeats that in a fresh process per draw
(:mod:`rlbook.core.numerics`) and ``--write ROBUSTNESS.md`` keeps the table.
A law about training outcomes must hold on every audited seed of every draw
(:mod:`rlbook.book.claims`).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from rlbook import book
from rlbook.analysis.tables import markdown_table
from rlbook.book import claims as claims_lib
from rlbook.book._available import available_topics


@dataclass(frozen=True)
class Tally:
    """One claim on one draw: the seeds a per-seed claim held on, or the seed triples a whole claim held on.

    A whole claim (a mean, a range over seeds) is judged as the book judges
    it, on three seeds at once: on each disjoint triple of the audited seeds
    (:func:`triples`), ``groups_held`` saying where it held.
    """

    topic: str
    name: str
    kind: str
    seeds: list[int]
    held_on: list[int] | None
    groups_held: list[bool] | None = None
    error: str | None = None

    @property
    def rate(self) -> str:
        """ "10/10" seeds for a per-seed claim, "3/3 triples" for a whole claim."""
        if self.error is not None:
            return "facts failed"
        if self.held_on is None:
            held = self.groups_held or []
            return f"{sum(held)}/{len(held)} triples"
        return f"{len(self.held_on)}/{len(self.seeds)}"

    @property
    def everywhere(self) -> bool:
        """Whether the claim held on every seed (or every triple) of this draw."""
        if self.error is not None:
            return False
        if self.held_on is None:
            held = self.groups_held or []
            return bool(held) and all(held)
        return len(self.held_on) == len(self.seeds)


def triples(seeds: Sequence[int]) -> list[tuple[int, ...]]:
    """The disjoint groups of three of ``seeds``, in order ((0, 1, 2), (3, 4, 5), (6, 7, 8) of 0-9)."""
    return [tuple(seeds[i : i + 3]) for i in range(0, len(seeds) - 2, 3)]


def check_all(topics: list[str] | None = None, out: Callable[[str], None] = print) -> int:
    """Judge the claims of ``topics`` on the book's facts; print a line per claim; return the failed laws."""
    topics = available_topics(topics)
    failed = 0
    for topic in topics:
        facts = book.load(topic, check=False)
        verdicts = claims_lib.judge(topic, book.chapter(topic).CLAIMS, facts)
        for name, v in verdicts.items():
            failed += v.kind == "law" and v.failure is not None
            status = "ok  " if v.failure is None else ("FAIL" if v.kind == "law" else "not ")
            where = "" if v.held_on is None else f" ({claims_lib.held_phrase(v.held_on, v.seeds)})"
            out(f"{status} {topic}: {v.kind} {name}{where}" + (f": {v.failure}" if v.failure else ""))
    laws = sum(c.kind == "law" for t in topics for c in book.chapter(t).CLAIMS)
    out(f"{laws - failed} of {laws} laws hold on seeds {', '.join(map(str, book.SEEDS))}")
    return failed


def audit_cache() -> Path:
    """The audit's run cache: the book's cache folder with ``-audit`` added, so the book's own stays small."""
    from rlbook.runs import cache_root

    root = cache_root()
    return root.with_name(root.name + "-audit")


@contextlib.contextmanager
def in_audit_cache() -> Iterator[Path]:
    """For the block, the audit's cache (:func:`audit_cache`) is the run cache of this process and of every
    process it starts (``RLBOOK_CACHE``); the setting it replaced comes back after, so a caller in the same
    Python (a test) goes on with its own cache."""
    folder = audit_cache()
    before = os.environ.get("RLBOOK_CACHE")
    os.environ["RLBOOK_CACHE"] = str(folder)
    try:
        yield folder
    finally:
        if before is None:
            os.environ.pop("RLBOOK_CACHE", None)
        else:
            os.environ["RLBOOK_CACHE"] = before


def audit(seeds: tuple[int, ...], topics: list[str] | None = None, out: Callable[[str], None] = print) -> list[Tally]:
    """Train what ``seeds`` need in :func:`audit_cache`, compute every chapter's facts, judge every claim.

    A per-seed claim is judged on the facts of all the seeds; a whole claim on
    the facts of each triple of them, as the book's three seeds would be.
    """
    with in_audit_cache():
        return _audit(seeds, available_topics(topics), out)


def _audit(seeds: tuple[int, ...], topics: list[str], out: Callable[[str], None]) -> list[Tally]:
    from rlbook.book.prefetch import prefetch_book

    for group in (seeds, *triples(seeds)):
        prefetch_book(topics, out=out, seeds=group, keep_going=True)
    tallies = []
    for topic in topics:
        claims = book.chapter(topic).CLAIMS
        try:
            facts = book.load(topic, seeds, check=False)
        except Exception as err:  # noqa: BLE001 - facts that cannot be computed on these seeds are a finding
            error = f"{type(err).__name__}: {err}"
            tallies += [Tally(topic, c.name, c.kind, list(seeds), None, None, error) for c in claims]
            continue
        by_triple = [_facts_or_none(topic, group) for group in triples(seeds)]
        for claim in claims:
            per_seed = claim.by_seed(facts)
            if per_seed is not None:
                held_on = [s for s, ok in per_seed.items() if ok]
                tallies.append(Tally(topic, claim.name, claim.kind, list(seeds), held_on))
            else:  # a triple whose facts cannot be computed is one where the claim did not hold
                held = [f is not None and claim.failure(f) is None for f in by_triple]
                tallies.append(Tally(topic, claim.name, claim.kind, list(seeds), None, held))
    return tallies


def _facts_or_none(topic: str, seeds: tuple[int, ...]):
    try:
        return book.load(topic, seeds, check=False)
    except Exception:  # noqa: BLE001 - reported by the prefetch's "facts failed" line
        return None


def draw_environ(draw: str, environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """The environment of a process that is to compute in ``draw`` (``pinned`` or ``native``).

    This process's ``import rlbook`` pinned the kernels in its own
    environment (:func:`rlbook.core.numerics.pin`), and a child inherits
    them: a native child would then run the pinned kernels under the native
    draw's name. For ``native`` the pins are removed, so the child's torch,
    MKL and oneDNN choose the machine's own kernels.
    """
    from rlbook.core import numerics

    env = dict(environ, **{numerics.SWITCH: draw})
    if numerics.mode(env) == "native":
        for key in numerics.PINNED:
            env.pop(key, None)
    return env


def per_draw(
    module: str, seeds: tuple[int, ...], draws: Sequence[str], args: Sequence[str], out: Callable[[str], None] = print
) -> dict[str, list[dict]]:
    """Run ``python -m module --seeds ... *args`` once per numerical draw, in a fresh Python each (a draw is chosen
    before torch loads), and read the JSON list each prints on its last line."""
    results = {}
    for draw in draws:
        command = [sys.executable, "-m", module, "--seeds", ",".join(map(str, seeds)), *args]
        env = draw_environ(draw)
        out(f"{module} on the {draw} draw, seeds {seeds[0]}-{seeds[-1]}:")
        done = subprocess.run(command, env=env, stdout=subprocess.PIPE, text=True, check=False)
        lines = done.stdout.strip().splitlines()
        if done.returncode != 0 or not lines:
            raise RuntimeError(f"{module} on the {draw} draw failed (exit {done.returncode})")
        results[draw] = json.loads(lines[-1])
    return results


def audit_draws(
    seeds: tuple[int, ...], draws: Sequence[str], topics: list[str] | None, out: Callable[[str], None] = print
) -> dict[str, list[Tally]]:
    """:func:`audit` once per numerical draw (:func:`per_draw`)."""
    rows = per_draw("rlbook.book.check", seeds, draws, topics or [], out)
    return {draw: [Tally(**row) for row in found] for draw, found in rows.items()}


def verdict_of(kind: str, everywhere: bool) -> str:
    """What the audit says of one claim: a law must hold on every draw to stay one."""
    if kind == "law":
        return "law, holds everywhere" if everywhere else "LAW THAT FAILS: restate it or make it a finding"
    return "finding (holds everywhere: could be a law)" if everywhere else "finding"


def verdict(per_draw: Sequence[Tally]) -> str:
    """:func:`verdict_of` one claim's tallies, one per draw."""
    return verdict_of(per_draw[0].kind, all(t.everywhere for t in per_draw))


def report(results: dict[str, list[Tally]], command: str, date: str, machine: str) -> str:
    """The Markdown of ``ROBUSTNESS.md``'s claims: :func:`report_data` of :func:`audit_data`."""
    return report_data(audit_data(results, command, date, machine))


def machine_words() -> str:
    """This machine as the audit records it: its CPU's name, architecture and cores, and the widest vector
    extensions it has, which decide the kernels of its native draw (two CPUs that torch calls alike may still
    draw apart)."""
    import platform

    info: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            info.setdefault(key.strip(), value.strip())
    flags = set(info.get("flags", "").split())
    named = (("avx2", "AVX2"), ("avx512f", "AVX-512"), ("avx512_fp16", "AVX512-FP16"), ("amx_tile", "AMX"))
    extensions = [name for flag, name in named if flag in flags]
    cpu = info.get("model name") or platform.processor() or "a CPU"
    return f"{cpu}, {platform.machine()}, {os.cpu_count()} cores" + (f": {', '.join(extensions)}" if extensions else "")


def sources_words(data: dict) -> str:
    """Which command audited which chapters, when and on what machine, in one sentence's words (commands as code)."""
    sources = data.get("sources") or [{"command": data["command"], "date": data["date"], "chapters": []}]

    def said(s: dict) -> str:
        return f"`{s['command']}`, run on {s['date']}" + (f" ({s['machine']})" if s.get("machine") else "")

    if len(sources) == 1:
        return said(sources[0])
    return "; ".join(f"{said(s)}, for {', '.join(s['chapters'])}" for s in sources)


def report_data(data: dict) -> str:
    """The Markdown of ``ROBUSTNESS.md``'s claims from the audit's data (:func:`audit_data`, :func:`merge`): one row
    per claim, its kind, its rate on every draw and the verdict."""
    rows, draws, seeds = data["claims"], data["draws"], data["seeds"]
    laws = sum(r["kind"] == "law" for r in rows)
    failing = [r["name"] for r in rows if r["kind"] == "law" and not r["everywhere"]]
    lines = [
        "# How sure is each lesson?",
        "",
        (
            f"{sources_words(data)}, on seeds {seeds[0]} to {seeds[-1]} and the draws {', '.join(draws)} "
            "(`RLBOOK_NUMERICS`)."
        ),
        "",
        f"{len(rows)} claims: {laws} laws and {len(rows) - laws} findings. "
        f"{len(failing)} law(s) failed somewhere" + (f": {', '.join(failing)}." if failing else "."),
        "",
        (
            "A per-seed claim shows on how many of the audited seeds it held. A claim about several seeds at "
            "once (a mean, a range over seeds) is judged as the book judges it, on three seeds: it shows on how "
            "many of the disjoint seed triples (0-2, 3-5, 6-8) it held."
        ),
        "",
        markdown_table(
            ["chapter", "claim", "kind", *draws, "verdict"],
            (
                [
                    r["topic"],
                    r["name"],
                    r["kind"],
                    *(r["rates"][d] for d in draws),
                    verdict_of(r["kind"], r["everywhere"]),
                ]
                for r in rows
            ),
            code=[1],
        ),
    ]
    return "\n".join(lines) + "\n"


def audit_data(results: dict[str, list[Tally]], command: str, date: str, machine: str) -> dict:
    """The audit as plain data, for :data:`AUDIT_DATA` (read by the page "How sure is each lesson?"); ``machine``
    is :func:`machine_words` of the machine that ran it."""
    rows = list(zip(*results.values(), strict=True))
    return {
        "command": command,
        "date": date,
        "draws": list(results),
        "seeds": rows[0][0].seeds if rows else [],
        "sources": [
            {
                "command": command,
                "date": date,
                "machine": machine,
                "chapters": list(dict.fromkeys(r[0].topic for r in rows)),
            }
        ],
        "claims": [
            {
                "topic": row[0].topic,
                "name": row[0].name,
                "kind": row[0].kind,
                "rates": {draw: t.rate for draw, t in zip(results, row, strict=True)},
                "everywhere": all(t.everywhere for t in row),
            }
            for row in rows
        ],
    }


def merge(old: dict, new: dict) -> dict:
    """The audit ``old`` with the chapters ``new`` audited replaced by ``new``'s rows: an audit of some chapters
    written into the book's without losing the others'.

    Both must cover the same seeds and draws (ValueError otherwise, naming
    them), so that every row of the result was judged alike. Claims and
    exercises keep the order of the chapters' names, and the result's
    ``sources`` say which command audited which chapters.
    """
    if (old["seeds"], old["draws"]) != (new["seeds"], new["draws"]):
        raise ValueError(
            f"the book's audit covers seeds {old['seeds']} and draws {old['draws']}, this one seeds {new['seeds']} "
            f"and draws {new['draws']}: audit the same seeds and draws, or every chapter"
        )
    fresh = set(new["sources"][-1]["chapters"])
    claims = [r for r in old["claims"] if r["topic"] not in fresh] + new["claims"]
    exercises = [r for r in old.get("exercises", []) if r["chapter"] not in fresh] + new.get("exercises", [])
    earlier = old.get("sources") or [
        {
            "command": old["command"],
            "date": old["date"],
            "chapters": list(dict.fromkeys(r["topic"] for r in old["claims"])),
        }
    ]
    kept = [{**s, "chapters": [c for c in s["chapters"] if c not in fresh]} for s in earlier]
    return {
        **new,
        "sources": [s for s in kept if s["chapters"]] + new["sources"],
        "claims": sorted(claims, key=lambda r: r["topic"]),
        "exercises": sorted(exercises, key=lambda r: r["chapter"]),
    }


AUDIT_DATA = Path(__file__).with_name("robustness.json")
"""The book's audit as data, shipped with the package (the page "How sure is each lesson?" reads it); its table
is ``ROBUSTNESS.md``. ``rlbook claims --seeds ... --write ROBUSTNESS.md`` writes both."""


def read_audit(path: Path = AUDIT_DATA) -> dict:
    """The committed audit (:data:`AUDIT_DATA`): ValueError naming the file when it is missing or damaged."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise ValueError(f"the audit {path} cannot be read ({err}); run rlbook claims --seeds 0-9 --write") from None


def lessons_markdown(audit: dict, topic: str) -> str:
    """A Markdown table of chapter ``topic``'s laws and how often each held in ``audit`` (the reader's page).

    Each law is named by its statement, taken from the live claims of
    :mod:`rlbook.book` (the audit keeps only names and rates); the table is
    written by :func:`~rlbook.analysis.tables.markdown_table`, which escapes a
    ``|`` in any cell, so no statement can split its row into columns.
    """
    rates = {row["name"]: row["rates"] for row in audit["claims"] if row["topic"] == topic and row["kind"] == "law"}
    # Where the chapter's facts need a missing extra (the appendix's), the audit's names stand for what they check.
    says = {c.name: c.says for c in book.chapter(topic).CLAIMS} if topic in available_topics() else {}
    header = ["law", *(f"{draw} draw" for draw in audit["draws"])]
    rows = (
        [says.get(name, name), *(found.get(draw, "not audited") for draw in audit["draws"])]
        for name, found in rates.items()
    )
    return markdown_table(header, rows)


def parse_seeds(text: str) -> tuple[int, ...]:
    """``"0-9"`` or ``"0,1,5"`` (or both, ``"0-4,7"``) as sorted seeds; ValueError for anything else."""
    seeds: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        low, sep, high = part.partition("-")
        if not low.isdigit() or (sep and not high.isdigit()):
            raise ValueError(f"seeds are written 0-9 or 0,1,5, not {text!r}")
        first, last = int(low), int(high) if sep else int(low)
        if last < first or last - first > 999:
            raise ValueError(f"seed range {part!r} is empty or too long")
        seeds.update(range(first, last + 1))
    return tuple(sorted(seeds))


def main(argv: list[str] | None = None) -> int:
    """``python -m rlbook.book.check --seeds 0-9 [chapters]``: one draw's audit as JSON on the last line."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m rlbook.book.check")
    parser.add_argument("--seeds", required=True, type=parse_seeds)
    parser.add_argument("chapters", nargs="*")
    args = parser.parse_args(argv)
    tallies = audit(args.seeds, args.chapters or None, out=lambda line: print(line, file=sys.stderr, flush=True))
    print(json.dumps([asdict(t) for t in tallies]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
