"""The book's named runs and their cache.

Every figure in the book comes from one of the runs named here.
``load(name, seed=...)`` returns a :class:`Run`, training it first when the
cache has no valid entry. The cache key covers the run's configuration, its
parent run, the seed, the thread count, and the source of every module that
can change a result, so editing ``rlbook`` never serves stale results.
"""
from __future__ import annotations

import ast
import contextlib
import fcntl
import functools
import hashlib
import json
import os
import shutil
import signal
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import torch

from . import record as rec
from .policy import Checkpoint, Policy
from .rl import Guard, RLConfig, RLState, checkpoint_eval, train_rl
from .train import PretrainConfig, SFTConfig, pretrain, sft

# Each run trains on one thread; the book gets its parallelism by training runs side by side
# (rlbook.prefetch), one per core. On 2 cores, two one-thread runs at a time trained the 17
# seed-0 runs in 69 s against 87 s for two two-thread runs at a time (interleaved, 2 rounds):
# two-thread runs sharing two cores spend their time waking each other's threads for tensors
# too small to split. A run alone is slower on one thread (base 16 s against 12 s).
DEFAULT_THREADS = 1
# Every seed of a base run starts SFT from one pretrained policy, trained with this seed and cached
# once: as in RL for language models, where every RL seed starts from the same pretrained model, a
# run's seeds differ in SFT's replayed windows and in everything RL samples, not in pretraining.
# Pretraining was a quarter of the book's training time when each seed had its own.
PRETRAIN_SEED = 0
RESULT_MODULES = ("world", "policy", "adamw", "sampling", "rewards", "advantages", "losses", "train", "rl", "evaluate",
                  "stats", "runs", "record")


@dataclass(frozen=True)
class RunSpec:
    """A named run: a base (pretraining + SFT) or an RL run from a parent run.

    An RL run starts from its parent's last checkpoint. A base run with a
    parent continues the parent's *pretrained* checkpoint (step 0, before
    SFT) rather than a fresh policy. A base run's pretraining is the same for
    every seed (see :data:`PRETRAIN_SEED`); its seeds part at SFT.
    """

    name: str
    description: str
    parent: str | None = None
    pretrain: PretrainConfig | None = None
    sft: SFTConfig | None = None
    rl: RLConfig | None = None


MAIN = RLConfig()
MULTI = RLConfig(world="multi", steps=60, group_size=8, prompts_per_step=64, budget=8, eval_n=16)
RUNS: dict[str, RunSpec] = {spec.name: spec for spec in [
    RunSpec("base", "pretraining on plain equations, then SFT on 30 chat examples",
            pretrain=PretrainConfig(), sft=SFTConfig()),
    RunSpec("main", "GRPO-style RL from base: 60 prompts x 16 samples, PPO clip, exact verifier", "base", rl=MAIN),
    RunSpec("exploit", "RL against the fail-open verifier (chapter 4's reward hack)", "base",
            rl=replace(MAIN, verifier="fail-open", lr=1e-3, warmup=0, steps=40, checkpoint_every=5)),
    RunSpec("pg", "plain policy gradient with a group-mean baseline", "base", rl=replace(MAIN, loss="pg", steps=60)),
    RunSpec("ppo", "PPO clip, 4 updates per batch", "base", rl=replace(MAIN, updates_per_batch=4, steps=60)),
    RunSpec("cispo", "CISPO, 4 updates per batch", "base", rl=replace(MAIN, loss="cispo", updates_per_batch=4, steps=60)),
    RunSpec("ppo-kl", "PPO clip, 4 updates per batch, KL penalty 0.1 to base", "base",
            rl=replace(MAIN, updates_per_batch=4, kl_beta=0.1, steps=60)),
    RunSpec("seq-mean", "PPO clip with per-sequence mean aggregation", "base",
            rl=replace(MAIN, aggregation="seq_mean", steps=60)),
    RunSpec("group-std", "PPO clip with std-normalised group advantages", "base",
            rl=replace(MAIN, advantage="group_std", steps=60)),
    RunSpec("reward-x10", "PPO clip with rewards scaled by 10", "base", rl=replace(MAIN, reward_scale=10.0, steps=60)),
    RunSpec("stale", "PPO clip learning from rollouts sampled 4 steps earlier", "base",
            rl=replace(MAIN, stale=4, steps=60)),
    RunSpec("accepted-only", "selection rule: keep only accepted rollouts (advantage 1)", "base",
            rl=replace(MAIN, selection="accepted", steps=60)),
    RunSpec("faults", "main with injected faults: a verifier outage, a malformed burst, a non-finite loss", "base",
            rl=replace(MAIN, steps=40, faults=((8, "verifier_outage"), (15, "malformed_burst"), (22, "nan_loss")))),
    RunSpec("abort", "injected verifier outages in a row until the abort criterion stops the run", "base",
            rl=replace(MAIN, steps=40, faults=tuple((s, "verifier_outage") for s in range(10, 40)))),
    RunSpec("process-base", "multi-step world: base's pretrained policy, pretrained further on equations and chains "
            "with a context of 24, then SFT on 60 examples", "base",
            pretrain=PretrainConfig(world="multi", steps=600, block_size=24, space_prob=0.3, parts=1),
            sft=SFTConfig(steps=200)),
    RunSpec("process-outcome", "multi-step RL, outcome reward only", "process-base", rl=MULTI),
    RunSpec("process-shaped", "multi-step RL, outcome + 0.5 x step validity", "process-base",
            rl=replace(MULTI, verifier="exact+process")),
]}


def cache_root() -> Path:
    """The cache folder: ``$RLBOOK_CACHE`` or ``.rlbook-cache`` at the project root."""
    env = os.environ.get("RLBOOK_CACHE")
    return Path(env) if env else Path(__file__).resolve().parent.parent / ".rlbook-cache"


@functools.lru_cache(maxsize=1)
def code_hash() -> str:
    """SHA-256 of the code of the modules that can change a run's result.

    Comments and docstrings are left out (the hash is taken over the syntax
    tree), so rewording documentation never retrains a run. It is computed
    once per process, when ``rlbook.runs`` is imported (its engine modules are
    imported by then):
    a process that imported older code never files its results under the key
    of newer code, and loading a run does not re-parse the package each time.
    """
    digest = hashlib.sha256()
    here = Path(__file__).resolve().parent
    for module in RESULT_MODULES:
        tree = ast.parse((here / f"{module}.py").read_text())
        for node in ast.walk(tree):
            body = getattr(node, "body", None)
            if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                    and isinstance(getattr(body[0], "value", None), ast.Constant) and isinstance(body[0].value.value, str):
                node.body = body[1:] or [ast.Pass()]
        digest.update(ast.dump(tree).encode())
    return digest.hexdigest()[:16]


def spec(name: str) -> RunSpec:
    """The run named ``name``; a ValueError lists the known names otherwise."""
    if name not in RUNS:
        raise ValueError(f"unknown run {name!r}; known runs: {', '.join(RUNS)}")
    return RUNS[name]


def cache_key(name: str, seed: int, threads: int) -> str:
    """Hash of the run's configuration, its parent's key, seed, threads and code."""
    s = spec(name)
    parent = cache_key(s.parent, seed, threads) if s.parent else ""
    text = json.dumps([repr(s.pretrain), repr(s.sft), repr(s.rl), parent, seed, threads, code_hash()])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass
class Run:
    """A finished run: its record, per-step log, checkpoints and rollouts."""

    name: str
    seed: int
    threads: int
    record: dict
    log: dict
    path: Path
    cached: bool = False
    seconds: float = 0.0
    extra: dict = field(default_factory=dict)

    @property
    def metrics(self) -> list[dict]:
        return self.log["metrics"]

    @property
    def evals(self) -> list[dict]:
        return self.log["evals"]

    @property
    def rollouts(self) -> list[dict]:
        return self.log["rollouts"]

    @property
    def steps(self) -> list[int]:
        """The steps that have a checkpoint."""
        return [c["step"] for c in self.log["checkpoints"]]

    def policy(self, step: int | None = None) -> Policy:
        """The policy saved at checkpoint ``step`` (default: the last)."""
        if step is None:
            return self.log["checkpoints"][-1]["checkpoint"].load()
        for c in self.log["checkpoints"]:
            if c["step"] == step:
                return c["checkpoint"].load()
        raise ValueError(f"run {self.name!r} has no checkpoint at step {step}; it has {self.steps}")

    def metric(self, key: str) -> list[float]:
        """One metric over the run's steps."""
        return [m.get(key) for m in self.metrics]

    def eval_at(self, step: int | None = None) -> dict:
        """The independent evaluation at checkpoint ``step`` (default: the last)."""
        return self.evals[-1] if step is None else next(e for e in self.evals if e["step"] == step)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _read_entry(entry: Path, read: Callable[[Path], Any]) -> Any:
    """``read(entry)`` of a cache entry, or None when it is absent or fails its checksums."""
    manifest = entry / "manifest.json"
    if not entry.exists():
        return None
    if not manifest.exists():
        warnings.warn(f"cache entry {entry.name} is damaged (no manifest); rebuilding it", stacklevel=3)
        return None
    try:
        sums = json.loads(manifest.read_text())
        for file, digest in sums.items():
            if _digest(entry / file) != digest:
                raise ValueError(f"checksum mismatch in {file}")
        return read(entry)
    except Exception as err:  # noqa: BLE001 - any damage means: rebuild
        warnings.warn(f"cache entry {entry.name} is damaged ({err}); rebuilding it", stacklevel=3)
        return None


def _read_run(entry: Path) -> tuple[dict, dict]:
    return rec.load(entry / "record.json"), torch.load(entry / "log.pt", weights_only=False)


def _write_entry(entry: Path, write: Callable[[Path], None]) -> None:
    """Write a cache entry atomically: ``write(folder)`` fills a temporary folder, which is then renamed into place."""
    tmp = entry.with_name(entry.name + f".tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    write(tmp)
    sums = {f.name: _digest(f) for f in sorted(tmp.iterdir())}
    (tmp / "manifest.json").write_text(json.dumps(sums, indent=1))
    shutil.rmtree(entry, ignore_errors=True)
    os.replace(tmp, entry)


def _write_run(record: dict, log: dict) -> Callable[[Path], None]:
    """What :func:`_write_entry` writes for a run: its log and its record."""
    def write(folder: Path) -> None:
        torch.save(log, folder / "log.pt")
        rec.save(record, folder / "record.json")
    return write


@contextlib.contextmanager
def _locked(path: Path):
    """Hold an exclusive lock so two processes never build the same entry at once."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def entry_path(name: str, seed: int, threads: int) -> Path:
    return cache_root() / f"{name}-seed{seed}-t{threads}-{cache_key(name, seed, threads)}"


def load(name: str, seed: int = 0, threads: int | None = None, rebuild: bool = False) -> Run:
    """The named run for ``seed``: from the cache, or trained now and cached.

    ``threads`` (default :data:`DEFAULT_THREADS`, 1) is set for torch while training, and the caller's
    thread count is restored afterwards: the same seed and thread count give
    bit-identical runs on the same machine. ``rebuild`` trains this run again
    even when it is cached; its parent, and a base run's shared pretraining,
    still come from the cache.
    """
    threads = threads or DEFAULT_THREADS
    entry = entry_path(name, seed, threads)
    started = time.perf_counter()
    with _locked(entry.with_name(entry.name + ".lock")):
        found = None if rebuild else _read_entry(entry, _read_run)
        if found is None:
            before = torch.get_num_threads()
            torch.set_num_threads(threads)
            try:
                record, log = _train(spec(name), seed, threads, entry)
            finally:
                torch.set_num_threads(before)
            _write_entry(entry, _write_run(record, log))
            return Run(name, seed, threads, record, log, entry, False, time.perf_counter() - started)
    record, log = found
    return Run(name, seed, threads, record, log, entry, True, time.perf_counter() - started)


def _train(s: RunSpec, seed: int, threads: int, entry: Path) -> tuple[dict, dict]:
    parent = load(s.parent, seed, threads) if s.parent else None
    torch.set_num_threads(threads)
    if s.rl is None:
        return _train_base(s, parent, seed, threads)
    return _train_rl(s, parent, seed, threads, entry)


def pretrained_key(name: str, threads: int) -> str:
    """Hash of a base run's pretraining: its configuration, the pretraining it continues, threads and code.

    It leaves out the run's seed: every seed shares the pretraining (:data:`PRETRAIN_SEED`).
    """
    s = spec(name)
    if s.pretrain is None:
        raise ValueError(f"{name!r} is not a base run")
    parent = pretrained_key(s.parent, threads) if s.parent else ""
    text = json.dumps([repr(s.pretrain), parent, PRETRAIN_SEED, threads, code_hash()])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _pretrained(s: RunSpec, parent: Run | None, threads: int) -> tuple[Policy, float, bool]:
    """The pretrained policy of base run ``s``: from the cache, or trained now (once for every seed) and cached.

    Returns the policy, the seconds its pretraining took when it was trained,
    and whether it was trained in this call. A base run with a parent
    continues the parent's pretrained checkpoint, itself shared by every seed.
    """
    entry = cache_root() / f"{s.name}-pretrained-t{threads}-{pretrained_key(s.name, threads)}"
    with _locked(entry.with_name(entry.name + ".lock")):
        found = _read_entry(entry, lambda e: torch.load(e / "pretrained.pt", weights_only=False))
        if found is not None:
            return found["checkpoint"].load(), found["seconds"], False
        started = time.perf_counter()
        start = parent.policy(0) if parent else None
        policy = pretrain(s.pretrain, PRETRAIN_SEED, desc=f"{s.name}: pretrain", start=start)
        seconds = time.perf_counter() - started
        saved = {"checkpoint": Checkpoint.of(policy, f"{s.name}@pretrained"), "seconds": seconds}
        _write_entry(entry, lambda folder: torch.save(saved, folder / "pretrained.pt"))
        return policy, seconds, True


def _train_base(s: RunSpec, parent: Run | None, seed: int, threads: int) -> tuple[dict, dict]:
    """The shared pretrained policy (:func:`_pretrained`), then SFT with this run's seed.

    Checkpoints 0 (pretrained) and 1 (after SFT), each evaluated with this run's seed.
    """
    world = s.pretrain.world
    probe = RLConfig(world=world, budget=4 if world == "single" else 8, eval_n=32 if world == "single" else 16)
    policy, pretrain_seconds, trained = _pretrained(s, parent, threads)
    log = {"metrics": [], "evals": [], "checkpoints": [], "rollouts": [], "interventions": [], "aborted_updates": [],
           "status": "completed",
           "timing": {"pretrain_seconds": pretrain_seconds, "pretrained_now": trained, "pretrain_seed": PRETRAIN_SEED}}
    _base_checkpoint(policy, probe, seed, s.name, 0, "pretrained", log)
    started = time.perf_counter()
    sft(policy, s.sft, s.pretrain, seed, desc=f"{s.name}: sft")
    log["timing"]["sft_seconds"] = time.perf_counter() - started
    _base_checkpoint(policy, probe, seed, s.name, 1, "sft", log)
    log["wall_seconds"] = (pretrain_seconds if trained else 0.0) + log["timing"]["sft_seconds"]
    return _base_record(s, parent, seed, threads, log, probe), log


def _base_checkpoint(policy: Policy, probe: RLConfig, seed: int, name: str, step: int, label: str, log: dict) -> None:
    from .policy import weights_hash

    policy.version = f"{name}@{label}"
    log["checkpoints"].append({"step": step, "version": policy.version, "weights_hash": weights_hash(policy),
                               "checkpoint": Checkpoint.of(policy, policy.version)})
    # Evaluated with the sampling seed of an RL run's step 0, so that the base
    # policy gets the same numbers here and at the start of every RL run.
    log["evals"].append(dict(checkpoint_eval(policy, probe, seed, 0), step=step))


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
        log = train_rl(policy, s.rl, seed, s.name, state=state, on_checkpoint=_keeper(partial, state))
    except KeyboardInterrupt:
        last = RLState.load(state_file).step if state_file.exists() else None
        _save_interrupted(s, parent, seed, threads, partial, last)
        raise
    finally:
        if previous in (signal.SIG_DFL, None):
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
    shutil.rmtree(partial, ignore_errors=True)
    return _rl_record(s, parent, seed, threads, log), log


def _keeper(partial: Path, resumed: RLState | None) -> Callable[[RLState], None]:
    """The checkpoint callback that keeps a run's resume point in ``partial``.

    Each call writes the log entries added since the previous call to
    ``log-<step>.pt`` and everything else (weights, optimiser, random
    states, the log's other fields and its list lengths) to ``state.pt``,
    replaced last, so that a write cut short leaves the previous resume
    point whole. Writing the whole growing log at every checkpoint cost
    ``main`` about 0.17 s of its 2.4 s.
    """
    written = {k: len(v) for k, v in resumed.log.items() if isinstance(v, list)} if resumed else {}

    def keep(st: RLState) -> None:
        partial.mkdir(parents=True, exist_ok=True)
        lists = {k: v for k, v in st.log.items() if isinstance(v, list)}
        new = {k: v[written.get(k, 0):] for k, v in lists.items()}
        torch.save(new, partial / "log.tmp")
        os.replace(partial / "log.tmp", partial / f"log-{st.step:06d}.pt")
        written.update((k, len(v)) for k, v in lists.items())
        head = {k: v for k, v in st.log.items() if k not in lists}
        replace(st, log=dict(head, list_lengths=dict(written))).save(partial / "state.tmp")
        os.replace(partial / "state.tmp", partial / "state.pt")

    return keep


def _resume_point(partial: Path) -> RLState:
    """The resume point that :func:`_keeper` left in ``partial``, its log put back together from the pieces."""
    state = RLState.load(partial / "state.pt")
    lengths = state.log.pop("list_lengths")
    log = {k: [] for k in lengths}
    for piece in sorted(partial.glob("log-*.pt")):
        if int(piece.stem.removeprefix("log-")) <= state.step:  # later pieces belong to a save cut short
            for k, entries in torch.load(piece, weights_only=False).items():
                log[k].extend(entries)
    found = {k: len(v) for k, v in log.items()}
    if found != lengths:
        raise ValueError(f"the log pieces hold {found} entries where the state expects {lengths}")
    state.log.update(log)
    return state


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def _save_interrupted(s: RunSpec, parent: Run, seed: int, threads: int, partial: Path, last: int | None) -> None:
    """Leave a run record marked interrupted, naming the last resumable checkpoint."""
    partial.mkdir(parents=True, exist_ok=True)
    log = _resume_point(partial).log if last is not None else {
        "metrics": [], "evals": [], "checkpoints": [], "rollouts": [], "interventions": [], "aborted_updates": [],
        "wall_seconds": 0.0}
    log = dict(log, status="interrupted")
    record = _rl_record(s, parent, seed, threads, log)
    record["interrupted"] = {"step": last or 0,
                             "last_checkpoint": str(partial / "state.pt") if last is not None else None}
    rec.save(record, partial / "record.json")


def _common_record(s: RunSpec, seed: int, threads: int, log: dict, cfg: RLConfig, base: dict) -> dict:
    """The record fields shared by base and RL runs."""
    from .world import split

    world = cfg.world
    counts = {name: len(split(name, world)) for name in ("sft", "train", "heldout", "validation", "test")}
    checkpoints = [{"step": c["step"], "policy_version": c["step"], "path": f"log.pt#checkpoints[{i}]",
                    "weights_hash": c["weights_hash"]} for i, c in enumerate(log["checkpoints"])]
    evaluations = []
    for e in log["evals"]:
        evaluations.append({"step": e["step"], "split": "heldout", "n": cfg.eval_n, "temperature": 1.0,
                            "token_budget": cfg.budget, "metric": "expected_reward (exact verifier)",
                            "value": e["heldout_expected_reward"], "ci": None})
        evaluations.append({"step": e["step"], "split": "heldout", "n": 1, "temperature": 0.0,
                            "token_budget": cfg.budget, "metric": "greedy_accuracy (exact verifier)",
                            "value": e["heldout_greedy_accuracy"], "ci": None})
    return rec.new_record(
        s.name, seed=seed, threads=threads, status=log["status"], base_policy=base,
        prompt_template="U:a+b?|A:" if world == "single" else "U:a+b+c?|A:",
        prompt_split={"world": world, "train": "sft" if s.rl is None else "train", "counts": counts},
        checkpoints=checkpoints, evaluations=evaluations)


def _base_record(s: RunSpec, parent: Run | None, seed: int, threads: int, log: dict, probe: RLConfig) -> dict:
    base = {"name": "random-init", "version": "none", "weights_hash": "none"}
    if parent:
        first = parent.log["checkpoints"][0]
        base = {"name": parent.name, "version": first["version"], "weights_hash": first["weights_hash"]}
    record = _common_record(s, seed, threads, log, probe, base)
    record.update(
        sampling={"temperature": 1.0, "group_size": probe.eval_n, "prompts_per_step": 0, "token_budget": probe.budget},
        verifier={"name": "exact", "version": "1.0", "implementation": "rlbook.rewards.ExactVerifier"},
        advantage={"method": "none (supervised)", "eps": None, "ddof": None},
        update={"loss": "cross-entropy on answer tokens", "clip": None, "aggregation": "token_mean",
                "lr": s.sft.lr, "optimizer": "AdamW", "steps": s.pretrain.steps + s.sft.steps, "updates_per_batch": 1,
                "schedule": {"pretrain": repr(s.pretrain), "pretrain_seed": PRETRAIN_SEED, "sft": repr(s.sft)}},
        reference={"kl_beta": 0.0, "estimator": None, "policy": None},
        cost={"wall_seconds": round(log["wall_seconds"], 3), "generated_tokens": 0, "rollouts": 0,
              "gradient_steps": s.pretrain.steps + s.sft.steps})
    return record


def _rl_record(s: RunSpec, parent: Run, seed: int, threads: int, log: dict) -> dict:
    """The run record of an RL run, filled from its configuration and log."""
    from .rewards import STATUSES, get_verifier

    cfg = s.rl
    last = parent.log["checkpoints"][-1]
    base = {"name": parent.name, "version": last["version"], "weights_hash": last["weights_hash"]}
    record = _common_record(s, seed, threads, log, cfg, base)
    verifier = get_verifier(cfg.verifier, cfg.verifier_version)
    by_status = sum((torch.bincount(r["statuses"].long(), minlength=len(STATUSES)) for r in log["rollouts"]),
                    torch.zeros(len(STATUSES), dtype=torch.long))
    labels = {st: int(n) for st, n in zip(STATUSES, by_status) if n}
    rollouts = int(by_status.sum())
    tokens = int(sum(int(r["lengths"].sum()) for r in log["rollouts"]))
    used = int(sum(int(r["used"].sum()) for r in log["rollouts"] if not _excluded(log, r["step"])))
    steps_done = len(log["metrics"])
    updates = sum(cfg.updates_per_batch for m in log["metrics"] if not m["excluded"])
    clip = {"eps_low": cfg.eps_low, "eps_high": cfg.eps_high} if cfg.loss == "ppo" else (
        {"cap_high": cfg.cispo_cap} if cfg.loss == "cispo" else None)
    errors = sum(1 for i in log["interventions"] if i["trigger"]["metric"] == "verifier_error_rate")
    record.update(
        sampling={"temperature": cfg.temperature, "group_size": cfg.group_size,
                  "prompts_per_step": cfg.prompts_per_step or record["prompt_split"]["counts"]["train"],
                  "token_budget": cfg.budget},
        verifier={"name": verifier.name, "version": verifier.version,
                  "implementation": f"rlbook.rewards.{type(verifier).__name__}"},
        outcome_labels=labels,
        process_labels={"name": "rlbook.rewards.process_score", "version": "1.0"} if cfg.world == "multi" else None,
        advantage={"method": cfg.advantage if cfg.selection == "none" else "selection: advantage 1 on kept rollouts",
                   "eps": 1e-6 if cfg.advantage != "centered" else None, "ddof": 0 if cfg.advantage != "centered" else None},
        update={"loss": cfg.loss, "clip": clip, "aggregation": cfg.aggregation, "lr": cfg.lr, "optimizer": "AdamW",
                "steps": cfg.steps, "updates_per_batch": cfg.updates_per_batch,
                "schedule": {"lr": f"linear warm-up over {cfg.warmup} steps, then constant" if cfg.warmup else "constant",
                             "stale_rollouts_steps": cfg.stale, "reward_scale": cfg.reward_scale}},
        reference={"kl_beta": cfg.kl_beta, "estimator": "k3", "policy": base["version"]},
        cost={"wall_seconds": round(log["wall_seconds"], 3), "generated_tokens": tokens,
              "rollouts": rollouts, "gradient_steps": updates},
        rollouts_before_filtering=rollouts, rollouts_used=used,
        selection_rule="keep accepted" if cfg.selection == "accepted" else "none",
        failures={"by_status": {k: v for k, v in labels.items() if k != "accepted"}, "verifier_errors": errors},
        aborted_updates=log["aborted_updates"], interventions=log["interventions"])
    record["steps_completed"] = steps_done
    if "abort" in log:
        record["abort"] = log["abort"]
    return record


def _excluded(log: dict, step: int) -> bool:
    return any(m["step"] == step and m["excluded"] for m in log["metrics"])


code_hash()  # fix the cache key to the code this process has imported
