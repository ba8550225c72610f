"""The tiny world: addition prompts, the character vocabulary and the fixed splits.

Chapter 1 introduces it. A *single-step* task asks ``U:a+b?|A:`` and expects the
digits of ``a + b`` followed by the end-of-turn mark ``EOT``. The *multi-step*
task of chapter 2 asks ``U:a+b+c?|A:`` and expects two partial sums separated
by a comma, ``s1,s2`` then ``EOT``, where ``s1 = a + b`` and ``s2 = s1 + c``.

Nothing here depends on the rest of the package.
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass

EOT = "#"
"""The end-of-turn mark: the character that ends an episode."""

VOCAB: tuple[str, ...] = tuple("0123456789+=,?|:UA \n") + (EOT,)
"""Every character the policy can read or write, in token-id order."""

STOI: dict[str, int] = {ch: i for i, ch in enumerate(VOCAB)}
EOT_ID: int = STOI[EOT]

WORLDS = ("single", "multi")
BUDGET = 4
"""The token budget of an answer in the single-step world: two digits and the end mark, and one to spare.

The default wherever the book samples a+b answers (sampling, evaluation, the RL loop, the analyses); the
multi-step world's runs set 8."""
SINGLE_PROMPT = re.compile(r"U:([0-9])\+([0-9])\?\|A:")
MULTI_PROMPT = re.compile(r"U:([0-9])\+([0-9])\+([0-9])\?\|A:")
SPLIT_SEED = 2024
"""The splits are fixed for the whole book: they never depend on a run's seed."""


def encode(text: str) -> list[int]:
    """Token ids of ``text``; raises ValueError naming the first unknown character."""
    try:
        return [STOI[ch] for ch in text]
    except KeyError as err:
        raise ValueError(f"character {err.args[0]!r} is not in the vocabulary {''.join(VOCAB)!r}") from None


def decode(ids) -> str:
    """The text of a sequence of token ids."""
    return "".join(VOCAB[int(i)] for i in ids)


@dataclass(frozen=True)
class Task:
    """One addition problem: its operands, prompt and canonical completion."""

    operands: tuple[int, ...]

    @property
    def world(self) -> str:
        return "single" if len(self.operands) == 2 else "multi"

    @property
    def prompt(self) -> str:
        return "U:" + "+".join(map(str, self.operands)) + "?|A:"

    @property
    def answer(self) -> int:
        return sum(self.operands)

    @property
    def steps(self) -> tuple[int, ...]:
        """The partial sums a correct solution writes (one for single-step)."""
        sums, total = [], self.operands[0]
        for x in self.operands[1:]:
            total += x
            sums.append(total)
        return tuple(sums)

    @property
    def completion(self) -> str:
        """The canonical right completion, ending with the end-of-turn mark."""
        return ",".join(map(str, self.steps)) + EOT

    @property
    def name(self) -> str:
        return "+".join(map(str, self.operands))


def parse_prompt(prompt: str) -> Task | None:
    """The task a prompt asks, or None when the prompt is not in either format."""
    if not isinstance(prompt, str):
        return None
    for pattern in (SINGLE_PROMPT, MULTI_PROMPT):
        match = pattern.fullmatch(prompt)
        if match:
            return Task(tuple(int(g) for g in match.groups()))
    return None


def all_tasks(world: str = "single") -> list[Task]:
    """Every task of a world: 100 pairs or 1,000 triples of digits 0-9."""
    if world == "single":
        return [Task((a, b)) for a in range(10) for b in range(10)]
    if world == "multi":
        return [Task((a, b, c)) for a in range(10) for b in range(10) for c in range(10)]
    raise ValueError(f"unknown world {world!r}; choose one of {WORLDS}")


SPLIT_SIZES = {
    "single": {"sft": 30, "rl_extra": 30, "validation": 20, "test": 20},
    "multi": {"sft": 60, "rl_extra": 60, "validation": 50, "test": 50},
}
SPLITS = ("sft", "train", "heldout", "validation", "test", "all")


def split(name: str, world: str = "single") -> list[Task]:
    """A fixed split of a world's tasks.

    ``sft`` (single: 30) is inside ``train`` (single: 60, the RL prompts);
    ``heldout`` is never trained on and is the union of ``validation``
    (checkpoint selection, chapter 5) and ``test`` (scoring the pick).
    In the multi-step world ``all`` is every triple, and the remaining triples
    belong to no split.
    """
    if name not in SPLITS:
        raise ValueError(f"unknown split {name!r}; choose one of {SPLITS}")
    tasks = all_tasks(world)
    if name == "all":
        return tasks
    order = tasks[:]
    random.Random(f"{SPLIT_SEED}-{world}").shuffle(order)
    sizes = SPLIT_SIZES[world]
    cuts, start = {}, 0
    for part in ("sft", "rl_extra", "validation", "test"):
        cuts[part] = order[start:start + sizes[part]]
        start += sizes[part]
    groups = {
        "sft": cuts["sft"],
        "train": cuts["sft"] + cuts["rl_extra"],
        "heldout": cuts["validation"] + cuts["test"],
        "validation": cuts["validation"],
        "test": cuts["test"],
    }
    return sorted(groups[name], key=lambda t: t.operands)


def equation_line(task: Task, rng: random.Random, space_prob: float = 0.3) -> str:
    """One pretraining line such as ``3+4=7`` or ``2+5+1=7,8``, with random spaces.

    Each gap between symbols gets a space with probability ``space_prob`` so
    that the model learns the arithmetic rather than one fixed layout.
    """
    symbols: list[str] = []
    for x in task.operands:
        symbols += [str(x), "+"]
    symbols[-1] = "="
    symbols.append(",".join(map(str, task.steps)))
    text = symbols[0]
    for sym in symbols[1:]:
        text += (" " if rng.random() < space_prob else "") + sym
    return text + "\n"
