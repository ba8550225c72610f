"""Which judged rollouts chapter 2 shows: the figure's pair, each step's note, the exercise's block (ch2).

The chapter draws two real rollouts side by side (one the two judges agree
on, one they do not), and its Exercise 2.3 lists a block of consecutive
rollouts without their verdicts. These functions pick them from a judged
sample and describe each step as the figure labels it; drawing is left to
:mod:`rlbook.figures.rewards`.
"""

from __future__ import annotations

from rlbook.core import rewards as rw

from .verdicts import PARTIAL_CREDIT, RIGHT_INVALID, Judged


def step_notes(j: Judged) -> list[tuple[str, bool, str]]:
    """Each expected step of a judged rollout: (the text written there, valid, the scorer's note) (ch2).

    The note is the process scorer's reason for that step, with ``!=``
    written as the sign ≠.
    """
    fields = j.completion.split(rw.EOT)[0].split(",")
    notes = j.process_reason.split("; ")
    return [
        (fields[i] if i < len(fields) else "", valid, notes[i].replace("!=", "\u2260"))
        for i, valid in enumerate(j.steps)
    ]


def figure_rollouts(judged: list[Judged]) -> list[Judged]:
    """Two real rollouts for chapter 2's figure: an agreement, then a disagreement, for the same prompt if possible.

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


def exercise_rows(judged: list[Judged], k: int = 12, avoid: frozenset[str] = frozenset()) -> list[Judged]:
    """The ``k`` consecutive rollouts Exercise 2.3 lists: the first block of the sample holding a disagreement and
    a rollout the two judges agree on outright (both pass it, or both fail it with no step valid), so that the
    reader has both to tell apart.

    Blocks start at multiples of ``k``. A block holding a prompt in
    ``avoid`` (the one the chapter's figure already shows) is skipped when
    another block qualifies; failing that, the first block with a
    disagreement; with no disagreement at all, the first block.
    """
    blocks = [judged[i : i + k] for i in range(0, len(judged), k)]
    useful = [b for b in blocks if any(j.disagrees for j in b)]
    both = [b for b in useful if any(not j.disagrees and j.process in (0.0, 1.0) for j in b)]
    fresh = [b for b in both if not any(j.prompt in avoid for j in b)]
    return (fresh or both or useful or blocks)[0]
