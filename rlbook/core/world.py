"""The tiny world: addition prompts, the character vocabulary and the fixed splits.

Chapter 1 introduces it. A *single-step* task asks ``U:a+b?|A:`` and expects the
digits of ``a + b`` followed by the end-of-turn mark ``EOT``. The *multi-step*
task of chapter 2 asks ``U:a+b+c?|A:`` and expects two partial sums separated
by a comma, ``s1,s2`` then ``EOT``, where ``s1 = a + b`` and ``s2 = s1 + c``.
The *worked* task of chapter 7 asks ``#a+b=`` in plain text (the end mark of
a line before, then the sum), with ``a`` and ``b`` from 10 to 99, and takes
its answer in either of two styles: direct, ``85#``, or worked, the columns
written out before the sum, ``7+8=15,4+3+1=8;85#`` (:class:`WorkedTask`).

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

SEPARATOR = ";"
"""The worked world's mark between the working and the final number (``7+8=15,4+3+1=8;85#``)."""

TOKENS: tuple[str, ...] = VOCAB + (SEPARATOR,)
"""Every character any world uses, in token-id order: :data:`VOCAB`, then the worked world's ``;``.

The chat worlds' policies read and write :data:`VOCAB` only (21 characters);
the worked world's policy has one more output, ``;`` (:func:`vocab_size`).
The ids of the first 21 are the same in both."""

STOI: dict[str, int] = {ch: i for i, ch in enumerate(TOKENS)}
EOT_ID: int = STOI[EOT]

WORLDS = ("single", "multi", "worked")
BUDGET = 4
"""The token budget of an answer in the single-step world: two digits and the end mark, and one to spare.

The default wherever the book samples a+b answers (sampling, evaluation, the RL loop, the analyses); the
multi-step world's runs set 8, the worked world's :data:`WORKED_BUDGET`."""
WORKED_BUDGET = 24
"""The token budget of an answer in the worked world: the longest worked answer (``9+9=18,9+9+1=19;198#``,
20 characters) and four to spare."""
TEMPLATES = {"single": "U:a+b?|A:", "multi": "U:a+b+c?|A:", "worked": "#a+b="}
"""The prompt template of each world, as the run record and the evaluations name it."""
SINGLE_PROMPT = re.compile(r"U:([0-9])\+([0-9])\?\|A:")
MULTI_PROMPT = re.compile(r"U:([0-9])\+([0-9])\+([0-9])\?\|A:")
PLAIN_PROMPT = re.compile(r"#([1-9][0-9])\+([1-9][0-9])=")
STYLES = ("direct", "worked")
"""The worked world's two answer styles: the sum alone, or the columns written out before it."""
SPLIT_SEED = 2024
"""The splits are fixed for the whole book: they never depend on a run's seed."""


def encode(text: str) -> list[int]:
    """Token ids of ``text``; raises ValueError naming the first unknown character."""
    try:
        return [STOI[ch] for ch in text]
    except KeyError as err:
        raise ValueError(f"character {err.args[0]!r} is not in the vocabulary {''.join(TOKENS)!r}") from None


def decode(ids) -> str:
    """The text of a sequence of token ids."""
    return "".join(TOKENS[int(i)] for i in ids)


def vocab_size(world: str) -> int:
    """How many characters a policy of ``world`` reads and writes: 21 in the chat worlds, 22 in the worked one."""
    check_world(world)
    return len(TOKENS) if world == "worked" else len(VOCAB)


def check_world(world: str) -> None:
    """Raise ValueError naming the worlds when ``world`` is not one of :data:`WORLDS`."""
    if world not in WORLDS:
        raise ValueError(f"unknown world {world!r}; choose one of {WORLDS}")


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


def column(a: int, b: int, carry: int) -> str:
    """One column of a worked sum: ``7+8=15``, or ``4+3+1=8`` when a carry of 1 comes in."""
    return f"{a}+{b}" + (f"+{carry}" if carry else "") + f"={a + b + carry}"


@dataclass(frozen=True)
class WorkedTask(Task):
    """A task of the worked world (chapter 7): ``#a+b=`` in plain text, a and b from 10 to 99, answered in ``style``.

    The prompt starts with the end mark, as every line of the pretraining
    stream follows one (:func:`worked_line`): it tells the policy where the
    sum begins, which it needs to copy the sum's digits into the working. (In
    a trial while this world was built, a policy pretrained for 1,000 steps
    on windows that started anywhere wrote about three times as many right
    worked answers to the held-out sums when their prompts began with it.)

    ``style`` is one of :data:`STYLES` and decides only :attr:`completion`,
    the demonstration SFT shows: ``85#`` (direct) or ``7+8=15,4+3+1=8;85#``
    (worked: the units column, the tens column with the carry, then the sum
    after :data:`SEPARATOR`). The verifier reads the number after the last
    ``;`` whatever the style, so it never rewards the working itself.
    """

    style: str = "direct"

    def __post_init__(self) -> None:
        if len(self.operands) != 2 or not all(10 <= x <= 99 for x in self.operands):
            raise ValueError(f"a worked task adds two numbers from 10 to 99, got {self.operands}")
        if self.style not in STYLES:
            raise ValueError(f"unknown style {self.style!r}; choose one of {STYLES}")

    @property
    def world(self) -> str:
        return "worked"

    @property
    def prompt(self) -> str:
        return f"{EOT}{self.name}="

    @property
    def working(self) -> str:
        """The columns written out, units first: ``7+8=15,4+3+1=8`` for 47+38."""
        (a, b), carry = self.operands, int(self.operands[0] % 10 + self.operands[1] % 10 >= 10)
        return column(a % 10, b % 10, 0) + "," + column(a // 10, b // 10, carry)

    @property
    def completion(self) -> str:
        """The right answer in this task's style, ending with the end-of-turn mark."""
        answer = str(self.answer) + EOT
        return answer if self.style == "direct" else self.working + SEPARATOR + answer


def parse_prompt(prompt: str) -> Task | None:
    """The task a prompt asks, or None when the prompt is in none of the worlds' formats."""
    if not isinstance(prompt, str):
        return None
    for pattern in (SINGLE_PROMPT, MULTI_PROMPT):
        match = pattern.fullmatch(prompt)
        if match:
            return Task(tuple(int(g) for g in match.groups()))
    match = PLAIN_PROMPT.fullmatch(prompt)
    return WorkedTask((int(match[1]), int(match[2]))) if match else None


def answer_style(completion: str) -> str:
    """The style an answer of the worked world is written in: ``"worked"`` when it writes any ``+``
    (a column), ``"direct"`` otherwise, whether or not it is right or ends (chapter 7)."""
    return "worked" if "+" in completion else "direct"


def all_tasks(world: str = "single") -> list[Task]:
    """Every task of a world: 100 pairs or 1,000 triples of digits 0-9, or 8,100 pairs from 10 to 99."""
    check_world(world)
    if world == "single":
        return [Task((a, b)) for a in range(10) for b in range(10)]
    if world == "multi":
        return [Task((a, b, c)) for a in range(10) for b in range(10) for c in range(10)]
    return [WorkedTask((a, b)) for a in range(10, 100) for b in range(10, 100)]


SPLIT_SIZES = {
    "single": {"sft": 30, "rl_extra": 30, "validation": 20, "test": 20},
    "multi": {"sft": 60, "rl_extra": 60, "validation": 50, "test": 50},
    "worked": {"sft": 40, "rl_extra": 260, "validation": 150, "test": 150},
}
SPLITS = ("sft", "train", "heldout", "validation", "test", "all")


def split(name: str, world: str = "single") -> list[Task]:
    """A fixed split of a world's tasks.

    ``sft`` (single: 30) is inside ``train`` (single: 60, the RL prompts);
    ``heldout`` is never trained on and is the union of ``validation``
    (checkpoint selection, chapter 5) and ``test`` (scoring the pick).
    In the multi-step world ``all`` is every triple, and the remaining triples
    belong to no split; so in the worked world, where the 7,500 pairs of no
    split are seen in pretraining only, and the 300 held-out pairs never are
    (:func:`worked_line`).
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
        cuts[part] = order[start : start + sizes[part]]
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


COLUMN_SHARE = 0.3
"""The share of one-column lines (``7+8=15#``, ``4+3+1=8#``, half of them with a carry) in the worked world's
pretraining stream; the other lines are sums of two numbers, half worked and half direct (:func:`worked_line`)."""


def worked_line(rng: random.Random, excluded: frozenset[tuple[int, int]]) -> str:
    """One line of the worked world's pretraining stream, ending with the end-of-turn mark (the stream starts with one).

    With probability :data:`COLUMN_SHARE` one column (digits 0-9, with a
    carry half the time), otherwise a sum a+b of a pair outside ``excluded``
    (the held-out pairs), written worked or direct with equal probability:
    ``4+3+1=8#``, ``47+38=7+8=15,4+3+1=8;85#`` or ``47+38=85#``. So the
    pretrained policy can write both styles, and can work out a held-out
    sum column by column but has never seen its answer.
    """
    if rng.random() < COLUMN_SHARE:
        return column(rng.randrange(10), rng.randrange(10), int(rng.random() < 0.5)) + EOT
    while True:
        pair = (rng.randrange(10, 100), rng.randrange(10, 100))
        if pair not in excluded:
            break
    task = WorkedTask(pair, STYLES[int(rng.random() < 0.5)])
    return task.prompt.removeprefix(EOT) + task.completion
