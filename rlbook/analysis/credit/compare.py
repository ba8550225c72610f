"""Chapter 3's comparison of the update choices across seeds: the runs' curves, when rounding parts the runs that
only rounding separates from ``main``, the comparison table and its figure.
"""
import math
from dataclasses import dataclass, field

import numpy as np

from rlbook.analysis import plots

COMPARED = ("main", "pg", "ppo", "cispo", "ppo-kl", "ppo-kl-ratio", "seq-mean", "group-std", "reward-x10", "rloo")
"""The runs chapter 3 compares: ``main`` (cut at step 60) and the ablations of the update."""
from rlbook.runs import RUNS, Run, load


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
    """Held-out expected reward and per-step KL of each named run for each seed, up to ``last_step`` (chapter 3).

    ``main`` runs longer than the ablations; it is cut at ``last_step`` so
    every run is compared over the same steps from the same base. A seed the
    guard aborted counts up to where it stopped (:class:`Curves`).
    """
    curves = {}
    for name in names:
        runs = [load(name, seed) for seed in seeds]
        steps = np.array(sorted({e["step"] for run in runs for e in run.evals if e["step"] <= last_step}))
        heldout = np.array([[next((e["heldout_expected_reward"] for e in run.evals if e["step"] == s), np.nan)
                             for s in steps] for run in runs])
        kl = np.array([_padded(run.metric("kl"), last_step) for run in runs], dtype=float)
        clip = np.array([_padded(run.metric("clip_fraction"), last_step) for run in runs], dtype=float)
        stopped = {seed: run.log["abort"]["step"] for seed, run in zip(seeds, runs) if "abort" in run.log}
        curves[name] = Curves(name, RUNS[name].description, steps, heldout, kl, clip, stopped)
    return curves


# The runs that only rounding separates from ``main``: with one update per batch PPO's clipped objective has
# the plain policy gradient as its gradient, and AdamW all but cancels a constant reward scale (10 in
# reward-x10, G / (G - 1) in rloo, whose advantage is the centred one times that constant).
DISGUISES = ("pg", "reward-x10", "rloo")


# The least by which a run's worst seed must end below main's to count as lost (chapter 3), whatever rounding did.
LOST_FLOOR = 0.1
# The held-out gap from main within which a run in disguise still counts as agreeing with it (chapter 3).
AGREEMENT = 0.005


def agreed_until(curves: dict[str, Curves], names=DISGUISES, tol: float = AGREEMENT) -> int:
    """The last checkpoint up to which every run in ``names`` stays within ``tol`` of ``main`` on every seed (chapter 3).

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

    Chapter 3 reads the first as "one run in disguise" and the second as
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
    """How far below ``main``'s worst seed a run's worst seed must end to have *lost a seed* (chapter 3).

    The larger of :data:`LOST_FLOOR` and the late gaps of
    :func:`rounding_gaps`: further than rounding alone moved a seed.
    """
    return max(LOST_FLOOR, *(late for _, late in gaps.values()))


def stop_story(run: Run, before: int = 3) -> dict:
    """What a run that the guard aborted did in its last steps, from its log (chapter 3).

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
    return {"jump_step": int(run.metric("step")[jump]), "kl_before": float(kl[jump - 1]), "kl_jump": float(kl[jump]),
            "malformed_before": float(malformed[max(0, jump - before):jump].max()),
            "malformed_peak": float(malformed[jump:].max()), "reward_before": float(reward[jump - 1]),
            "reward_last": float(reward[-1]), "stopped": int(run.log["abort"]["step"]),
            "threshold": int(run.log["abort"]["threshold"])}


def in_words(names: list[str] | tuple[str, ...]) -> str:
    """Run names as a phrase for the text: "none", "`ppo`", "`ppo` and `cispo`", "`a`, `b` and `c`" (chapter 3)."""
    quoted = [f"`{name}`" for name in names]
    if not quoted:
        return "none"
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


def stop_lines(stops: list[tuple[str, int, dict]], last: int) -> list[str]:
    """One line per seed that the guard stopped before step ``last``, from its :func:`stop_story` (chapter 3).

    ``stops`` holds ``(run name, seed, story)``; no stopped seed gives the one
    line that says so.
    """
    if not stops:
        return [f"every seed of these runs reached step {last}"]
    return [f"{name} seed {seed}: KL to the base {st['kl_before']:.2f} -> {st['kl_jump']:.1f} at step "
            f"{st['jump_step']}; malformed share {st['malformed_before']:.1%} -> {st['malformed_peak']:.0%}; "
            f"training reward {st['reward_before']:.2f} -> {st['reward_last']:.2f}; stopped at step {st['stopped']} "
            f"after {st['threshold']} excluded batches in a row" for name, seed, st in stops]


def comparison_table(curves: dict[str, Curves]) -> list[dict]:
    """One row per run: its update choices, its final held-out reward (seed mean and range), recent KL and clip share (chapter 3).

    A run with an aborted seed says so in its last column; its reward and KL
    are over the seeds that finished.
    """
    rows = []
    for name, c in curves.items():
        cfg = RUNS[name].rl
        stops = ", ".join(f"seed {seed} at step {step}" for seed, step in c.stopped.items())
        beta = f"{cfg.kl_beta:g} ({cfg.kl_estimator})" if cfg.kl_beta else "0"
        rows.append({"run": name, "loss": cfg.loss, "updates": cfg.updates_per_batch, "aggregation": cfg.aggregation,
                     "advantage": cfg.advantage, "reward ×": f"{cfg.reward_scale:g}", "KL β": beta,
                     f"held-out, step {int(c.eval_steps[-1])}": f"{c.final.mean():.3f} ({c.final.min():.3f}–{c.final.max():.3f})",
                     "KL": c.recent_kl(), "clipped": float(np.nanmean(c.clip_fraction)), "aborted": stops or None})
    return rows


def kl_spikes(curves: Curves, threshold: float = 1.0) -> list[dict]:
    """Per seed of one run: its largest logged KL to the base, the step, and how it ended (chapter 3).

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
        rows.append({"seed": seed, "largest KL": float(kl[i]), "at step": i + 1,
                     f"back under {threshold:g} at step": later[0] + 1 if later else None,
                     f"steps above {threshold:g}": int(np.nansum(kl > threshold)),
                     "held-out, last checkpoint": float(curves.heldout[seed, -1])})
    return rows


def versus(curves: dict[str, Curves], a: str, b: str) -> str:
    """How run ``a``'s final held-out reward compares with run ``b``'s over seeds, in words (chapter 3).

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
    """Chance that two runs of the same recipe separate fully over seeds, one's seeds all above the other's (chapter 3).

    If the ``n_a + n_b`` final values are exchangeable, every assignment of
    ``n_a`` of them to the first run is equally likely; of the C(n_a + n_b, n_a)
    assignments, one puts the first run entirely above and one entirely below,
    so the chance is 2 / C(n_a + n_b, n_a) (1/10 for three seeds each): a
    permutation test's p-value for :func:`versus` saying "above" or "below".
    """
    if n_a < 1 or n_b < 1:
        raise ValueError(f"each run needs at least one seed, got {n_a} and {n_b}")
    return 2 / math.comb(n_a + n_b, n_a)


def plot_update_curves(curves: dict[str, Curves], panels: dict[str, tuple[str, ...]]):
    """Held-out expected reward (left: seed mean and range) and KL to the base (right: seed median) per panel (chapter 3).

    Each point summarises the seeds that reached it (an aborted seed drops out where it stopped).
    """
    fig, axes = plots.plt.subplots(len(panels), 2, figsize=(9.6, 3.0 * len(panels)), squeeze=False)
    for (title, names), (left, right) in zip(panels.items(), axes):
        for name in names:  # main is drawn last, thick, so that a run in disguise cannot hide it
            c, colour = curves[name], plots.RUN_COLOURS[name]
            top = {"lw": 2.2, "zorder": 3} if name == "main" else {"lw": 1.2, "ls": "--" if name in DISGUISES else "-"}
            left.plot(c.eval_steps, np.nanmean(c.heldout, 0), marker="o", ms=3, color=colour, label=name, **top)
            left.fill_between(c.eval_steps, np.nanmin(c.heldout, 0), np.nanmax(c.heldout, 0), color=colour, alpha=0.12)
            steps = np.arange(1, c.kl.shape[1] + 1)
            right.plot(steps, np.nanmedian(c.kl, axis=0), color=colour, label=name, **top)
        left.set_title(f"{title}: held-out expected reward", fontsize=10)
        right.set_title(f"{title}: KL to the base policy", fontsize=10)
        left.set_ylabel("expected reward")
        right.set_ylabel("KL (median over seeds)")
        right.set_yscale("log")
        left.legend(fontsize=8, ncol=2)
        right.legend(fontsize=8, ncol=2)
    for ax in axes[-1]:
        ax.set_xlabel("training step")
    fig.tight_layout()
    return fig
