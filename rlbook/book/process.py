"""Chapter 11's facts (chapters/11-process-reward-model.qmd): a learned step scorer beside the exact rules.

Every number of the chapter and the data its figure draws, from each seed's
measurements (:mod:`rlbook.analysis.process_scorer`): the step scorer judged
step by step, best-of-n with four judges, and the three RL runs that differ
only in their reward.

Its claims are in :mod:`rlbook.book._process_claims`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from rlbook.analysis import process_scorer as ps
from rlbook.analysis.process_scorer import JUDGES, KINDS, NS, RUNS, SHOWN_ANSWERS
from rlbook.book import phrasing, store
from rlbook.book._process_claims import CLAIMS, ENDED, RULE_GAP  # noqa: F401  (rlbook.book reads CLAIMS here)
from rlbook.book._shown import shown_seed
from rlbook.book.claims import held_phrase
from rlbook.book.facts import Facts, dumps
from rlbook.book.needs import Need, on_seeds
from rlbook.core.process_model import step_labels
from rlbook.runs import DEFAULT_THREADS
from rlbook.runs import process_model as pm
from rlbook.runs.catalogue import WORKED

PAGE = "chapters/11-process-reward-model.qmd"


def needs(seeds: tuple[int, ...]) -> tuple[Need, ...]:
    return on_seeds(("worked-base", "worked"), seeds)


def seed_part(seed: int) -> Facts:
    """One seed's measurements (:func:`rlbook.analysis.process_scorer.measure`), kept in the facts cache on their own.

    Keyed on the measuring module's code, not on this one's: rewording a
    claim or a sentence's numbers trains no scorer again. The audit reads
    each seed in several groups (its triples, each seed alone for the
    exercises), and the prefetch computes each seed's part as a task of its
    own; kept so, a seed's scorer and runs train once.
    """
    needs = on_seeds(("worked-base", "worked"), (seed,))
    key = store.facts_key(ps.__name__, (seed,), DEFAULT_THREADS, needs)
    entry = store.entry_path("process-scorer", (seed,), DEFAULT_THREADS, key)
    return store.fetch(entry, needs, DEFAULT_THREADS, lambda: dumps(ps.measure(seed)))


def _each(by_seed: dict, seeds: tuple[int, ...], value, fmt: str = ".3f") -> str:
    """One value per seed, in seed order, for a sentence."""
    return phrasing.in_order([format(value(by_seed[s]), fmt) for s in seeds])


def _best(judge: str, n: int):
    """The best-of-n accuracy of ``judge`` at ``n``, read from one seed's measurements."""
    return lambda d: d["best_of_n"][judge][NS.index(n)]


def _shown_wrong_words(seed_facts: Mapping[str, Any]) -> str:
    """How many of the answers the page shows hold a step the exact rule calls wrong, in words ("all four")."""
    shown = seed_facts["runs"]["prm"]["written"]["shown"]
    wrong = sum(not all(step_labels(a["prompt"], a["answer"])) for a in shown)
    return phrasing.share(wrong, len(shown))


def _answers(seed_facts: dict) -> list[dict]:
    """``prm``'s last answers the page shows: the scorer's probability and the exact rule's label of each step."""
    rows = []
    for a in seed_facts["runs"]["prm"]["written"]["shown"]:
        labels = step_labels(a["prompt"], a["answer"])
        rows.append(
            {
                "prompt": f"`{a['prompt']}`",
                "answer": f"`{a['answer']}`",
                "scorer's P(right), step by step": ", ".join(f"{p:.2f}" for p in a["steps"]),
                "exact rule": ", ".join("right" if ok else "wrong" for ok in labels),
            }
        )
    return rows


def _exact_words(by_seed: dict, seeds: tuple[int, ...]) -> str:
    """How the exact process rule picked at the largest n beside the outcome verifier (the ceiling), worded as it
    came out: as well on every seed (equal to the page's three decimals), or each seed's two values."""
    n = max(NS)
    exact = [format(_best("process-exact", n)(by_seed[s]), ".3f") for s in seeds]
    outcome = [format(_best("outcome", n)(by_seed[s]), ".3f") for s in seeds]
    where = f"at n = {n} on {'seed' if len(seeds) == 1 else 'seeds'} {phrasing.listing(list(seeds))}"
    if exact == outcome:
        return f"The exact process rule picked as well as the ceiling, {phrasing.in_order(outcome)} {where}"
    return (
        f"The exact process rule picked almost as well, {phrasing.in_order(exact)} against the ceiling's "
        f"{phrasing.in_order(outcome)} {where}"
    )


def _ended_words(by_seed: dict, seeds: tuple[int, ...]) -> str:
    """Whether ``prm``'s last answers still ended with the end mark, worded as it came out: on every seed, on none,
    or on some and not others (the finding ``prm-stops-ending``)."""
    unended = [s for s in seeds if by_seed[s]["runs"]["prm"]["written"]["ended"] < ENDED]
    if not unended:
        least = min(by_seed[s]["runs"]["prm"]["written"]["ended"] for s in seeds)
        return f"At least {math.floor(100 * least)}% of its answers still ended with the end mark {held_phrase(seeds, seeds)}"
    if len(unended) == len(seeds):
        return f"Fewer than half of its answers still ended with the end mark {held_phrase(seeds, seeds)}"
    return (
        "Whether its answers still ended with the end mark differed by seed: fewer than half of them did "
        + held_phrase(unended, seeds)
    )


def _hack_words(by_seed: dict, seeds: tuple[int, ...]) -> str:
    """What ``prm``'s last answers were, in a sentence or two per case that happened: seeds whose answers mostly
    never ended (read at a place the scorer's training answers almost never reached), and seeds whose answers
    mostly ended and were wrong all the same."""
    ended = {s: by_seed[s]["runs"]["prm"]["written"]["ended"] >= ENDED for s in seeds}
    unended, words = [s for s in seeds if not ended[s]], []
    if unended:
        counts = phrasing.in_order([str(by_seed[s]["training"]["unended"]) for s in unended])
        words.append(
            "An answer that never ends has one step by the rule above, its whole text, which the scorer reads at the "
            "last character the budget allowed: a place its training answers almost never reached (on "
            f"{phrasing.seeds(unended, seeds)}, {counts} of the {pm.SCORER.answers:,} did). Its number there is a "
            "guess, and the run found where the guess was high."
        )
    finished = [s for s in seeds if ended[s]]
    if finished:
        scores = phrasing.in_order([f"{by_seed[s]['runs']['prm']['written']['score']:.2f}" for s in finished])
        where = (
            "They"  # every seed: the sentence before says that at least half of them ended
            if len(finished) == len(seeds)
            else f"On {phrasing.seeds(finished, seeds)}, where at least half of its answers ended, they"
        )
        words.append(
            f"{where} were wrong all the same, with a mean score of {scores}: wrong steps that the scorer could not "
            "tell from right ones."
        )
    return " ".join(words)


def _tables(by_seed: dict, seeds: tuple[int, ...]) -> dict[str, list[dict]]:
    """The chapter's tables, one row per seed (and set of prompts, judge or run)."""
    judged = [
        {
            "seed": s,
            "prompts": "training" if part == "train" else "held-out",
            **{kind: f"{by_seed[s]['judged'][part][kind]['auc']:.2f}" for kind in KINDS},
        }
        for s in seeds
        for part in ("train", "heldout")
    ]
    best = [
        {"seed": s, "judge": judge, **{f"n = {n}": f"{acc:.3f}" for n, acc in zip(NS, by_seed[s]["best_of_n"][judge])}}
        for s in seeds
        for judge in JUDGES
    ]
    runs = [
        {
            "run": run,
            "seed": s,
            "right": f"{w['right']:.3f}",
            "pass the rule": f"{w['process']:.3f}",
            "end": f"{w['ended']:.0%}",
            "scorer's mean score": f"{w['score']:.2f}",
        }
        for run in RUNS
        for s in seeds
        for w in [by_seed[s]["runs"][run]["written"]]
    ]
    labels = [
        {
            "seed": s,
            "answers": f"{by_seed[s]['training']['answers']:,}",
            "cut off": by_seed[s]["training"]["unended"],
            "steps": f"{by_seed[s]['training']['steps']:,}",
            **{f"{kind} right": f"{by_seed[s]['training']['right'][kind]:.0%}" for kind in KINDS},
        }
        for s in seeds
    ]
    return {
        "labels": labels,
        "judged": judged,
        "best_of_n": best,
        "runs": runs,
        "answers": _answers(by_seed[shown_seed(seeds)]),
    }


def compute(seeds: tuple[int, ...]) -> dict[str, Any]:
    """Every seed's measurements, the page's numbers, and the figure's data."""
    by_seed = {s: seed_part(s) for s in seeds}
    shown = shown_seed(seeds)
    d = by_seed[shown]
    return {
        "seeds": list(seeds),
        "shown": shown,
        "by_seed": by_seed,
        "seed_words": phrasing.listing(list(seeds)),
        "answers": f"{pm.SCORER.answers:,}",
        "updates": pm.SCORER.steps,
        "batch": pm.SCORER.batch,
        "steps_labelled": f"{d['training']['steps']:,}",
        "n_max": max(NS),
        "rl_steps": WORKED.steps,
        "heldout_auc": _each(by_seed, seeds, lambda e: e["judged"]["heldout"]["units"]["auc"], ".2f"),
        "tens_auc": _each(by_seed, seeds, lambda e: e["judged"]["heldout"]["tens"]["auc"], ".2f"),
        "exact_words": _exact_words(by_seed, seeds),
        "bon_min16": _each(by_seed, seeds, _best("prm-min", max(NS))),
        "worked_end": _each(by_seed, seeds, lambda e: e["runs"]["worked"]["accuracy"][-1]),
        "exact_end": _each(by_seed, seeds, lambda e: e["runs"]["process-exact"]["accuracy"][-1]),
        "rule_gap": RULE_GAP,
        "prm_end": _each(by_seed, seeds, lambda e: e["runs"]["prm"]["accuracy"][-1]),
        "ended_words": _ended_words(by_seed, seeds),
        "hack_words": _hack_words(by_seed, seeds),
        "prm_reward_end": _each(by_seed, seeds, lambda e: e["runs"]["prm"]["reward"][-1], ".2f"),
        "tables": _tables(by_seed, seeds),
        "exercise": {run: d["runs"][run]["written"]["shown"] for run in RUNS},
        "shown_wrong": _shown_wrong_words(d),
        "shown_count": phrasing.number_word(SHOWN_ANSWERS),
        "figures": {
            "runs": {run: {s: by_seed[s]["runs"][run] for s in seeds} for run in RUNS},
            "best_of_n": {s: by_seed[s]["best_of_n"] for s in seeds},
            "ns": list(NS),
        },
    }
