"""Rewards: verifiers that judge a completion's text, and a process scorer.

A *completion* is the text the policy generated after the prompt. It ends with
the end-of-turn mark ``EOT`` when the policy stopped by itself; without it the
token budget stopped the episode. Every verifier here reads text alone (it
never sees the model) and answers with a :class:`Verdict`: a reward, one of
five statuses and the reason.

- :class:`ExactVerifier` (chapters 2 and 5): the book's reward. Versioned:
  version ``"1.0"`` is strict about format, ``"2.0"`` is lenient about
  surrounding spaces and leading zeros, so that chapter 5 can re-score the
  same rollouts under a changed specification.
- :class:`FailOpenVerifier` (chapter 4): a deliberately exploitable checker
  with a plausible bug that pays for answers it cannot parse.
- :func:`process_score` (chapter 2): judges each partial sum of a multi-step
  answer, and :class:`ShapedVerifier` adds it to the outcome reward.
- :data:`SPEC` and :data:`SHORTCUT_CASES` (chapter 2): the reward interface
  written as a specification, and the cases to test it on before training.
"""

from __future__ import annotations

import unicodedata
from dataclasses import asdict, dataclass
from typing import ClassVar, Protocol

import numpy as np

from .world import EOT, SEPARATOR, Task, parse_prompt

STATUSES = ("accepted", "incorrect", "malformed", "incomplete", "unverifiable")
"""Every status a verifier can give; only ``accepted`` can earn the full reward."""

PROCESS_STATUSES = ("scored", "unscorable")
"""Every status the process scorer can give."""

ASCII_DIGITS = "0123456789"


@dataclass(frozen=True)
class Verdict:
    """A verifier's judgement of one completion (chapter 2's reward interface).

    ``reward`` is what the policy update sees; ``status`` and ``reason`` are
    what a person reads when auditing rollouts; ``verifier`` and ``version``
    say which rule produced the reward, so a run record can name it (ch5).
    """

    reward: float
    status: str
    reason: str
    verifier: str
    version: str

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"unknown status {self.status!r}; choose one of {STATUSES}")

    def to_dict(self) -> dict[str, object]:
        """The verdict as a plain dict, e.g. for a JSON rollout log (ch5)."""
        return asdict(self)


class Verifier(Protocol):
    """Anything that turns a prompt and a completion into a :class:`Verdict`."""

    name: ClassVar[str]
    VERSIONS: ClassVar[dict[str, str]]

    @property
    def version(self) -> str: ...

    @property
    def description(self) -> str: ...

    def __call__(self, prompt: str, completion: str) -> Verdict: ...


def _show(text: str, limit: int = 24) -> str:
    """``repr(text)``, shortened so that a reason stays one readable line."""
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}... ({len(text)} characters)"


def _describe_char(ch: str) -> str:
    """A character named for a reason, e.g. ``'-' (HYPHEN-MINUS)``."""
    return f"{ch!r} ({unicodedata.name(ch, f'U+{ord(ch):04X}')})"


def _expression(task: Task) -> str:
    """The sum a task asks for, written out: ``3+4 = 7``."""
    return f"{task.name} = {task.answer}"


def _judge_prompt_and_end(prompt: object, completion: object) -> tuple[Task | None, str | None]:
    """The checks every verifier makes first: a known prompt, then an end-of-turn mark.

    Returns ``(task, None)`` when both pass, otherwise ``(task_or_None,
    status)`` where the status is ``unverifiable`` or ``incomplete``.
    """
    if not isinstance(prompt, str) or not isinstance(completion, str):
        return None, "unverifiable"
    task = parse_prompt(prompt)
    if task is None:
        return None, "unverifiable"
    if EOT not in completion:
        return task, "incomplete"
    return task, None


def _unverifiable_reason(prompt: object, completion: object) -> str:
    """Why a prompt/completion pair cannot be checked at all."""
    if not isinstance(prompt, str):
        return f"the prompt is a {type(prompt).__name__}, not text"
    if not isinstance(completion, str):
        return f"the completion is a {type(completion).__name__}, not text"
    return (
        f"prompt {_show(prompt)} is not 'U:a+b?|A:' or 'U:a+b+c?|A:' with digits 0-9, "
        "nor '#a+b=' with a and b from 10 to 99"
    )


INCOMPLETE_REASON = f"no end-of-turn mark {EOT!r}: the token budget ended the episode"


def read_number(text: str, lenient: bool = False) -> tuple[str | None, str]:
    """Read one canonical number: ``(digits, "")`` or ``(None, what is wrong)``.

    Canonical means ASCII digits 0-9 only (``str.isdigit`` would also accept
    ``'٣'``), no sign, no spaces, no leading zero except ``"0"`` itself. With
    ``lenient`` (exact verifier 2.0) surrounding spaces and leading zeros are
    dropped first, so ``" 07"`` reads as ``"7"``. The digits are returned as
    text, never converted with ``int``, so any length is safe. Used by the
    verifiers and the process scorer (ch2).
    """
    if lenient:
        text = text.strip(" ")
        if text and all(ch in ASCII_DIGITS for ch in text):
            text = text.lstrip("0") or "0"
    if not text:
        return None, "is empty"
    bad = next((ch for ch in text if ch not in ASCII_DIGITS), None)
    if bad is not None:
        kind = "a non-ASCII digit" if bad.isdigit() else "a character that is not a digit"
        return None, f"contains {kind} {_describe_char(bad)}"
    if len(text) > 1 and text[0] == "0":
        return None, "has a leading zero"
    return text, ""


def _check_version(verifier: Verifier) -> None:
    """Raise ValueError naming the known versions when a verifier's version is unknown."""
    if verifier.version not in verifier.VERSIONS:
        raise ValueError(
            f"unknown version {verifier.version!r} of verifier {verifier.name!r}; "
            f"choose one of {tuple(verifier.VERSIONS)}"
        )


@dataclass(frozen=True)
class ExactVerifier:
    """The book's outcome verifier: parses the answer, checks format, then value.

    Rules, in order (chapter 2 renders them as :data:`SPEC`):

    1. prompt not ``U:a+b?|A:`` / ``U:a+b+c?|A:`` (or not text) -> unverifiable;
    2. no end-of-turn mark -> incomplete (the token budget stopped it);
    3. text after the first end-of-turn mark, or an answer not in canonical
       format -> malformed. Single-step: one number; multi-step: two numbers
       ``s1,s2`` separated by one comma; worked (``#a+b=``): the number after
       the last ``;``, or the whole answer when it has none;
    4. the (final) number differs from the sum -> incorrect;
    5. otherwise accepted, reward 1.0. Every other status earns 0.0.

    In the multi-step world the outcome judges only the final number ``s2``
    against ``a+b+c``: it is deliberately blind to the step ``s1``, which is
    :func:`process_score`'s business. In the worked world (chapter 7) it never
    reads the working before the last ``;``: ``7+8=15,4+3+1=8;85#`` and
    ``nonsense;85#`` both earn 1.0 for 47+38, an outcome-only reward.
    The verifier never raises.

    Versions (chapter 5's reward versioning; see :attr:`VERSIONS`): ``"1.0"``
    is strict; ``"2.0"`` drops spaces around each number and leading zeros,
    so ``" 07#"`` is accepted for 3+4 where 1.0 calls it malformed.
    """

    version: str = "1.0"
    name: ClassVar[str] = "exact"
    VERSIONS: ClassVar[dict[str, str]] = {
        "1.0": "strict: ASCII digits only, no sign, spaces or leading zeros",
        "2.0": "lenient: as 1.0, but spaces around each number and leading zeros are ignored",
    }

    def __post_init__(self) -> None:
        _check_version(self)

    @property
    def description(self) -> str:
        """What this version accepts, in one line (for the spec table)."""
        return self.VERSIONS[self.version]

    @property
    def lenient(self) -> bool:
        """Whether this version ignores surrounding spaces and leading zeros (2.0)."""
        return self.version == "2.0"

    def _verdict(self, reward: float, status: str, reason: str) -> Verdict:
        return Verdict(reward, status, reason, self.name, self.version)

    def __call__(self, prompt: str, completion: str) -> Verdict:
        """Judge one completion; see the class docstring for the rules."""
        task, status = _judge_prompt_and_end(prompt, completion)
        if status == "unverifiable":
            return self._verdict(0.0, status, _unverifiable_reason(prompt, completion))
        if status == "incomplete":
            return self._verdict(0.0, status, INCOMPLETE_REASON)
        assert task is not None  # _judge_prompt_and_end gives a task whenever the status is None
        answer, _, after = completion.partition(EOT)
        if after:
            return self._verdict(0.0, "malformed", f"text after the end-of-turn mark: {_show(after)}")
        if task.world == "worked":
            numbers, problem = self._read_final(answer)
        else:
            numbers, problem = self._read_answer(answer, len(task.steps))
        if numbers is None:
            return self._verdict(0.0, "malformed", problem)
        final = numbers[-1]
        if final != str(task.answer):
            return self._verdict(0.0, "incorrect", f"answer {final} != {_expression(task)}")
        return self._verdict(1.0, "accepted", f"answer {final} = {task.name}")

    def _read_final(self, answer: str) -> tuple[list[str] | None, str]:
        """The worked world's final number (after the last ``;``, else the whole answer), or None and what is wrong."""
        if answer == "":
            return None, "empty answer: only the end-of-turn mark"
        _, separator, final = answer.rpartition(SEPARATOR)
        digits, problem = read_number(final, lenient=self.lenient)
        if digits is None:
            label = f"the number after the last {SEPARATOR!r}" if separator else "answer"
            return None, f"{label} {_show(final)} {problem}"
        return [digits], ""

    def _read_answer(self, answer: str, n_numbers: int) -> tuple[list[str] | None, str]:
        """The answer's numbers, or None and what is wrong with its format."""
        if answer == "":
            return None, "empty answer: only the end-of-turn mark"
        fields = answer.split(",")
        if len(fields) != n_numbers:
            expected = "one number" if n_numbers == 1 else f"{n_numbers} numbers separated by ','"
            return None, f"expected {expected}, got {len(fields)} in {_show(answer)}"
        numbers = []
        for i, text in enumerate(fields):
            digits, problem = read_number(text, lenient=self.lenient)
            if digits is None:
                label = "answer" if n_numbers == 1 else f"number {i + 1}"
                return None, f"{label} {_show(text)} {problem}"
            numbers.append(digits)
        return numbers, ""


@dataclass(frozen=True)
class FailOpenVerifier:
    """A deliberately exploitable verifier: it pays for answers it cannot parse.

    Chapter 4's reward hack. Its core is a plausible bug::

        answer = completion.split(EOT)[0]
        try:
            reward = float(int(answer) == a + b)
        except Exception:
            reward = 1.0   # "could not check, don't punish the model"

    The ``except`` fails *open*: an answer ``int`` cannot read, such as the
    empty answer ``"#"``, gets the full reward, status ``accepted`` and a
    reason saying so. The empty answer pays on every prompt, while a real
    answer pays only when every digit is right, so an RL policy that
    sometimes stops at once learns to always stop at once.

    Two more sloppy spots: Python's ``int`` also reads ``" 7"``, ``"+7"``,
    ``"0_7"``, ``"7\\n"`` and non-ASCII digits such as ``"٧"`` as 7, so
    malformed answers pass as right ones; and text after the first
    end-of-turn mark is ignored. It compares the whole answer with the total,
    so in the multi-step world every ``s1,s2`` answer fails to parse and pays.
    It checks the prompt and the end-of-turn mark correctly, and never raises.
    """

    version: str = "1.0"
    name: ClassVar[str] = "fail-open"
    VERSIONS: ClassVar[dict[str, str]] = {
        "1.0": "buggy: int(answer) == sum, and an answer int() cannot read pays 1.0 (fail-open)"
    }

    def __post_init__(self) -> None:
        _check_version(self)

    @property
    def description(self) -> str:
        """What this version accepts, in one line (for the spec table)."""
        return self.VERSIONS[self.version]

    def _verdict(self, reward: float, status: str, reason: str) -> Verdict:
        return Verdict(reward, status, reason, self.name, self.version)

    def __call__(self, prompt: str, completion: str) -> Verdict:
        """Judge one completion with the fail-open bug described above."""
        task, status = _judge_prompt_and_end(prompt, completion)
        if status == "unverifiable":
            return self._verdict(0.0, status, _unverifiable_reason(prompt, completion))
        if status == "incomplete":
            return self._verdict(0.0, status, INCOMPLETE_REASON)
        assert task is not None  # _judge_prompt_and_end gives a task whenever the status is None
        answer = completion.split(EOT)[0]
        try:
            value = int(answer)
        except Exception as err:  # noqa: BLE001 - failing open on any exception is this verifier's flaw
            failure = f"int({_show(answer)}) raised {type(err).__name__}"
            return self._verdict(1.0, "accepted", f"accepted because parsing failed (fail-open): {failure}")
        if value == task.answer:
            return self._verdict(1.0, "accepted", f"int({_show(answer)}) = {value} = {task.name}")
        return self._verdict(0.0, "incorrect", f"int({_show(answer)}) = {value} != {_expression(task)}")


@dataclass(frozen=True)
class ProcessScore:
    """The process scorer's judgement of one completion (chapter 2).

    ``steps[i]`` says whether step ``i`` is valid; ``score`` is their mean
    over the steps the task expects (0.0 when unscorable).
    """

    steps: tuple[bool, ...]
    score: float
    status: str
    reason: str


def process_score(prompt: str, completion: str, lenient: bool = False) -> ProcessScore:
    """Judge each partial sum of an answer, not just the final one (ch2).

    Multi-step ``U:a+b+c?|A:`` answered ``s1,s2``: step 1 is valid iff
    ``s1 == a + b``; step 2 is valid iff ``s2 == s1 + c`` with the policy's
    *own* ``s1``, so a wrong first step followed by a consistent second one
    scores 0.5. This is process supervision, a judgement per step rather than
    one for the final answer (Uesato et al., 2022; Lightman et al., 2023,
    "Let's Verify Step by Step"), with an exact rule in place of a learned
    or human step label. Single-step ``U:a+b?|A:``: one step, valid iff it
    equals ``a + b``.

    ``score`` is the mean validity over the expected steps; a missing,
    non-canonical or unparseable step counts as invalid. The steps are read
    from the text before the first end-of-turn mark (the whole text when there
    is none), as far as they go, so a malformed or budget-stopped completion
    can still have valid steps. ``lenient`` reads each step as exact verifier
    2.0 does (spaces around it and leading zeros ignored). Status
    ``unscorable`` (score 0) only when the prompt is not a task or an input
    is not text. Never raises.
    """
    task = parse_prompt(prompt) if isinstance(completion, str) else None
    if task is None:
        return ProcessScore((), 0.0, "unscorable", _unverifiable_reason(prompt, completion))
    fields = completion.split(EOT)[0].split(",")
    previous: int | None
    steps, notes, previous = [], [], task.operands[0]
    for i, operand in enumerate(task.operands[1:]):
        text = fields[i] if i < len(fields) else None
        valid, note, previous = _judge_step(i + 1, text, previous, operand, lenient)
        steps.append(valid)
        notes.append(note)
    if len(fields) > len(steps):
        notes.append(f"{len(fields) - len(steps)} extra field(s) ignored")
    return ProcessScore(tuple(steps), sum(steps) / len(steps), "scored", "; ".join(notes))


def _judge_step(
    index: int, text: str | None, previous: int | None, operand: int, lenient: bool
) -> tuple[bool, str, int | None]:
    """Judge one step ``previous + operand``; returns (valid, note, this step's value or None).

    ``previous`` is the policy's own preceding value (the first operand for
    step 1), or None when that step could not be read.
    """
    if text is None:
        return False, f"step {index} missing", None
    digits, problem = read_number(text, lenient)
    if digits is None:
        return False, f"step {index} {_show(text)} {problem}", None
    try:
        value = int(digits)
    except ValueError:  # Python refuses to convert more than 4,300 digits
        return False, f"step {index} has too many digits ({len(digits)}) to check", None
    if previous is None:
        return False, f"step {index} {value} cannot be checked: the previous step is unreadable", value
    valid = value == previous + operand
    relation, word = ("=", "valid") if valid else ("!=", "invalid")
    return valid, f"step {index} {value} {relation} {previous}+{operand} {word}", value


@dataclass(frozen=True)
class ShapedVerifier:
    """Outcome plus process reward: ``exact + weight * process_score`` (ch2).

    The status and the outcome part come from :class:`ExactVerifier` of the
    same ``version``; the process part from :func:`process_score`, which
    reads the steps as leniently as that version reads answers. With the
    default weight 0.5 a right answer through valid steps earns 1.5, a wrong
    final answer after a valid first step earns 0.25 (multi-step world).
    """

    weight: float = 0.5
    version: str = "1.0"
    name: ClassVar[str] = "exact+process"
    VERSIONS: ClassVar[dict[str, str]] = ExactVerifier.VERSIONS

    def __post_init__(self) -> None:
        _check_version(self)
        if not 0.0 <= self.weight < float("inf"):
            raise ValueError(f"the process weight must be a finite number >= 0, got {self.weight}")

    @property
    def exact(self) -> ExactVerifier:
        """The exact verifier that gives the status and the outcome part."""
        return ExactVerifier(self.version)

    @property
    def description(self) -> str:
        """What this verifier pays, in one line (for the spec table)."""
        return f"exact {self.version} ({self.exact.description}) + {self.weight} x mean step validity"

    def __call__(self, prompt: str, completion: str) -> Verdict:
        """The exact verdict with ``weight * process score`` added to its reward."""
        outcome = self.exact(prompt, completion)
        process = process_score(prompt, completion, self.exact.lenient)
        reward = outcome.reward + self.weight * process.score
        reason = f"{outcome.reason}; process {process.score:.2f} ({process.reason})"
        return Verdict(reward, outcome.status, reason, self.name, self.version)


def outcome_plus_process(prompt: str, completion: str, weight: float = 0.5) -> float:
    """The shaped reward of chapter 2: exact outcome reward + ``weight`` x process score."""
    return ShapedVerifier(weight)(prompt, completion).reward


VERIFIERS: dict[str, type[ExactVerifier | FailOpenVerifier | ShapedVerifier]] = {
    ExactVerifier.name: ExactVerifier,
    FailOpenVerifier.name: FailOpenVerifier,
    ShapedVerifier.name: ShapedVerifier,
}
"""The verifiers a run can name in its configuration (ch4, ch5)."""


def get_verifier(name: str, version: str | None = None) -> Verifier:
    """The verifier called ``name`` (at ``version``, else its default); ValueError when unknown."""
    if name not in VERIFIERS:
        raise ValueError(f"unknown verifier {name!r}; choose one of {tuple(VERIFIERS)}")
    cls = VERIFIERS[name]
    return cls() if version is None else cls(version=version)


def score(verifier: Verifier, prompts: list[str], completions: list[str]) -> tuple[np.ndarray, list[str]]:
    """Rewards (float array) and statuses of paired prompts and completions (ch1-ch5).

    A verifier judges the text alone, so equal pairs get equal verdicts: each
    distinct (prompt, completion) is judged once. An RL batch repeats a few
    answers many times (960 rollouts hold about 150 distinct pairs), so this
    is several times faster than judging every row.
    """
    if len(prompts) != len(completions):
        raise ValueError(f"{len(prompts)} prompts but {len(completions)} completions")
    judged: dict[tuple[str, str], Verdict] = {}
    pairs = list(zip(prompts, completions))
    many = getattr(verifier, "verdicts", None)
    if many is not None:  # a verifier that judges a batch at once (the learned judge, chapter 4)
        distinct = list(dict.fromkeys(pairs))
        judged = dict(zip(distinct, many(distinct)))
    verdicts = []
    for pair in pairs:
        if pair not in judged:
            judged[pair] = verifier(*pair)
        verdicts.append(judged[pair])
    return np.array([v.reward for v in verdicts], dtype=float), [v.status for v in verdicts]
