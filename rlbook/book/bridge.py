"""The TRL appendix's facts (chapters/appendix-trl.qmd): the book's task, audit and record on TRL's GRPOTrainer.

Every number and table row of the appendix, the choices of its
outcome-dependent sentences, and the data its figures draw, computed on
every seed from the runs ``base`` and ``main``, the TRL runs of the bridge
(:func:`rlbook.trl.load_run` of :data:`rlbook.trl.DEMO`, the first steps of
``main`` handed to TRL) and the bridge's two-process run
(:func:`rlbook.trl.load_processes_run`). The page shows seed
:data:`SHOWN`; its claims are checked on every seed.

The TRL runs are not in the run catalogue: they enter the facts' key as
:class:`Cached` needs, each keyed by its own cache key, which covers the
bridge's code, the base run and the installed TRL versions, so installing
another TRL recomputes these facts. The facts need the ``trl`` extra
(:func:`available`).

Its choices and displays are made in :mod:`rlbook.book._bridge_words` (the
page words the choices) and its claims in :mod:`rlbook.book._bridge_claims`.
"""

from __future__ import annotations

import functools
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import torch

from rlbook import record as rec
from rlbook.analysis import reinforce
from rlbook.analysis.audit import VERDICT_WORDS
from rlbook.analysis.listing import listing
from rlbook.book import _bridge_words as words
from rlbook.book import phrasing
from rlbook.book._bridge_claims import CLAIMS  # noqa: F401  (rlbook.book reads CLAIMS here)
from rlbook.book._shown import SHOWN, shown_seed
from rlbook.book.facts import Num
from rlbook.book.needs import Need, on_seeds
from rlbook.core import rewards as rw
from rlbook.core import world
from rlbook.core.policy import weights_hash
from rlbook.record.display import as_table
from rlbook.runs import MAIN, load, spec
from rlbook.trl import (
    DEMO,
    INSTALL_HINT,
    accelerate_yaml,
    char_tokenizer,
    choice_rows,
    cross_check,
    decoding_gap,
    from_gpt2,
    grpo_defaults,
    grpo_kwargs,
    have_trl,
    launch_command,
    load_processes_run,
    load_run,
    metric_rows,
    option_rows,
    reward_vs_heldout,
    rollout_audit,
    run_key,
    to_gpt2,
    trl_record,
    trl_versions,
    warmup_note,
)
from rlbook.trl.launch import processes_key

PAGE = "chapters/appendix-trl.qmd"

PROCESSES, PROCESS_STEPS, PROCESS_PROMPTS = 2, 3, 4
"""The two-process run of the appendix: processes, RL steps, prompts a step."""
GPUS = 8
"""The GPUs of the multi-GPU configuration the appendix gives (and has not run: the book has no GPU)."""
DECODING_ROWS = 6
"""How many distinct completions of the first batch the decoding table shows."""
CORE = Path(__file__).resolve().parents[1] / "core"
"""The engine's folder, whose lines the appendix counts."""
EXAMPLE = "U:3+4?|A:7#"
"""The prompt and answer the appendix tokenizes."""
RECORD_FIELDS = (
    "base_policy",
    "sampling",
    "verifier",
    "advantage",
    "update.loss",
    "update.clip",
    "update.lr",
    "reference.kl_beta",
    "outcome_labels",
    "cost",
    "rollouts_before_filtering",
    "rollouts_used",
    "versions.trl",
    "versions.transformers",
)
"""The fields of the TRL run's record that the appendix's table shows; beside them, the weights hash of its step-0
checkpoint (:func:`record_rows`)."""


def record_rows(record: dict) -> list[list[str]]:
    """The appendix's table of a TRL run's record: the fields of :data:`RECORD_FIELDS`, with the weights hash of the
    step-0 checkpoint (the first) under that of ``base_policy``, so that the two hashes the appendix compares stand
    together. ValueError when the first checkpoint is not step 0's."""
    start = record["checkpoints"][0]
    if start["step"] != 0:
        raise ValueError(f"the TRL run's first checkpoint is step {start['step']}'s, not step 0's")
    rows = [[f"`{name}`", value] for name, value in as_table(record) if name.startswith(RECORD_FIELDS)]
    under = next(i for i, (name, _) in enumerate(rows) if name == "`base_policy.weights_hash`") + 1
    rows.insert(under, ["`checkpoints[0].weights_hash`", start["weights_hash"]])
    return rows


@dataclass(frozen=True)
class Cached:
    """A result outside the run catalogue that the appendix's facts read: a TRL run of one seed, or the two-process
    run (seed 0's base).

    It reads like a :class:`~rlbook.book.needs.Need` to the facts cache: a
    ``name``, a ``seed``, a ``label`` and ``key(threads)``, the result's own
    cache key (``key_of``), computed without training anything; it sorts
    among the runs by name and seed. The prefetch trains catalogue runs only,
    so the facts' ``compute`` trains a missing TRL run itself.
    """

    name: str
    seed: int
    key_of: Callable[[int], str] = field(compare=False, repr=False)

    @property
    def label(self) -> str:
        return f"{self.name} seed {self.seed}"

    def key(self, threads: int) -> str:
        return self.key_of(threads)

    def __lt__(self, other) -> bool:
        return (self.name, self.seed) < (other.name, other.seed)

    def __gt__(self, other) -> bool:
        return (self.name, self.seed) > (other.name, other.seed)


def available() -> bool:
    """Whether this Python can compute the facts: the ``trl`` extra is installed (:func:`rlbook.trl.have_trl`)."""
    return have_trl()


def needs(seeds: tuple[int, ...]) -> tuple[Need | Cached, ...]:
    trl = [Cached(DEMO.name, seed, functools.partial(run_key, DEMO, seed)) for seed in seeds]
    two = Cached(
        f"trl-processes{PROCESSES}", SHOWN, lambda threads: processes_key(PROCESSES, PROCESS_STEPS, PROCESS_PROMPTS)
    )
    return (*on_seeds(("base", "main"), seeds), *trl, two)


def _tokenizer() -> dict:
    """The character tokenizer against the book's own encoding, on every prompt and answer of every split."""
    tok = char_tokenizer()
    texts = [t.prompt + t.completion for name in world.SPLITS[:-1] for t in world.split(name)]
    ids = tok(EXAMPLE)["input_ids"]
    decoded = tok.decode(ids, skip_special_tokens=True)
    return {
        "texts": len(texts),
        "ids_match": all(tok(text)["input_ids"] == world.encode(text) for text in texts),
        "decoded": decoded,
        "dropped": tok.decode(ids) == EXAMPLE and world.EOT not in decoded,
    }


def _heldout_rows(run) -> list[list[str]]:
    """At each checkpoint: TRL's logged batch reward of the next step, then rlbook's independent evaluation."""
    return [
        [
            str(r["step"]),
            "–" if r["train_reward_logged"] is None else f"{r['train_reward_logged']:.3f}",
            f"{r['train_reward']:.3f}",
            f"{r['heldout_expected_reward']:.3f}",
            f"{r['heldout_greedy_accuracy']:.3f}",
        ]
        for r in reward_vs_heldout(run)
    ]


def _record(run) -> dict:
    """The TRL run's record: the rows the appendix shows, whether it survives a save and a load, what it counts."""
    record = trl_record(run)
    with tempfile.TemporaryDirectory() as folder:
        reloaded = rec.load(rec.save(record, Path(folder) / "record.json"))
    return {
        "rows": record_rows(record),
        "round_trip": reloaded == record,
        "used": record["rollouts_used"],
        "before": record["rollouts_before_filtering"],
        "rollouts": run.spec.rl.steps * grpo_kwargs(run.spec.rl)["per_device_train_batch_size"],
    }


def _processes() -> dict:
    """The two-process run: its command and output, what each process trained on, and the launch that was refused."""
    done = load_processes_run(PROCESSES, PROCESS_STEPS, PROCESS_PROMPTS)
    ranks, record = done.get("processes", []), done.get("record", {})
    sampling = record.get("sampling", {"prompts_per_step": 0, "group_size": 0})
    completions = sampling["prompts_per_step"] * sampling["group_size"]
    steps = record.get("update", {}).get("steps", 0)
    halves = [[prompt for p in ranks for prompt, _ in p["prompts_per_step"][step]] for step in range(steps)]
    refused = done.get("accelerate_cpu", {"command": "", "lines": [], "code": 0})
    return {
        "code": done["code"],
        "lines": done["lines"],
        "console": words.console(done["command"], done["lines"]),
        "writers": sum(line.startswith("wrote ") for line in done["lines"]),
        "ranks": len(ranks),
        "rows": [
            [
                str(p["rank"]),
                str(p["optimizer_steps"]),
                ", ".join(map(str, p["rollouts_per_step"])),
                ", ".join(
                    f"`{prompt.removeprefix('U:').removesuffix('?|A:')}` × {n}"
                    for prompt, n in p["prompts_per_step"][0]
                ),
                f"`{p['weights_hash']}`",
            ]
            for p in ranks
        ],
        "completions": completions,
        "per_rank": completions // max(1, len(ranks)),
        "prompts": sampling["prompts_per_step"],
        "group": sampling["group_size"],
        "steps": steps,
        "rollouts": record.get("cost", {}).get("rollouts", 0),
        "disjoint": bool(halves) and all(len(set(h)) == len(h) == sampling["prompts_per_step"] for h in halves),
        "even": bool(ranks) and all(p["rollouts_per_step"] == [completions // len(ranks)] * steps for p in ranks),
        "same_weights": len(ranks) == PROCESSES and len({p["weights_hash"] for p in ranks}) == 1,
        "refused": {
            "console": words.console(refused["command"], refused["lines"]),
            "lines": refused["lines"],
            "code": refused["code"],
            "one_line": len(refused["lines"]) == 1,
            "names_both": any(f"{PROCESSES} asked for, 1 started" in line for line in refused["lines"]),
        },
    }


def _model(base) -> dict:
    """The base policy copied into GPT-2: the largest logit difference on the held-out prompts, and the weights."""
    policy = base.policy()
    gpt2 = to_gpt2(policy).eval()
    prompts = torch.tensor([world.encode(t.prompt) for t in world.split("heldout")])
    with torch.no_grad():
        gap = (gpt2(prompts).logits - policy(prompts)[0]).abs().max().item()
    return {
        "gap": gap,
        "round_trip": weights_hash(from_gpt2(gpt2)) == weights_hash(policy),
        "params": sum(p.numel() for p in gpt2.parameters()),
        "book_params": sum(p.numel() for p in policy.parameters()),
    }


def _decoding_rows(captured: list[dict]) -> list[list[str]]:
    """The first distinct completions of the first batch: prompt, TRL's text and its verdict, the ids' text and its."""
    rows: list[list[str]]
    seen: set[str]
    exact, first, rows, seen = rw.ExactVerifier(), captured[0], [], set()
    for prompt, ours, theirs in zip(first["prompts"], first["completions"], first["trl_completions"]):
        if ours not in seen and len(rows) < DECODING_ROWS:
            seen.add(ours)
            rows.append(
                [
                    f"`{prompt}`",
                    f"`{theirs!r}`",
                    VERDICT_WORDS[exact(prompt, theirs).status],
                    f"`{ours!r}`",
                    VERDICT_WORDS[exact(prompt, ours).status],
                ]
            )
    return rows


def _audit(run) -> dict:
    """The audit of a TRL run from its captured rollouts, its cross-check against TRL's log, and the logged values."""
    rows = rollout_audit(run.rollouts)
    logged = {m["step"]: m["zero_variance_frac"] for m in run.metrics}
    return {
        "steps": [r["step"] for r in rows],
        "shares": {s: [r[f"{s}_rate"] for r in rows] for s in rw.STATUSES},
        "silent": {
            "all_right": [r["zero_variance_all_right"] for r in rows],
            "all_wrong": [r["zero_variance_all_wrong"] for r in rows],
            "logged": [logged[r["step"]] for r in rows],
        },
        "worst": cross_check(run.metrics, rows),
    }


def _seed(seed: int) -> dict:
    """Everything the appendix reads from one seed: the model copy, the TRL run beside main, its audit and record."""
    run, main, base = load_run(DEMO, seed), load("main", seed), load("base", seed)
    steps = [m["step"] for m in run.metrics]
    last = steps[-1]
    trl_eval = [[e["step"], e["heldout_expected_reward"]] for e in run.evals]
    book_eval = [[e["step"], e["heldout_expected_reward"]] for e in main.evals if e["step"] <= last]
    return {
        "model": _model(base),
        "decoding": {**decoding_gap(run.captured), "rows": _decoding_rows(run.captured)},
        "steps": steps,
        "trl_batch": run.metric("reward_mean"),
        "book_batch": [m["reward_mean"] for m in main.metrics if m["step"] <= last],
        "trl_eval": trl_eval,
        "book_eval": book_eval,
        "trl_gain": trl_eval[-1][1] - trl_eval[0][1],
        "book_gain": main.eval_at(last)["heldout_expected_reward"] - main.eval_at(0)["heldout_expected_reward"],
        "start_hash": run.checkpoints[0]["weights_hash"],
        "base_hash": base.log["checkpoints"][-1]["weights_hash"],
        "audit": _audit(run),
        "heldout": _heldout_rows(run),
        "record": _record(run),
        "versions": run.versions,
    }


def _defaults() -> dict:
    """TRL's defaults that change a run when left alone, beside the book's values for ``main``."""
    kwargs, names = grpo_kwargs(MAIN), ("learning_rate", "lr_scheduler_type", "max_grad_norm", "scale_rewards")
    found = grpo_defaults(names)
    return {"trl": found, "book": {n: kwargs[n] for n in names}}


def _comparison(by_seed: dict, seeds: tuple[int, ...]) -> dict:
    """TRL against rlbook over the seeds: held-out gains, and on the shown seed the end points and their order."""
    shown = by_seed[shown_seed(seeds)]
    book_gains = [by_seed[s]["book_gain"] for s in seeds]
    trl_gains = [by_seed[s]["trl_gain"] for s in seeds]
    apart = [abs(by_seed[s]["trl_gain"] - by_seed[s]["book_gain"]) for s in seeds]
    trl_end, book_end = shown["trl_eval"][-1][1], shown["book_eval"][-1][1]
    return {
        "start": Num(shown["trl_eval"][0][1], ".3f"),
        "trl_end": Num(trl_end),
        "book_end": Num(book_end),
        "order": words.order(trl_end, Num(book_end)),
        "apart": Num(max(apart)),
        "book_gains": phrasing.span(book_gains, ".3f"),  # three digits: two can show touching ranges as one
        "trl_gains": phrasing.span(trl_gains, ".3f"),
        "larger": words.larger(trl_gains, book_gains, seeds),
        "overlap": max(min(trl_gains), min(book_gains)) <= min(max(trl_gains), max(book_gains)),
        "ranges": words.ranges(trl_gains, book_gains),
        "gains": {"seeds": list(seeds), "TRL": trl_gains, "rlbook": book_gains},
    }


def _figure(seed: int, facts: dict) -> dict:
    """The shown seed's panels of the trainers' figure: batch rewards per step and held-out checkpoints."""
    return {
        "seed": seed,
        "steps": facts["steps"],
        "TRL": facts["trl_batch"],
        "rlbook": facts["book_batch"],
        "checkpoints": {"rlbook": facts["book_eval"], "TRL": facts["trl_eval"]},
    }


def _a1(name: str = "cispo") -> dict:
    """Exercise A.1's run: what its text names (the updates per batch, its steps) and its solution's step counts."""
    cfg = spec(name).rl
    if cfg is None:
        raise ValueError(f"run {name!r} is a base run: it has no RL configuration")
    kwargs = grpo_kwargs(cfg)
    return {
        "run": name,
        "updates": cfg.updates_per_batch,
        "steps": cfg.steps,
        "warmup": cfg.warmup,
        "max_steps": kwargs["max_steps"],
        "warmup_steps": kwargs["warmup_steps"],
    }


def _a2(run_seed: int) -> dict:
    """Exercise A.2's inputs: each step's rewards in TRL's order and TRL's logged zero-variance share."""
    run = load_run(DEMO, run_seed)
    return {
        "rewards": [[int(r) for r in s["rewards"].tolist()] for s in run.rollouts],
        "logged": [m["zero_variance_frac"] for m in run.metrics],
        "steps": [s["step"] for s in run.rollouts],
    }


def compute(seeds: tuple[int, ...]) -> dict:
    """Every fact of the appendix on ``seeds`` (the TRL runs of each seed, shown for :data:`SHOWN`)."""
    if not available():
        raise RuntimeError(INSTALL_HINT)
    by_seed = {seed: _seed(seed) for seed in seeds}
    shown = by_seed[shown_seed(seeds)]
    kwargs = grpo_kwargs(MAIN)
    cispo = spec("cispo").rl
    assert cispo is not None  # an RL run of the catalogue
    group = MAIN.group_size
    return {
        "seeds": list(seeds),
        "shown": shown_seed(seeds),
        "by_seed": by_seed,
        "versions": trl_versions(),
        "core_lines": Num(sum(len(p.read_text().splitlines()) for p in CORE.glob("*.py")), "approx"),
        "loop_lines": len(listing(reinforce.reinforce).splitlines()),  # as chapter 3 prints it
        "vocab": len(world.VOCAB),
        "n_heldout": len(world.split("heldout")),
        "n_train": len(world.split("train")),
        "group": group,
        "budget": MAIN.budget,
        "batch": kwargs["per_device_train_batch_size"],
        "batch_on_gpus": grpo_kwargs(MAIN, processes=GPUS)["per_device_train_batch_size"],
        "tokenizer": _tokenizer(),
        "params": Num(shown["model"]["params"], ",.0f"),
        "gap": Num(max(by_seed[s]["model"]["gap"] for s in seeds), "sci"),
        "logits": words.logits(max(by_seed[s]["model"]["gap"] for s in seeds)),
        "crosscheck": words.crosscheck_rows(shown["audit"]["worst"]),
        "decoding": {
            "ids": Num(shown["decoding"]["from_ids"]),
            "changed": Num(shown["decoding"]["status_changed"], ".0%"),
        },
        "options": {"rows": option_rows(MAIN), "warmup": warmup_note(MAIN), "defaults": _defaults()},
        "choices": {
            "rows": [[kind, ours, theirs, key] for kind, ours, theirs, _, key in choice_rows()],
            "notes": [[ours, words.times(note)] for _, ours, _, note, _ in choice_rows()],
        },
        "std_factor": {name: Num((g / (g - 1)) ** 0.5 - 1, ".0%") for name, g in (("book", group), ("two", 2))},
        "cispo_cap": cispo.cispo_cap,
        "metrics": [[ours, theirs, words.times(note)] for ours, theirs, note in metric_rows()],
        "demo": {"steps": DEMO.rl.steps, "eval_every": DEMO.eval_every, "warmup": DEMO.rl.warmup},
        "compare": _comparison(by_seed, seeds),
        "figure": _figure(shown_seed(seeds), shown),
        "worst": Num(max(max(by_seed[s]["audit"]["worst"].values()) for s in seeds), "sci"),
        "processes": _processes(),
        "gpus": {
            "yaml": accelerate_yaml(processes=GPUS).rstrip(),
            "console": words.console(launch_command(GPUS, MAIN.steps), []),
            "count": GPUS,
        },
        "a1": _a1(),
        "a2": _a2(shown_seed(seeds)),
    }
