"""Drawing judged rollouts (fig-outcome-process-reward) and the seeds' curves of the comparison (ch2)."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from rlbook.core import rewards as rw

from .verdicts import PARTIAL_CREDIT, RIGHT_INVALID, Judged

if TYPE_CHECKING:
    from matplotlib.axes import Axes


def step_notes(j: Judged) -> list[tuple[str, bool, str]]:
    """Each expected step of a judged rollout: (the text written there, valid, the scorer's note) (ch2)."""
    fields = j.completion.split(rw.EOT)[0].split(",")
    notes = j.process_reason.split("; ")
    return [(fields[i] if i < len(fields) else "", valid, notes[i].replace("!=", "\u2260"))
            for i, valid in enumerate(j.steps)]


def figure_rollouts(judged: list[Judged]) -> list[Judged]:
    """Two real rollouts for fig-outcome-process-reward: a disagreement and, if possible, an agreement.

    The disagreement is the first rollout whose right answer comes through
    an invalid step (else the first with partial credit), preferring one
    whose prompt also has an accepted rollout with valid steps; that rollout
    is the agreement (any such rollout if no prompt has both).
    """
    good = [j for j in judged if j.outcome_pass and j.process_pass]
    agreeing = {j.prompt for j in good}
    bads = [j for j in judged if j.kind == RIGHT_INVALID] or [j for j in judged if j.kind == PARTIAL_CREDIT]
    bad = next((j for j in bads if j.prompt in agreeing), bads[0] if bads else None)
    if bad is None:
        return good[:1]
    same = [j for j in good if j.prompt == bad.prompt]
    return (same or good)[:1] + [bad]


def draw_rollout(ax: Axes, j: Judged, y: float, title: str = "") -> None:
    """Draw one judged rollout on ``ax`` at height ``y``: prompt, scored steps, end mark, outcome (ch2).

    Each step is a box coloured by validity with the process scorer's note
    under it; the last box holds the outcome verifier's status and reward,
    with the process score under it. ``title`` is written above the row.
    """
    from matplotlib.patches import FancyBboxPatch

    from rlbook.analysis.plots import GREY, RED, STATUS_COLOURS, TEAL

    def box(x: float, w: float, text: str, colour: str, note: str, note_colour: str) -> None:
        ax.add_patch(FancyBboxPatch((x, y - 0.3), w, 0.6, boxstyle="round,pad=0.02", facecolor=colour,
                                    edgecolor="white"))
        ax.text(x + w / 2, y, text, ha="center", va="center", color="white", fontsize=10, family="monospace")
        ax.text(x + w / 2, y - 0.45, note, ha="center", va="top", color=note_colour, fontsize=8)

    if title:
        ax.text(0.0, y + 0.45, title, ha="left", va="bottom", fontsize=9, color=GREY, style="italic")
    box(0.0, 2.2, j.prompt, GREY, "prompt", GREY)
    x = 2.4
    for i, (text, valid, note) in enumerate(step_notes(j)):
        colour = TEAL if valid else RED
        box(x, 1.3, f"{text}," if i == 0 else text or "(none)", colour, note.split(" ", 2)[-1], colour)
        x += 1.5
    end = j.completion[len(j.completion.split(rw.EOT)[0]):] or "(budget)"
    box(x, 0.8, end, GREY, "end", GREY)
    box(x + 1.0, 2.6, f"{j.status}, reward {j.reward:.0f}", STATUS_COLOURS[j.status],
        f"process score {j.process:.1f}", TEAL if j.process_pass else RED)


def plot_seeds(ax: Axes, curves: list[tuple[list[int], list[float]]], colour: str, label: str) -> None:
    """Draw one curve per seed (thin) and their mean (thick, labelled) on ``ax`` (ch2's comparison figure).

    All curves must share their x values (the same checkpoint or training steps).
    """
    xs = curves[0][0]
    if any(list(x) != list(xs) for x, _ in curves):
        raise ValueError("the seeds' curves must share their steps")
    for _, ys in curves:
        ax.plot(xs, ys, color=colour, alpha=0.35, linewidth=0.9)
    ax.plot(xs, np.mean([ys for _, ys in curves], axis=0), color=colour, linewidth=2.2,
            label=f"{label} (mean of {len(curves)} seeds)")
