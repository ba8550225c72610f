"""Chapter 2's outcome-dependent wording (chapters/02-outcome-process-rewards.qmd), for its facts module
(:mod:`rlbook.book.rewards`).

Each function turns an outcome of the runs into words that read right
whatever the outcome: a share said as "every one" only when it is all, a
count of zero said in words, a cell of the disagreement matrix described by
what the samples put in it, and the seeds on which a measure went up or
down. ``tests/unit/book/test_rewards.py`` tries each on every outcome.
Private to the chapter: :func:`rlbook.book.topics` skips modules whose name
starts with an underscore.
"""

from __future__ import annotations

from rlbook.book import phrasing
from rlbook.book._shown import shown_seed


def _how_many(share: float) -> str:
    """A share as the words that open a clause: "every one", "almost every one" (rounds to 100 %), "97 %"."""
    if share == 1.0:
        return "every one"
    return "almost every one" if f"{share:.0%}" == "100%" else f"{share:.0%}"


def each_of(clause: str, share: float) -> str:
    """``clause`` opened by how much of it: "every one of the plain sums", "97% of the plain sums"."""
    return f"{_how_many(share)} of {clause}"


def format_clause(share: float) -> str:
    """How many of the pretrained policy's rejections fail on format, as a clause with its verb agreeing."""
    many = _how_many(share)
    if "every one" in many:
        return f"{many} of its rejections is a failure of format"
    return f"{many} of its rejections are failures of format"


def pretrained_reward(row: dict) -> dict:
    """What the pretrained checkpoint earned, said without offering a zero as a count."""
    if row["accepted"] == 0:
        return {"earns": "nothing", "detail": f"not one of its {row['samples']:,} answers is accepted"}
    return {
        "earns": "almost nothing",
        "detail": f"{row['accepted']:,} of its {row['samples']:,} answers are "
        f"accepted, an expected reward of {row['expected_reward']:.2f}",
    }


def valid_end_sentence(by_seed: dict, seeds: tuple[int, ...]) -> str:
    """What the book's samples put in the cell "every step valid, but no reward", seed by seed."""
    sizes = {s: by_seed[s]["valid_end"]["malformed"] + by_seed[s]["valid_end"]["incomplete"] for s in seeds}
    filled = [s for s in seeds if sizes[s]]
    if not filled:
        return (
            "In the book's samples the cell is empty on every seed: whenever this policy writes two valid "
            "steps, it also ends the answer as the format asks."
        )
    shown = by_seed[shown_seed(seeds)]["valid_end"]
    if not sizes[shown_seed(seeds)]:
        return (
            f"The shown sample leaves the cell empty, but the samples of {phrasing.seeds(filled, seeds)} "
            "do not: a policy that runs on past its answer fills it."
        )
    third = shown["extra_number"]
    tail = (
        f"; in {phrasing.share(third, sizes[shown_seed(seeds)])} of them the policy went on to write a third number, as if "
        "continuing a chain"
        if third
        else ""
    )
    return (
        f"In the shown sample {phrasing.number_word(sizes[shown_seed(seeds)])} rollouts land here "
        f"({shown['malformed']} malformed, {shown['incomplete']} stopped by the budget){tail}."
    )


def directions(starts: list[float], ends: list[float], seeds: tuple[int, ...]) -> str:
    """Which seeds ended above their start and which below: "up on seeds 0 and 1 and down on seed 2"."""
    up = [s for s, a, b in zip(seeds, starts, ends) if b > a]
    down = [s for s, a, b in zip(seeds, starts, ends) if b < a]
    parts = [
        f"up on {phrasing.seeds(up, seeds)}" if up else "",
        f"down on {phrasing.seeds(down, seeds)}" if down else "",
    ]
    return " and ".join(p for p in parts if p) or f"level on {phrasing.seeds(seeds, seeds)}"
