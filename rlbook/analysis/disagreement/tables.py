"""Chapter 2's tables: the reward specification, the reward tests, the breakdowns, the matrix and its samples."""
from __future__ import annotations

import re

from rlbook.analysis import reward_spec
from rlbook.analysis.tables import markdown_table
from rlbook.core import rewards as rw

from .counts import matrix
from .verdicts import Judged


def code(text: str) -> str:
    """``repr(text)`` as a Markdown code span: shows spaces, newlines and odd characters exactly."""
    return f"`{text!r}`"


def quoted_as_code(reason: str) -> str:
    """A verifier's reason with each quoted piece, such as ``' 7'``, shown as a code span (ch2's tables).

    As plain Markdown the quotes would be typeset as curly ones and a quoted
    newline would vanish; :func:`code` shows them exactly.
    """
    return re.sub(r"'([^']*)'", lambda m: code(m.group(1)), reason)


SPEC_NAMES = {
    "task_input": "task input", "permitted_actions": "permitted actions", "end_condition": "end condition",
    "reward_source": "reward source", "accepted": "accepted", "incorrect": "incorrect", "malformed": "malformed",
    "incomplete": "incomplete", "unverifiable": "unverifiable",
}


def spec_markdown(verifier: rw.Verifier) -> str:
    """:func:`reward_spec.spec_table` as a table: the reward interface, field by field (ch2)."""
    rows = [[f"**{SPEC_NAMES.get(key, key)}**", rule] for key, rule in reward_spec.spec_table(verifier)]
    return markdown_table(["field", "rule"], rows)


def shortcut_rows(verifier: rw.Verifier | None = None) -> list[dict]:
    """Every case of :data:`reward_spec.SHORTCUT_CASES` with the verifier's live verdict and process score (ch2)."""
    verifier = verifier or rw.ExactVerifier()
    rows = []
    for case in reward_spec.SHORTCUT_CASES:
        verdict = verifier(case.prompt, case.completion)
        process = rw.process_score(case.prompt, case.completion)
        rows.append({"case": case.description, "prompt": case.prompt, "completion": case.completion,
                     "intended": case.intended_status, "status": verdict.status, "reward": verdict.reward,
                     "reason": verdict.reason, "process": process.score if process.status == "scored" else None})
    return rows


def shortcut_mismatches(verifier: rw.Verifier | None = None) -> list[dict]:
    """The cases whose live status differs from the intended one (empty when the verifier passes its tests)."""
    return [r for r in shortcut_rows(verifier) if r["status"] != r["intended"]]


def shortcut_markdown(verifier: rw.Verifier | None = None) -> str:
    """The reward tests as a table: case, prompt, completion, live status, reward, process score, reason (ch2)."""
    rows = []
    for r in shortcut_rows(verifier):
        process = "n/a" if r["process"] is None else f"{r['process']:.1f}"
        prompt = f"`{r['prompt']}`" if r["prompt"] else "(empty)"
        rows.append([r["case"], prompt, code(r["completion"]), r["status"], f"{r['reward']:.0f}", process,
                     quoted_as_code(r["reason"]).replace("!=", "\u2260")])
    return markdown_table(["case", "prompt", "completion", "status", "reward", "process", "reason"], rows,
                          "llllrrl")


def breakdown_markdown(rows: dict[str, dict[str, float | int]]) -> str:
    """Verdict breakdowns (:func:`breakdown`) of several checkpoints as one table, one row each (ch2)."""
    columns = ["expected_reward", *rw.STATUSES, "right_number_rejected"]
    header = ["checkpoint", "expected reward", *rw.STATUSES, "rejected, first number right"]
    body = [[label, f"{row['expected_reward']:.2f}", *(f"{row[c]:,}" for c in columns[1:])]
            for label, row in rows.items()]
    return markdown_table(header, body, "l" + "r" * len(columns))


def matrix_markdown(judged: list[Judged]) -> str:
    """The disagreement matrix as a table, with the share of all rollouts in each cell (ch2)."""
    counts, rows, columns = matrix(judged)
    total = counts.sum()
    n_steps = round(1 / columns[-2]) if len(columns) > 1 else 1
    header = ["outcome status"] + [f"{round(c * n_steps)} of {n_steps} steps valid" for c in columns] + ["total"]
    body = [[status] + [f"{c:,} ({c / total:.1%})" for c in counts[i]] + [f"{counts[i].sum():,}"]
            for i, status in enumerate(rows)]
    return markdown_table(header, body, "l" + "r" * (len(columns) + 1))


def sample_markdown(sample: list[Judged]) -> str:
    """A bounded sample of one cell: prompt, completion and what each verdict says (ch2)."""
    rows = [[f"`{j.prompt}`", code(j.completion), f"{j.status} ({j.reward:.0f})", f"{j.process:.1f}",
             j.process_reason.replace("!=", "\u2260")] for j in sample]
    return markdown_table(["prompt", "completion", "outcome", "process", "process scorer's reason"], rows,
                          "llrrl")
