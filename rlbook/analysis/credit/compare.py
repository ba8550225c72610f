"""Chapter 4's comparison of the update choices across seeds: which runs are compared, their curves, when
rounding parts the runs that only rounding separates from ``main``, and the comparison's tables.

The comparison is declared once, in :data:`COMPARISON`: the questions it
asks, each with the runs that answer it against ``main``. Everything else
(the runs to load, the runs in disguise, the runs that reuse a batch, the
figure's panels) derives from it and from the runs' catalogue entries.
"""

import math
from dataclasses import dataclass, field

import numpy as np

from rlbook.core.rl import RLConfig
from rlbook.runs import RUNS, Run, load

COMPARISON: dict[str, tuple[str, ...]] = {
    "rounding only": ("pg", "reward-x10", "rloo"),
    "reusing a batch": ("ppo", "cispo"),
    "a KL penalty": ("ppo", "ppo-kl", "ppo-kl-ratio"),
    "advantage and aggregation": ("seq-mean", "group-std"),
}
"""The update choices chapter 4 compares, by the question each group answers; every group is set against ``main``.

"rounding only" holds the runs that are ``main`` in disguise: with one
update per batch PPO's clipped objective has the plain policy gradient as
its gradient, and AdamW all but cancels a constant reward scale (10 in
``reward-x10``, G / (G - 1) in ``rloo``, whose advantage is the centred
one times that constant)."""
COMPARED: tuple[str, ...] = ("main", *dict.fromkeys(run for group in COMPARISON.values() for run in group))
"""Every run of the comparison, ``main`` first (``main`` is cut at the ablations' last step)."""
DISGUISES: tuple[str, ...] = COMPARISON["rounding only"]
"""The runs that only rounding separates from ``main``."""


def _rl(name: str) -> RLConfig:
    """The RL configuration of run ``name`` (its entry in :data:`rlbook.runs.RUNS`)."""
    cfg = RUNS[name].rl
    if cfg is None:
        raise ValueError(f"run {name!r} is a base run: it has no RL configuration")
    return cfg


REUSED: tuple[str, ...] = tuple(run for run in COMPARED if _rl(run).updates_per_batch > 1)
"""The compared runs that take several gradient steps on each batch (from their catalogue entries)."""


def panels() -> dict[str, tuple[str, ...]]:
    """The comparison's figure, one panel per question of :data:`COMPARISON`, each with ``main`` first."""
    return {question: ("main", *group) for question, group in COMPARISON.items()}


@dataclass
class Curves:
    """One named run over seeds: held-out expected reward per checkpoint and KL to the base per step.

    A seed that the guard aborted (chapter 4) has NaN wherever it did not
    reach: at the checkpoints after its last one and the steps after its
    last. ``stopped`` maps such a seed to the step it stopped at. The
    summaries below are over the seeds that got there.
    """

    name: str
    description: str
    eval_steps: np.ndarray
    heldout: np.ndarray  # (seeds, checkpoints)
    kl: np.ndarray  # (seeds, steps)
    clip_fraction: np.ndarray  # (seeds, steps)
    stopped: dict[int, int] = field(default_factory=dict)

    @property
    def final(self) -> np.ndarray:
        """Held-out expected reward at the last checkpoint of the seeds that reached it."""
        last = self.heldout[:, -1]
        return last[~np.isnan(last)]

    def recent_kl(self, steps: int = 10) -> float:
        """Median of the logged KL over the last ``steps`` steps of every seed that reached them.

        A median, because the k3 estimate is occasionally huge on a token whose
        probability collapsed, and one such step would dominate a mean.
        """
        return float(np.nanmedian(self.kl[:, -steps:]))


def _padded(values: list, length: int) -> list[float]:
    """``values`` cut or padded with NaN to ``length``, missing entries as NaN."""
    values = [np.nan if v is None else v for v in values[:length]]
    return values + [np.nan] * (length - len(values))


def update_curves(names=COMPARED, seeds=(0, 1, 2), last_step: int = 60) -> dict[str, Curves]:
    """Held-out expected reward and per-step KL of each named run for each seed, up to ``last_step`` (chapter 4).

    ``main`` runs longer than the ablations; it is cut at ``last_step`` so
    every run is compared over the same steps from the same base. A seed the
    guard aborted counts up to where it stopped (:class:`Curves`).
    """
    curves = {}
    for name in names:
        runs = [load(name, seed) for seed in seeds]
        steps = np.array(sorted({e["step"] for run in runs for e in run.evals if e["step"] <= last_step}))
        heldout = np.array(
            [
                [next((e["heldout_expected_reward"] for e in run.evals if e["step"] == s), np.nan) for s in steps]
                for run in runs
            ]
        )
        kl = np.array([_padded(run.metric("kl"), last_step) for run in runs], dtype=float)
        clip = np.array([_padded(run.metric("clip_fraction"), last_step) for run in runs], dtype=float)
        stopped = {seed: run.log["abort"]["step"] for seed, run in zip(seeds, runs) if "abort" in run.log}
        curves[name] = Curves(name, RUNS[name].description, steps, heldout, kl, clip, stopped)
    return curves


# The least by which a run's worst seed must end below main's to count as lost (chapter 4), whatever rounding did.
LOST_FLOOR = 0.1
# The held-out gap from main within which a run in disguise still counts as agreeing with it (chapter 4).
AGREEMENT = 0.005


def agreed_until(curves: dict[str, Curves], names=DISGUISES, tol: float = AGREEMENT) -> int:
    """The last checkpoint up to which every run in ``names`` stays within ``tol`` of ``main`` on every seed (chapter 4).

    Only rounding separates them from ``main``, so they agree at first; the
    step at which a last-digit difference first changes a sampled answer
    differs from one processor to another: over eighteen numerical draws
    of the book's runs it fell anywhere from before the first checkpoint
    (this returns 0) to after the last. Step 0, the shared base policy,
    always agrees.
    """
    main = curves["main"]
    agree = np.ones(len(main.eval_steps), dtype=bool)
    for name in names:
        agree &= np.nanmax(np.abs(curves[name].heldout - main.heldout), axis=0) <= tol
    if not agree[0]:
        raise ValueError(f"{', '.join(names)} already differ from main at step {main.eval_steps[0]}")
    return int(main.eval_steps[np.cumprod(agree).astype(bool)][-1])


def rounding_gaps(curves: dict[str, Curves], names=DISGUISES) -> dict[str, tuple[float, float]]:
    """For each run in ``names``, its largest held-out gap from ``main`` over the seeds: up to :func:`agreed_until`, and overall.

    Chapter 4 reads the first as "one run in disguise" and the second as
    how far rounding alone can move one seed's value by the last
    checkpoint: once a last-digit difference changes one sampled answer,
    the two runs learn from different batches and drift apart.
    """
    main = curves["main"]
    early = main.eval_steps <= agreed_until(curves, names)
    gaps = {}
    for name in names:
        gap = np.abs(curves[name].heldout - main.heldout)
        gaps[name] = (float(np.nanmax(gap[:, early])), float(np.nanmax(gap)))
    return gaps


def lost_margin(gaps: dict[str, tuple[float, float]]) -> float:
    """How far below ``main``'s worst seed a run's worst seed must end to have *lost a seed* (chapter 4).

    The larger of :data:`LOST_FLOOR` and the late gaps of
    :func:`rounding_gaps`: further than rounding alone moved a seed.
    """
    return max(LOST_FLOOR, *(late for _, late in gaps.values()))


def stop_story(run: Run, before: int = 3) -> dict:
    """What a run that the guard aborted did in its last steps, from its log (chapter 4).

    ``jump_step`` is the step with the largest rise of the logged KL to the
    base; ``kl_before`` and ``kl_jump`` the KL at the step before and at it;
    ``malformed_before`` the largest malformed share in the ``before`` steps
    before the jump and ``malformed_peak`` the largest afterwards;
    ``reward_before`` and ``reward_last`` the mean training reward before the
    jump and at the last step; ``stopped`` the step the run stopped at and
    ``threshold`` the excluded batches in a row that stopped it.
    """
    if "abort" not in run.log:
        raise ValueError(f"{run.name} seed {run.seed} was not aborted")
    kl = np.array(_padded(run.metric("kl"), len(run.metrics)), dtype=float)  # NaN where no update was made
    jump = int(np.nanargmax(np.diff(kl))) + 1
    malformed, reward = np.array(run.metric("malformed_rate")), np.array(run.metric("reward_mean"))
    return {
        "jump_step": int(run.metric("step")[jump]),
        "kl_before": float(kl[jump - 1]),
        "kl_jump": float(kl[jump]),
        "malformed_before": float(malformed[max(0, jump - before) : jump].max()),
        "malformed_peak": float(malformed[jump:].max()),
        "reward_before": float(reward[jump - 1]),
        "reward_last": float(reward[-1]),
        "stopped": int(run.log["abort"]["step"]),
        "threshold": int(run.log["abort"]["threshold"]),
    }


def settings_table(names=COMPARED) -> list[dict]:
    """One row per run of ``names``: the update choices it was trained with, read from its catalogue entry (chapter 4).

    ``updates`` is the number of gradient steps on each batch; ``KL β`` the
    weight of the penalty to the base, with its estimator.
    """
    rows = []
    for name in names:
        cfg = _rl(name)
        rows.append(
            {
                "run": name,
                "loss": cfg.loss,
                "updates": cfg.updates_per_batch,
                "aggregation": cfg.aggregation,
                "advantage": cfg.advantage,
                "reward ×": f"{cfg.reward_scale:g}",
                "KL β": f"{cfg.kl_beta:g} ({cfg.kl_estimator})" if cfg.kl_beta else "0",
            }
        )
    return rows


def results_table(curves: dict[str, Curves]) -> list[dict]:
    """One row per run: its held-out expected reward at the last checkpoint over seeds, recent KL, clip share (chapter 4).

    ``mean`` and ``range`` are over the seeds that reached the last
    checkpoint; ``KL`` is :meth:`Curves.recent_kl`; ``clipped`` the mean share
    of tokens whose gradient PPO's clip removed. When the guard stopped a
    seed of any run early, a ``stopped`` column names it (None for the runs
    whose seeds all finished); otherwise there is no such column.
    """
    any_stopped = any(c.stopped for c in curves.values())
    rows = []
    for name, c in curves.items():
        row = {
            "run": name,
            "mean": float(c.final.mean()),
            "range": f"{c.final.min():.3f}–{c.final.max():.3f}",
            "KL": c.recent_kl(),
            "clipped": float(np.nanmean(c.clip_fraction)),
        }
        if any_stopped:
            row["stopped"] = ", ".join(f"seed {seed} at step {step}" for seed, step in c.stopped.items()) or None
        rows.append(row)
    return rows


def seed_table(curves: dict[str, Curves]) -> list[dict]:
    """One row per run: each seed's held-out expected reward at the last checkpoint and median KL (chapter 4's detail).

    A seed that stopped early has None where it did not reach.
    """
    rows = []
    for name, c in curves.items():
        row: dict = {"run": name}
        for k in range(len(c.heldout)):
            last = float(c.heldout[k, -1])
            row[f"held-out {k}"] = None if math.isnan(last) else last
        for k in range(len(c.kl)):
            recent = c.kl[k, -10:]
            row[f"KL {k}"] = None if np.isnan(recent).all() else float(np.nanmedian(recent))
        rows.append(row)
    return rows


def kl_spikes(curves: Curves, threshold: float = 1.0) -> list[dict]:
    """Per seed of one run: its largest logged KL to the base, the step, and how it ended (chapter 4).

    Keys: ``"seed"`` (its place among the seeds the curves hold: 0 to 2 in
    the book), ``"largest KL"`` and ``"at step"``; ``"back under 1 at step"``,
    the first later step whose KL is below ``threshold`` (1 unless told,
    None if none is); ``"steps above 1"``; and ``"held-out, last checkpoint"``
    (NaN for a seed that stopped).
    """
    rows = []
    for seed, kl in enumerate(curves.kl):
        i = int(np.nanargmax(kl))
        later = [j for j in range(i + 1, len(kl)) if kl[j] < threshold]
        rows.append(
            {
                "seed": seed,
                "largest KL": float(kl[i]),
                "at step": i + 1,
                f"back under {threshold:g} at step": later[0] + 1 if later else None,
                f"steps above {threshold:g}": int(np.nansum(kl > threshold)),
                "held-out, last checkpoint": float(curves.heldout[seed, -1]),
            }
        )
    return rows


def versus(curves: dict[str, Curves], a: str, b: str) -> str:
    """How run ``a``'s final held-out reward compares with run ``b``'s over seeds, in words (chapter 4).

    "above" when every seed of ``a`` that finished ended above every seed of
    ``b``, "below" when every one ended below, and otherwise "with seeds
    overlapping those of": the two ranges over seeds overlap, and the runs'
    order is not settled by them. Even full separation is modest evidence
    with few seeds (:func:`separation_chance`).
    """
    fa, fb = curves[a].final, curves[b].final
    if fa.min() > fb.max():
        return "above"
    if fa.max() < fb.min():
        return "below"
    return "with seeds overlapping those of"


def separation_chance(n_a: int, n_b: int) -> float:
    """Chance that two runs of the same recipe separate fully over seeds, one's seeds all above the other's (chapter 4).

    If the ``n_a + n_b`` final values are exchangeable, every assignment of
    ``n_a`` of them to the first run is equally likely; of the C(n_a + n_b, n_a)
    assignments, one puts the first run entirely above and one entirely below,
    so the chance is 2 / C(n_a + n_b, n_a) (1/10 for three seeds each): a
    permutation test's p-value for :func:`versus` saying "above" or "below".
    """
    if n_a < 1 or n_b < 1:
        raise ValueError(f"each run needs at least one seed, got {n_a} and {n_b}")
    return 2 / math.comb(n_a + n_b, n_a)
