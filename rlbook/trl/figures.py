"""The appendix's tables and figures of a TRL run, in the book's house style."""
from __future__ import annotations

import os
import re
from pathlib import Path

from rlbook.core import rewards as rw

from .audit import rollout_audit
from .spec import TRLRun

BIBLIOGRAPHY = Path(__file__).resolve().parents[2] / "references.bib"
"""The book's bibliography, beside the package in the repository."""


def cite(key: str, bibliography: Path = BIBLIOGRAPHY) -> str:
    """A citation of the work ``key`` for a Markdown table cell (appendix).

    In the book's build (``RLBOOK_BUILDING`` set) it is pandoc's ``[@key]``,
    which the website links to its list of references; anywhere else, such as
    a notebook re-run in Jupyter, it is the author-year text a reader reads,
    "(Liu et al. 2025)", from the book's ``references.bib``.
    """
    if os.environ.get("RLBOOK_BUILDING"):
        return f"[@{key}]"
    text = bibliography.read_text(encoding="utf-8") if bibliography.is_file() else ""
    entry = re.search(r"@\w+\s*\{\s*" + re.escape(key) + r"\s*,(.*?)\n\}", text, re.DOTALL)
    if entry is None:
        return key
    author = re.search(r"author\s*=\s*\{(.*)\},?\s*$", entry.group(1), re.MULTILINE)
    year = re.search(r"year\s*=\s*\{?(\d{4})", entry.group(1))
    names = [name.split(",")[0].strip("{} ") for name in (author.group(1) if author else key).split(" and ")]
    who = names[0] if len(names) == 1 else f"{names[0]} and {names[1]}" if len(names) == 2 else f"{names[0]} et al."
    return f"({who} {year.group(1) if year else 'n.d.'})"


def plot_reward_and_heldout(run: TRLRun, book_run, axes) -> None:
    """Left: each step's batch reward, TRL and rlbook; right: held-out expected reward at each checkpoint (appendix).

    ``book_run`` is the rlbook run with the same configuration (``main``),
    cut to the TRL run's steps.
    """
    from rlbook.analysis.plots import BLUE, ORANGE

    last = run.metrics[-1]["step"]
    for source, label, colour in ((run, "TRL GRPOTrainer", ORANGE), (book_run, "rlbook", BLUE)):
        metrics = [m for m in source.metrics if m["step"] <= last]
        evals = [e for e in source.evals if e["step"] <= last]
        axes[0].plot([m["step"] for m in metrics], [m["reward_mean"] for m in metrics], color=colour, label=label)
        axes[1].plot([e["step"] for e in evals], [e["heldout_expected_reward"] for e in evals], "o-",
                     color=colour, label=label)
    axes[0].set(xlabel="step", ylabel="batch reward (train prompts)", ylim=(0, 1))
    axes[1].set(xlabel="checkpoint step", ylabel="held-out expected reward", ylim=(0, 1))
    axes[1].legend()


def plot_audit(run: TRLRun, axes) -> None:
    """Left: each step's rollouts by verifier status; right: zero-variance groups, audited and as TRL logged (appendix)."""
    from rlbook.analysis.plots import GREY, ORANGE, STATUS_COLOURS, TEAL

    audit = rollout_audit(run.rollouts)
    steps = [a["step"] for a in audit]
    shares = [[a[f"{st}_rate"] for a in audit] for st in rw.STATUSES]
    axes[0].stackplot(steps, shares, labels=rw.STATUSES, colors=[STATUS_COLOURS[st] for st in rw.STATUSES])
    axes[0].set(xlabel="step", ylabel="share of the batch's rollouts", ylim=(0, 1))
    axes[0].legend(loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=3, fontsize=8)
    right = [a["zero_variance_all_right"] for a in audit]
    wrong = [a["zero_variance_all_wrong"] for a in audit]
    axes[1].stackplot(steps, right, wrong, labels=["all right", "all wrong"], colors=[TEAL, ORANGE], alpha=0.7)
    logged = [m for m in run.metrics if "zero_variance_frac" in m]
    axes[1].plot([m["step"] for m in logged], [m["zero_variance_frac"] for m in logged], "o", color=GREY,
                 label="TRL frac_reward_zero_std")
    axes[1].set(xlabel="step", ylabel="share of groups with equal rewards", ylim=(0, 1))
    axes[1].legend(loc="upper right", fontsize=8)
