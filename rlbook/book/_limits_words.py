"""Chapter 5's outcome-dependent phrases and choices, for its facts module (:mod:`rlbook.book.limits`).

What the prose of chapters/05-reward-limits.qmd reads from ``F.phrases``
(:func:`phrases`): the numbers and seed lists it prints, and the choices
(:func:`rlbook.book.wording.choice`) of the sentences whose form follows the
runs, which the page words case by case with ``P.say``: where the loophole
took over, what held-out accuracy did there, how many of its answers a
table lists, whether its share grew at ``main``'s settings, and why the judge trusts an over-rated answer. Each
selector picks its case and values whatever the outcome and never offers a
degenerate quantity as evidence; ``tests/unit/book/test_limits.py`` tries
each on made-up outcomes. Private to the chapter: :func:`rlbook.book.topics`
skips modules whose name starts with an underscore.
"""

from __future__ import annotations

import numpy as np

from rlbook.book import phrasing
from rlbook.book._shown import shown_seed
from rlbook.book.facts import Num
from rlbook.book.wording import choice


def favourites(hack: dict, taken: list[int], seeds: tuple[int, ...]) -> str:
    """The commonest paid-but-wrong answer at the last step, seed by seed, without repeating an answer.

    "`'#'` on every seed", or "`'#'` on seeds 0 and 2 and `' 3#'` on seed 1".
    """
    by_answer: dict[str, list[int]] = {}
    for s in taken:
        by_answer.setdefault(hack[s]["wrong"][0]["completion"], []).append(s)
    return phrasing.listing([f"`{a!r}` on {phrasing.seeds(where, seeds)}" for a, where in by_answer.items()])


TAKEOVER = ("every", "some")
"""The cases of the takeover sentence: the loophole took over on every seed, or on some and not the others."""


def takeover(hack: dict, taken: list[int], seeds: tuple[int, ...]) -> dict:
    """Where the loophole took over, as one finding; the other seeds and the largest share they paid, if any."""
    where = phrasing.seeds(taken, seeds)
    others = [s for s in seeds if s not in taken]
    if not others:
        return choice("every", TAKEOVER, taken=where)
    peak = phrasing.span([max(hack[s]["share"]) for s in others], ".0%")
    return choice("some", TAKEOVER, taken=where, others=phrasing.seeds(others, seeds), peak=peak)


LISTED = ("all", "commonest")
"""The cases of :func:`listed`: the table of the loophole's answers lists every one of them, or the commonest only."""


def listed(shown: int, spellings: int) -> dict:
    """How many of the ``spellings`` answers the loophole paid at the last step the table lists (``shown``).

    Where it lists fewer than all, ``listed`` says how many in words ("the
    five commonest").
    """
    if shown >= spellings:
        return choice("all", LISTED)
    return choice("commonest", LISTED, listed=phrasing.number_word(shown))


FALL = ("zero_at_end", "zero_and_stayed", "never_back")
"""The cases of what held-out accuracy did in a run the loophole took over (:func:`heldout_fall`)."""


def heldout_fall(steps: list[int], heldout: list[float]) -> dict:
    """What held-out accuracy did after the start of a run the loophole took over.

    Where it reached 0.00 (as printed) and stayed there, from which
    checkpoint (the last, or an earlier one); otherwise its best later
    checkpoint and where it ended. It never offers a bound of 0.00 as
    evidence.
    """
    start, shown = Num(heldout[0]), [f"{v:.2f}" for v in heldout]
    zero_from = next((i for i in range(1, len(heldout)) if all(v == "0.00" for v in shown[i:])), None)
    if zero_from == len(heldout) - 1:
        return choice(FALL[0], FALL, start=start, last=steps[-1])
    if zero_from is not None:
        return choice(FALL[1], FALL, start=start, zero=steps[zero_from], last=steps[-1])
    best = int(np.argmax(heldout[1:])) + 1
    return choice(FALL[2], FALL, start=start, best=Num(heldout[best]), best_step=steps[best], end=Num(heldout[-1]))


def share_grew(share: list[float], ends: int = 5) -> bool:
    """Whether a loophole share rose over a run: its mean over the last ``ends`` steps above that over the first."""
    return float(np.mean(share[-ends:])) > float(np.mean(share[:ends]))


GROWTH = ("every", "some", "none")
"""The cases of :func:`slow_growth`: the share grew on every seed, or on some while it shrank on the others, or on
none."""


def slow_growth(shares: dict[int, list[float]], seeds: tuple[int, ...], followed: int | None) -> dict:
    """What the loophole's share of a batch did at ``main``'s settings (chapter 5, the ``exploit-slow`` run).

    The seeds where the share grew (:func:`share_grew`), one of them named
    with its largest share (``followed``, the seed the chapter follows, if
    the share grew on it, else the first seed where it grew; the chapter's
    table gives every seed's), and the seeds where it shrank. Where it grew
    on no seed the case is ``none`` (the law that it grew on some seed then
    fails, with its notice in the page).
    """
    grew = [s for s in seeds if share_grew(shares[s])]
    if not grew:
        return choice("none", GROWTH, shrank=phrasing.seeds(list(seeds), seeds))
    named = followed if followed in grew else grew[0]
    values = {"grew": phrasing.seeds(grew, seeds), "seed": named, "largest": Num(max(shares[named]), ".0%")}
    shrank = [s for s in seeds if s not in grew]
    if not shrank:
        return choice("every", GROWTH, **values)
    return choice("some", GROWTH, **values, shrank=phrasing.seeds(shrank, seeds))


TRUSTED = 2
"""How many training prompts an over-rated answer must be right for to say the judge saw it labelled right often."""


TRUST = ("every", "some_never", "some_few")
"""The cases of :func:`trusted`: the over-rated answer is the right answer of many training prompts on every seed;
or on some, and of none on the others; or on some, and of a few at most on the others."""


def trusted(right_for: dict[int, int], seeds: tuple[int, ...]) -> dict:
    """Why the judge trusts ``rm``'s commonest over-rated answer (chapter 5): on how many training prompts it is right.

    The seeds where it is the right answer of at least :data:`TRUSTED`
    training prompts, with how many; the other seeds with what they leave.
    ValueError when it holds on no seed.
    """
    often = [s for s in seeds if right_for[s] >= TRUSTED]
    if not often:
        raise ValueError(f"the over-rated answer is right for fewer than {TRUSTED} training prompts on every seed")
    values = {"count": phrasing.span([right_for[s] for s in often], "d"), "often": phrasing.seeds(often, seeds)}
    rare = [s for s in seeds if s not in often]
    if not rare:
        return choice("every", TRUST, **values)
    counts = sorted({right_for[s] for s in rare})
    case = "some_never" if counts == [0] else "some_few"
    return choice(case, TRUST, **values, rare=phrasing.seeds(rare, seeds), few=phrasing.span(counts, "d"))


def by_value(values: dict[int, object], seeds: tuple[int, ...], show=str) -> str:
    """Values seed by seed, each value once: "16 on seed 0 and 4 on seeds 1 and 2", or "4 on every seed"."""
    where: dict[str, list[int]] = {}
    for s, v in values.items():
        where.setdefault(show(v), []).append(s)
    return phrasing.listing([f"{v} on {phrasing.seeds(w, seeds)}" for v, w in where.items()])


def judge_on_seed(judge: dict, seed: int) -> dict:
    """What RL against one seed's judge did, as the judge sections of chapter 5 give it for the seed they follow:
    ``rm``'s judge score (the proxy) and exact reward (the gold) at its first and last checkpoint, the gold reward
    of ``rm`` and of ``rm-kl`` averaged over their checkpoints, the over-rated share of ``rm``'s first and last
    batch, and, for the commonest over-rated answer of its last batch, the prompts it was written on and the judge's
    mean score for it."""
    rm, kl, over = judge["rm"], judge["kl"], judge["over"]["share"]
    return {
        "seed": seed,
        "proxy_first": Num(rm["proxy"][0]),
        "proxy_last": Num(rm["proxy"][-1]),
        "gold_first": Num(rm["gold"][0]),
        "gold_last": Num(rm["gold"][-1]),
        "mean_gold_rm": Num(float(np.mean(rm["gold"]))),
        "mean_gold_kl": Num(float(np.mean(kl["gold"]))),
        "over_first": Num(over[0], ".0%"),
        "over_last": Num(over[-1], ".0%"),
        "top_prompts": judge["over"]["top"][0][3],
        "top_score": Num(judge["over"]["top"][0][2]),
    }


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
        "rm_fell": phrasing.seeds(fell, seeds),
        "judge_on_seed": judge_on_seed(judges[shown_seed(seeds)], shown_seed(seeds)),
        "trusted": trusted({s: judges[s]["over"]["top"][0][4] for s in seeds}, seeds),
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
        "takeover": takeover(hack, taken, seeds),
        "taken": phrasing.seeds(taken, seeds),
        "slow_taken": phrasing.seeds(slow_taken, seeds),
        "slow_growth": slow_growth({s: hack[s]["slow"]["share"] for s in seeds}, seeds, shown),
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
            "base_rate": Num(h["base_rate"], ".1%"),
            "favourites": favourites(hack, taken, seeds),
            "takeover_by": max(hack[s]["takeover"] for s in taken),
            "top": repr(top["completion"]),
            "top_count": top["count"],
            "spellings": h["spellings"],
            "listed": listed(len(h["wrong"]), h["spellings"]),
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
            "reward_first": Num(h["report"]["train_reward"][0], ".3f"),
            "reward_last": Num(h["report"]["train_reward"][-1], ".3f"),
            "heldout_last": Num(h["report"]["heldout"][-1]),
        }
    )
    return out
