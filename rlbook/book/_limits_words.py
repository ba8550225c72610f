"""Chapter 5's outcome-dependent wording, for its facts module (:mod:`rlbook.book.limits`).

The sentences and numbers the prose of chapters/05-reward-limits.qmd reads
from ``F.phrases`` (:func:`phrases`): where the loophole took over and what
held-out accuracy did there, what ``exploit-slow`` did against ``exploit``,
and what the learned judge and its over-optimisation showed. Each helper
reads right whatever the outcome and never offers a degenerate quantity as
evidence; ``tests/unit/book/test_limits.py`` tries each on made-up
outcomes. Private to the chapter: :func:`rlbook.book.topics` skips modules
whose name starts with an underscore.
"""

from __future__ import annotations

import numpy as np

from rlbook.book import phrasing
from rlbook.book.facts import Num


def favourites(hack: dict, taken: list[int], seeds: tuple[int, ...]) -> str:
    """The commonest paid-but-wrong answer at the last step, seed by seed, without repeating an answer.

    "`'#'` on every seed", or "`'#'` on seeds 0 and 2 and `' 3#'` on seed 1".
    """
    by_answer: dict[str, list[int]] = {}
    for s in taken:
        by_answer.setdefault(hack[s]["wrong"][0]["completion"], []).append(s)
    return phrasing.listing([f"`{a!r}` on {phrasing.seeds(where, seeds)}" for a, where in by_answer.items()])


def takeover_sentence(hack: dict, taken: list[int], seeds: tuple[int, ...]) -> str:
    """Where the loophole took over, as one finding; what the other seeds did, when there are any."""
    found = f"The loophole took over on {phrasing.seeds(taken, seeds)}"
    others = [s for s in seeds if s not in taken]
    if not others:
        return found + "."
    peak = phrasing.span([max(hack[s]["share"]) for s in others], ".0%")
    return (
        f"{found}; on {phrasing.seeds(others, seeds)} the policy kept writing sums, the loophole paid for at "
        f"most {peak} of a batch, and the detector below found no exploit."
    )


def heldout_fall(steps: list[int], heldout: list[float]) -> str:
    """What held-out accuracy did after the start of a run the loophole took over, as the end of a sentence.

    Where it reached 0.00 (as printed) and stayed there, says from which
    checkpoint; otherwise gives its best later checkpoint and where it
    ended. It never offers a bound of 0.00 as evidence.
    """
    start, shown = heldout[0], [f"{v:.2f}" for v in heldout]
    zero_from = next((i for i in range(1, len(heldout)) if all(v == "0.00" for v in shown[i:])), None)
    if zero_from is not None:
        if zero_from == len(heldout) - 1:
            return f"fell from {start:.2f} at the start to 0.00 at the last checkpoint, step {steps[-1]}"
        return (
            f"fell from {start:.2f} at the start to 0.00 by step {steps[zero_from]} and stayed there to the last "
            f"checkpoint, step {steps[-1]}"
        )
    best = int(np.argmax(heldout[1:])) + 1
    return (
        f"fell from {start:.2f} at the start and never came back: its best later checkpoint was "
        f"{heldout[best]:.2f}, at step {steps[best]}, and it ended at {heldout[-1]:.2f}"
    )


def slow_versus(taken: list[int], slow_taken: list[int], seeds: tuple[int, ...]) -> str:
    """Where the loophole took over at ``main``'s settings, against where it did in ``exploit``: the seeds of each,
    never a comparative that a count of zero would make empty ("fewer", "none")."""
    return f"the loophole took over on {phrasing.seeds(slow_taken, seeds)}, against {phrasing.seeds(taken, seeds)} in `exploit`"


def share_grew(share: list[float], ends: int = 5) -> bool:
    """Whether a loophole share rose over a run: its mean over the last ``ends`` steps above that over the first."""
    return float(np.mean(share[-ends:])) > float(np.mean(share[:ends]))


def slow_growth(shares: dict[int, list[float]], seeds: tuple[int, ...]) -> str:
    """What the loophole's share of a batch did at ``main``'s settings (chapter 5, the ``exploit-slow`` run).

    Names the seeds where the share grew (:func:`share_grew`) with its largest
    value there, and the seeds where it shrank with their first and last
    five steps' means; ValueError when it grew on no seed, where the
    section's warning would rest on nothing.
    """
    grew = [s for s in seeds if share_grew(shares[s])]
    if not grew:
        raise ValueError("the loophole's share grew on no seed at main's settings")
    text = (
        f"its share of a batch still grew on {phrasing.seeds(grew, seeds)}, to a largest share of "
        f"{phrasing.span([max(shares[s]) for s in grew], '.0%')}"
    )
    shrank = [s for s in seeds if s not in grew]
    if shrank:
        first = phrasing.span([float(np.mean(shares[s][:5])) for s in shrank], ".1%")
        last = phrasing.span([float(np.mean(shares[s][-5:])) for s in shrank], ".1%")
        text += f"; on {phrasing.seeds(shrank, seeds)} it shrank, from {first} to {last} of a batch"
    return text + "."


TRUSTED = 2
"""How many training prompts an over-rated answer must be right for to say the judge saw it labelled right often."""


def trusted_sentence(right_for: dict[int, int], seeds: tuple[int, ...]) -> str:
    """Why the judge trusts ``rm``'s commonest over-rated answer (chapter 5): on how many training prompts it is right.

    Where it is the right answer of at least :data:`TRUSTED` training prompts
    the judge saw it labelled right again and again; the seeds where it is
    not are named with what that leaves. ValueError when it holds on no seed.
    """
    often = [s for s in seeds if right_for[s] >= TRUSTED]
    if not often:
        raise ValueError(f"the over-rated answer is right for fewer than {TRUSTED} training prompts on every seed")
    text = (
        f"It is also the right answer of {phrasing.span([right_for[s] for s in often], 'd')} training prompts"
        f"{'' if len(often) == len(seeds) else ' on ' + phrasing.seeds(often, seeds)}, so the judge saw it "
        "labelled right again and again, and learned to trust the answer instead of checking it against the sum."
    )
    rare = [s for s in seeds if s not in often]
    if rare:
        counts = {right_for[s] for s in rare}
        said = "no training prompt" if counts == {0} else f"{phrasing.span(sorted(counts), 'd')} at most"
        text += (
            f" On {phrasing.seeds(rare, seeds)} it is the right answer of {said}: a judge also over-rates "
            "answers it was seldom shown labelled right."
        )
    return text


def by_value(values: dict[int, object], seeds: tuple[int, ...], show=str) -> str:
    """Values seed by seed, each value once: "16 on seed 0 and 4 on seeds 1 and 2", or "4 on every seed"."""
    where: dict[str, list[int]] = {}
    for s, v in values.items():
        where.setdefault(show(v), []).append(s)
    return phrasing.listing([f"{v} on {phrasing.seeds(w, seeds)}" for v, w in where.items()])


def _judge_phrases(judges: dict, seeds: tuple[int, ...]) -> dict:
    """The judge sections' outcome-dependent words and numbers."""

    def span(values, fmt=".2f"):
        return phrasing.span([int(v) if fmt == "d" else float(v) for v in values], fmt)

    j = [judges[s] for s in seeds]
    fell = [s for s in seeds if judges[s]["rm"]["gold"][-1] < judges[s]["rm"]["gold"][0]]
    return {
        "auc_seen": span([x["report"]["train_prompts"]["auc"] for x in j]),
        "auc_unseen": span([x["report"]["heldout_prompts"]["auc"] for x in j]),
        "proxy_top": span([x["bon"]["proxy"][-1] for x in j]),
        "gold_one": span([x["bon"]["gold"][0] for x in j]),
        "gold_top": span([x["bon"]["gold"][-1] for x in j]),
        "peaks": by_value({s: judges[s]["bon"]["peak"] for s in seeds}, seeds, lambda n: f"n = {n:,}"),
        "rm_proxy": (span([x["rm"]["proxy"][0] for x in j]), span([x["rm"]["proxy"][-1] for x in j])),
        "rm_gold": (span([x["rm"]["gold"][0] for x in j]), span([x["rm"]["gold"][-1] for x in j])),
        "rm_fell": phrasing.seeds(fell, seeds),
        "mean_gold": (span([np.mean(x["rm"]["gold"]) for x in j]), span([np.mean(x["kl"]["gold"]) for x in j])),
        "over": (span([x["over"]["share"][0] for x in j], ".0%"), span([x["over"]["share"][-1] for x in j], ".0%")),
        "trusted": trusted_sentence({s: judges[s]["over"]["top"][0][4] for s in seeds}, seeds),
    }


def phrases(
    hack: dict,
    judges: dict,
    response: dict,
    taken: list[int],
    slow_taken: list[int],
    shown: int | None,
    seeds: tuple[int, ...],
) -> dict:
    """The outcome-dependent words and numbers of the prose (each a :class:`Num` or a phrase)."""
    out: dict = {
        **_judge_phrases(judges, seeds),
        "takeover": takeover_sentence(hack, taken, seeds),
        "slow_versus": slow_versus(taken, slow_taken, seeds),
        "base_rate": phrasing.span([hack[s]["base_rate"] for s in seeds], ".1%"),
        "slow_growth": slow_growth({s: hack[s]["slow"]["share"] for s in seeds}, seeds),
    }
    first = response[seeds[0]]
    out.update(
        {
            "abort_step": phrasing.span([response[s]["abort"]["step"] for s in seeds], "d"),
            "abort_checkpoint": phrasing.span([response[s]["abort"]["checkpoint"] for s in seeds], "d"),
            "abort_after": first["abort"]["after"],
        }
    )
    if shown is None:
        return out
    h = hack[shown]
    top = h["wrong"][0]
    dip = h["dip"]
    out.update(
        {
            "favourites": favourites(hack, taken, seeds),
            "takeover_by": max(hack[s]["takeover"] for s in taken),
            "top": repr(top["completion"]),
            "top_count": top["count"],
            "spellings": h["spellings"],
            "paid": Num(h["share"][-1], ".0%"),
            "rollouts": h["rollouts"],
            "last_step": h["last_step"],
            "heldout_first": Num(h["report"]["heldout"][0]),
            "heldout_fall": heldout_fall(h["report"]["steps"], h["report"]["heldout"]),
            "dip_step": dip["step"],
            "dip_right": Num(dip["right"], ".0%"),
            "first_right": Num(dip["first_right"], ".0%"),
            "dip_share": Num(dip["share"], ".0%"),
            "len_first": Num(h["lengths"][0], ".1f"),
            "len_last": Num(h["lengths"][-1], ".1f"),
            "rise": h["report"]["rise"],
        }
    )
    return out
