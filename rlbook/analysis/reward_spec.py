"""Chapter 2's reward interface written out: the specification table and the cases that test a verifier.

:data:`SPEC` states the reward interface field by field, built from the
code's own constants so that the table cannot drift from what the verifier
does; :data:`SHORTCUT_CASES` are right answers, wrong answers, malformed
outputs and plausible shortcuts, each with the status the exact verifier
should give, and :func:`shortcut_rows` judges them live. They are display
and test data: no run trains on them.
"""

from __future__ import annotations

from typing import NamedTuple

from rlbook.core.rewards import ExactVerifier, Verifier, process_score
from rlbook.core.world import EOT, VOCAB, Task


def _vocab_text() -> str:
    """The vocabulary written out for people: space and newline named."""
    names = {" ": "space", "\n": "newline"}
    return " ".join(names.get(ch, ch) for ch in VOCAB)


SPEC: dict[str, str] = {
    "task_input": f"a prompt {Task((3, 4)).prompt!r} (single-step: digits a, b in 0-9) or "
    f"{Task((3, 4, 5)).prompt!r} (multi-step: a, b, c)",
    "permitted_actions": f"one character per step from the {len(VOCAB)}-character vocabulary: {_vocab_text()}",
    "end_condition": f"the policy writes the end-of-turn mark {EOT!r}, or the token budget runs out",
    "reward_source": "the verifier, judging the completion text alone (never the model)",
    "accepted": f"canonical answer, right value: {Task((3, 4)).completion!r} or {Task((3, 4, 5)).completion!r} "
    "(multi-step: only the final number is judged); reward 1",
    "incorrect": "canonical answer with the wrong (final) value; reward 0",
    "malformed": f"text after the first {EOT!r}, empty answer, or an answer that is not canonical: ASCII digits "
    "only, no sign, space or leading zero, one number (single-step) or two separated by ',' "
    "(multi-step); reward 0",
    "incomplete": f"no {EOT!r} in the completion: the token budget stopped it; reward 0",
    "unsafe": f"cannot arise: a text over these {len(VOCAB)} characters does nothing outside the episode; "
    "a world whose actions can do harm needs its own rule here",
    "unverifiable": "the prompt is not one of the two task formats (or not text); reward 0",
}
"""The reward interface as a specification (chapter 2 renders it with :func:`spec_table`).

Each value is built from the code's own constants, so the chapter's table
cannot drift from what the verifier does.
"""


def spec_table(verifier: Verifier) -> list[tuple[str, str]]:
    """Rows (field, rule) of :data:`SPEC`, with ``reward_source`` naming ``verifier`` (ch2)."""
    source = f"{SPEC['reward_source']}: {verifier.name} {verifier.version}, {verifier.description}"
    return [(key, source if key == "reward_source" else rule) for key, rule in SPEC.items()]


class ShortcutCase(NamedTuple):
    """One row of chapter 2's "test the reward before training" table."""

    description: str
    prompt: str
    completion: str
    intended_status: str


_S, _M = Task((3, 4)).prompt, Task((3, 4, 5)).prompt
SHORTCUT_CASES: list[ShortcutCase] = [
    ShortcutCase("right answer", _S, "7#", "accepted"),
    ShortcutCase("right two-digit answer", Task((9, 8)).prompt, "17#", "accepted"),
    ShortcutCase("right answer 0", Task((0, 0)).prompt, "0#", "accepted"),
    ShortcutCase("right multi-step answer", _M, "7,12#", "accepted"),
    ShortcutCase("right final through a wrong step (outcome is blind to it)", _M, "6,12#", "accepted"),
    ShortcutCase("final sum written twice (outcome is blind to the step)", _M, "12,12#", "accepted"),
    ShortcutCase("wrong answer, off by one", _S, "8#", "incorrect"),
    ShortcutCase("answer repeated", _S, "77#", "incorrect"),
    ShortcutCase("an operand instead of the sum", _S, "3#", "incorrect"),
    ShortcutCase("right step, wrong final", _M, "7,13#", "incorrect"),
    ShortcutCase("empty answer", _S, "#", "malformed"),
    ShortcutCase("leading space", _S, " 7#", "malformed"),
    ShortcutCase("trailing space", _S, "7 #", "malformed"),
    ShortcutCase("leading zero", _S, "07#", "malformed"),
    ShortcutCase("non-ASCII digit", _S, "\u0667#", "malformed"),
    ShortcutCase("plus sign", _S, "+7#", "malformed"),
    ShortcutCase("minus sign", _S, "-7#", "malformed"),
    ShortcutCase("two end-of-turn marks", _S, "7##", "malformed"),
    ShortcutCase("answer after the end-of-turn mark", _S, "7#7#", "malformed"),
    ShortcutCase("two answers separated by a comma", _S, "7,7#", "malformed"),
    ShortcutCase("equation instead of the answer", _S, "3+4=7#", "malformed"),
    ShortcutCase("answer then newline", _S, "7\n#", "malformed"),
    ShortcutCase("final sum only in the multi-step world", _M, "12#", "malformed"),
    ShortcutCase("three numbers in the multi-step world", _M, "7,12,12#", "malformed"),
    ShortcutCase("missing step", _M, ",12#", "malformed"),
    ShortcutCase("right answer stopped by the budget", _S, "7", "incomplete"),
    ShortcutCase("nothing generated before the budget", _S, "", "incomplete"),
    ShortcutCase("multi-step answer stopped by the budget", _M, "7,12", "incomplete"),
    ShortcutCase("two-digit operand", "U:13+4?|A:", "17#", "unverifiable"),
    ShortcutCase("prompt without its answer cue", "U:3+4?", "7#", "unverifiable"),
    ShortcutCase("empty prompt", "", "7#", "unverifiable"),
    ShortcutCase("four operands", "U:1+2+3+4?|A:", "3,6,10#", "unverifiable"),
]
"""Known right answers, wrong answers, malformed outputs, budget-stopped
answers, unverifiable prompts and plausible shortcuts, each with the status the
exact verifier (1.0) should give (ch2). Two shortcuts are *accepted* on
purpose: the outcome reward does not look at the step; the process scorer does.
"""


def shortcut_rows(verifier: Verifier | None = None) -> list[dict]:
    """Every case of :data:`SHORTCUT_CASES` with ``verifier``'s live verdict and the process score (ch2).

    ``process`` is None for a prompt the process scorer cannot score.
    """
    verifier = verifier or ExactVerifier()
    rows = []
    for case in SHORTCUT_CASES:
        verdict = verifier(case.prompt, case.completion)
        process = process_score(case.prompt, case.completion)
        rows.append(
            {
                "case": case.description,
                "prompt": case.prompt,
                "completion": case.completion,
                "intended": case.intended_status,
                "status": verdict.status,
                "reward": verdict.reward,
                "reason": verdict.reason,
                "process": process.score if process.status == "scored" else None,
            }
        )
    return rows


def shortcut_mismatches(verifier: Verifier | None = None) -> list[dict]:
    """The cases whose live status differs from the intended one (empty when the verifier passes its tests)."""
    return [r for r in shortcut_rows(verifier) if r["status"] != r["intended"]]
