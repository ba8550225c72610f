"""Training the book's runs: ``load(name, seed)`` serves a run from the cache or trains it now.

A base run pretrains once for every seed (the pretrained policy is cached on
its own) and then fine-tunes with the seed; an RL run trains from its parent's
last checkpoint, keeping a resume point at every checkpoint so that Ctrl-C,
SIGTERM or a crash loses at most one checkpoint interval.
"""

from __future__ import annotations

import io
import shutil
import signal
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import torch

from rlbook import record as rec
from rlbook.core.loop import log_checkpoint, train_rl
from rlbook.core.policy import Checkpoint, Policy
from rlbook.core.reward_model import JudgeVerifier, RewardModel, judge_report, train_judge
from rlbook.core.rl import RLConfig, RLState, new_log
from rlbook.core.train import pretrain, sft
from rlbook.core.world import BUDGET

from .cache import (
    CacheError,
    check_writable,
    entry_path,
    judge_path,
    load_log,
    locked,
    pretrained_path,
    problem,
    read_entry,
    read_run,
    read_whole,
    save_log,
    save_tensors,
    write_entry,
    write_file,
    write_run,
)
from .catalogue import DEFAULT_THREADS, JUDGE, JUDGE_PARENT, PRETRAIN_SEED, WORKED, RunSpec, spec
from .records import base_record, rl_record
from .run import Run


def load(name: str, seed: int = 0, threads: int | None = None, rebuild: bool = False) -> Run:
    """The named run for ``seed``: from the cache, or trained now and cached.

    A cached run is read without a lock (:func:`rlbook.runs.cache.read_whole`), so many processes load it at
    once; a missing one is trained under the entry's lock, so two processes never train the same run.
    ``threads`` (default :data:`DEFAULT_THREADS`, 1) is set for torch while training, and the caller's
    thread count is restored afterwards: the same seed and thread count give
    bit-identical runs on the same machine. ``rebuild`` trains this run again
    even when it is cached; its parent, and a base run's shared pretraining,
    still come from the cache.
    """
    threads = threads or DEFAULT_THREADS
    entry = entry_path(name, seed, threads)
    started = time.perf_counter()
    mine = lambda folder: _own(read_run(folder), name, seed, threads)
    found = None if rebuild else read_whole(entry, mine)
    if found is not None:
        record, log = found
        return Run(name, seed, threads, record, log, entry, True, time.perf_counter() - started)
    with locked(entry.with_name(entry.name + ".lock")):
        found = None if rebuild else read_entry(entry, mine)
        if found is None:
            check_writable(entry.parent, f"run {name!r} (seed {seed}, {threads} thread(s))")
            before = torch.get_num_threads()
            torch.set_num_threads(threads)
            try:
                record, log = _train(spec(name), seed, threads, entry)
            finally:
                torch.set_num_threads(before)
            partial = entry.with_name(entry.name + ".partial")
            try:
                write_entry(entry, write_run(record, log))
            except CacheError as err:
                if (partial / "state.pt").exists():
                    raise CacheError(
                        err.errno,
                        f"{err}; the finished run is kept in {partial.name}, and the next "
                        "call saves it without training it again",
                    ) from err
                raise
            shutil.rmtree(partial, ignore_errors=True)  # only now: the entry is safely written
            return Run(name, seed, threads, record, log, entry, False, time.perf_counter() - started)
    record, log = found
    return Run(name, seed, threads, record, log, entry, True, time.perf_counter() - started)


def _own(found: tuple[dict, dict], name: str, seed: int, threads: int) -> tuple[dict, dict]:
    """``found`` when its record is run ``name`` of ``seed`` and ``threads``; ValueError (a damaged entry) when an
    entry was copied under another run's, seed's or thread count's folder."""
    record = found[0]
    held = (record.get("run_name"), record.get("seed"), record.get("threads"))
    if held != (name, seed, threads):
        raise ValueError(f"its record is run {held[0]!r} of seed {held[1]} on {held[2]} thread(s), not this one")
    return found


@dataclass
class Judge:
    """Chapter 4's learned judge of one seed: the reward model, its held-out report and its training time."""

    model: RewardModel
    report: dict
    seconds: float
    cached: bool

    @property
    def verifier(self) -> JudgeVerifier:
        return JudgeVerifier(self.model)


def load_judge(seed: int = 0, threads: int | None = None) -> Judge:
    """The learned judge of ``seed`` (:data:`JUDGE`, from :data:`JUDGE_PARENT`'s policy): cached, or trained now."""
    threads = threads or DEFAULT_THREADS
    parent = load(JUDGE_PARENT, seed, threads)
    entry = judge_path(seed, threads)
    found = read_whole(entry, _read_judge)
    if found is not None:
        return _cached_judge(found, parent)
    with locked(entry.with_name(entry.name + ".lock")):
        found = read_entry(entry, _read_judge)
        if found is not None:
            return _cached_judge(found, parent)
        check_writable(entry.parent, f"the judge of seed {seed}")
        before = torch.get_num_threads()
        torch.set_num_threads(threads)
        try:
            started = time.perf_counter()
            model = train_judge(parent.policy(), JUDGE, seed)
            seconds = time.perf_counter() - started
            report = judge_report(model, parent.policy(), seed, JUDGE)
        finally:
            torch.set_num_threads(before)
        saved = {
            "state": {k: v.detach().clone() for k, v in model.state_dict().items()},
            "report": report,
            "seconds": seconds,
        }
        write_entry(entry, lambda folder: save_tensors(saved, folder / "judge.pt"))
        return Judge(model, report, seconds, False)


def _read_judge(entry: Path) -> dict:
    return torch.load(entry / "judge.pt", weights_only=True)


def _cached_judge(found: dict, parent: Run) -> Judge:
    """The judge :func:`load_judge` saved (``found``), on ``parent``'s policy."""
    model = RewardModel(parent.policy())
    model.load_state_dict(found["state"])
    return Judge(model.eval(), found["report"], float(found["seconds"]), True)


def _train(s: RunSpec, seed: int, threads: int, entry: Path) -> tuple[dict, dict]:
    parent = load(s.parent, seed, threads) if s.parent else None
    torch.set_num_threads(threads)
    if s.rl is None:
        return _train_base(s, parent, seed, threads)
    if parent is None:
        raise ValueError(f"RL run {s.name!r} names no parent to start from")
    return _train_rl(s, parent, seed, threads, entry)


def _pretrained(s: RunSpec, parent: Run | None, threads: int) -> tuple[Policy, float, bool]:
    """The pretrained policy of base run ``s``: from the cache, or trained now (once for every seed) and cached.

    Returns the policy, the seconds its pretraining took when it was trained,
    and whether it was trained in this call. A base run with a parent
    continues the parent's pretrained checkpoint, itself shared by every seed.
    """
    entry = pretrained_path(s.name, threads)
    with locked(entry.with_name(entry.name + ".lock")):
        found = read_entry(entry, _read_pretrained)
        if found is not None:
            return found["checkpoint"].load(), found["seconds"], False
        check_writable(entry.parent, f"the pretraining of {s.name!r}")
        started = time.perf_counter()
        start = parent.policy(0) if parent else None
        policy = pretrain(s.base_configs()[0], PRETRAIN_SEED, desc=f"{s.name}: pretrain", start=start)
        seconds = time.perf_counter() - started
        saved = {"checkpoint": Checkpoint.of(policy, f"{s.name}@pretrained").to_data(), "seconds": seconds}
        write_entry(entry, lambda folder: save_tensors(saved, folder / "pretrained.pt"))
        return policy, seconds, True


def _read_pretrained(entry: Path) -> dict:
    """The pretrained policy and its training time, as :func:`_pretrained` wrote them (no pickle)."""
    raw = torch.load(entry / "pretrained.pt", weights_only=True)
    if not isinstance(raw, dict) or set(raw) != {"checkpoint", "seconds"}:
        raise ValueError("pretrained.pt holds a checkpoint and its seconds")
    return {"checkpoint": Checkpoint.from_data(raw["checkpoint"]), "seconds": float(raw["seconds"])}


def _train_base(s: RunSpec, parent: Run | None, seed: int, threads: int) -> tuple[dict, dict]:
    """The shared pretrained policy (:func:`_pretrained`), then SFT with this run's seed.

    Checkpoints 0 (pretrained) and 1 (after SFT), each evaluated with this run's seed.
    """
    world = s.base_configs()[0].world
    budget, eval_n = {"single": (BUDGET, 32), "multi": (8, 16), "worked": (WORKED.budget, WORKED.eval_n)}[world]
    probe = RLConfig(world=world, budget=budget, eval_n=eval_n)
    policy, pretrain_seconds, trained = _pretrained(s, parent, threads)
    log = dict(
        new_log(),
        status="completed",
        timing={"pretrain_seconds": pretrain_seconds, "pretrained_now": trained, "pretrain_seed": PRETRAIN_SEED},
    )
    log_checkpoint(policy, probe, seed, f"{s.name}@pretrained", 0, log, eval_step=0)
    started = time.perf_counter()
    pretrain_cfg, sft_cfg = s.base_configs()
    sft(policy, sft_cfg, pretrain_cfg, seed, desc=f"{s.name}: sft")
    log["timing"]["sft_seconds"] = time.perf_counter() - started
    log_checkpoint(policy, probe, seed, f"{s.name}@sft", 1, log, eval_step=0)
    log["wall_seconds"] = (pretrain_seconds if trained else 0.0) + log["timing"]["sft_seconds"]
    return base_record(s, parent, seed, threads, log, probe), log


def _train_rl(s: RunSpec, parent: Run, seed: int, threads: int, entry: Path) -> tuple[dict, dict]:
    """RL from the parent's last checkpoint; resumable after Ctrl-C or SIGTERM."""
    partial = entry.with_name(entry.name + ".partial")
    state_file = partial / "state.pt"
    state = None
    if state_file.exists():
        try:
            state = _resume_point(partial)
        except Exception as err:  # noqa: BLE001 - a damaged resume point means: start again
            warnings.warn(f"resume state of {entry.name} is damaged ({err}); starting the run again", stacklevel=3)
    policy = parent.policy()
    previous = signal.getsignal(signal.SIGTERM)
    if previous in (signal.SIG_DFL, None):
        signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        cfg = s.rl_config()
        verifier = load_judge(seed, threads).verifier if cfg.verifier == "judge" else None
        torch.set_num_threads(threads)
        log = train_rl(policy, cfg, seed, s.name, state=state, on_checkpoint=_keeper(partial, state), verifier=verifier)
    except KeyboardInterrupt as err:
        last = RLState.load(state_file).step if state_file.exists() else None
        _save_interrupted(s, parent, seed, threads, partial, last)
        raise RunInterrupted(partial / "record.json") from err
    finally:
        if previous in (signal.SIG_DFL, None):
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
    return rl_record(s, parent, seed, threads, log), log


def _keeper(partial: Path, resumed: RLState | None) -> Callable[[RLState], None]:
    """The checkpoint callback that keeps a run's resume point in ``partial``.

    Each call writes the log entries added since the previous call to
    ``log-<step>.pt`` and everything else (weights, optimiser, random
    states, the log's other fields and its list lengths) to ``state.pt``,
    replaced last, so that a write cut short (a full disk) leaves the
    previous resume point whole. The resume point is removed only once the
    run's cache entry is written (:func:`load`). Writing the whole growing log at every checkpoint cost
    ``main`` about 0.17 s of its 2.4 s.
    """
    written = {k: len(v) for k, v in resumed.log.items() if isinstance(v, list)} if resumed else {}

    def keep(st: RLState) -> None:
        lists = {k: v for k, v in st.log.items() if isinstance(v, list)}
        new = {k: v[written.get(k, 0) :] for k, v in lists.items()}
        head = {k: v for k, v in st.log.items() if k not in lists}
        state = io.BytesIO()
        try:
            partial.mkdir(parents=True, exist_ok=True)
            save_log(new, partial / f"log-{st.step:06d}.pt")
            replace(st, log=dict(head, list_lengths={k: len(v) for k, v in lists.items()})).save(state)
            write_file(partial / "state.pt", state.getvalue())
        except OSError as err:
            raise CacheError(
                err.errno,
                f"{problem(err)}: cannot keep the resume point of step {st.step} in "
                f"{partial}; the previous one is kept",
            ) from err
        written.update((k, len(v)) for k, v in lists.items())

    return keep


def _resume_point(partial: Path) -> RLState:
    """The resume point that :func:`_keeper` left in ``partial``, its log put back together from the pieces."""
    state = RLState.load(partial / "state.pt")
    lengths = state.log.pop("list_lengths")
    log: dict[str, list] = {k: [] for k in lengths}
    for piece in sorted(partial.glob("log-*.pt")):
        if int(piece.stem.removeprefix("log-")) <= state.step:  # later pieces belong to a save cut short
            for k, entries in load_log(piece, lists=()).items():
                log[k].extend(entries)
    found = {k: len(v) for k, v in log.items()}
    if found != lengths:
        raise ValueError(f"the log pieces hold {found} entries where the state expects {lengths}")
    state.log.update(log)
    return state


class RunInterrupted(KeyboardInterrupt):
    """An interrupt that stopped an RL run after its record was marked interrupted (``record``, in the
    entry's ``.partial`` folder); the command line says so only then."""

    def __init__(self, record: Path) -> None:
        super().__init__(f"run interrupted; its record, marked interrupted, is {record}")
        self.record = record

    def __reduce__(self):  # a pool's worker sends it back to the process that asked for the run
        return (RunInterrupted, (self.record,))


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def _save_interrupted(s: RunSpec, parent: Run, seed: int, threads: int, partial: Path, last: int | None) -> None:
    """Leave a run record marked interrupted, naming the last resumable checkpoint."""
    partial.mkdir(parents=True, exist_ok=True)
    log = _resume_point(partial).log if last is not None else new_log()
    log = dict(log, status="interrupted")
    record = rl_record(s, parent, seed, threads, log)
    record["interrupted"] = {
        "step": last or 0,
        "last_checkpoint": str(partial / "state.pt") if last is not None else None,
    }
    rec.save(record, partial / "record.json")
