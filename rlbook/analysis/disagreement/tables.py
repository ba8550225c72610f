"""Chapter 2's tables, written from its facts (plain data): the reward interface, its tests, the breakdowns,
the disagreement matrix, its samples, the RL comparison and the exercise's block.

The page calls these on the facts of :mod:`rlbook.book.rewards`; nothing
here samples or judges, so editing a table's layout recomputes no fact (the
facts module does not import this module). Verdicts are named with the
book's one vocabulary (:data:`rlbook.core.verdicts.VERDICT_WORDS`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from rlbook.analysis.tables import markdown_table
from rlbook.core.verdicts import VERDICT_WORDS
from rlbook.core.world import parse_prompt

SPEC_NAMES = {
    "task_input": "task input",
    "permitted_actions": "permitted actions",
    "end_condition": "end condition",
    "reward_source": "reward source",
    "incorrect": "wrong value",
    "incomplete": "stopped by the budget",
}
"""What the reward interface table calls each field of :data:`rlbook.analysis.reward_spec.SPEC` (else its key)."""


def code(text: str) -> str:
    """``repr(text)`` as a Markdown code span: shows spaces, newlines and odd characters exactly."""
    return f"`{text!r}`"


def quoted_as_code(reason: str) -> str:
    """A verifier's reason with each quoted piece, such as ``' 7'``, shown as a code span.

    As plain Markdown the quotes would be typeset as curly ones and a quoted
    newline would vanish; :func:`code` shows them exactly.
    """
    return re.sub(r"'([^']*)'", lambda m: code(m.group(1)), reason).replace("!=", "\u2260")


def _verdict(status: str) -> str:
    return VERDICT_WORDS.get(status, status)


def spec_markdown(rows: Sequence[Sequence[str]]) -> str:
    """The reward interface, field by field: rows (field, rule) of :func:`rlbook.analysis.reward_spec.spec_table`."""
    return markdown_table(["field", "rule"], [[f"**{SPEC_NAMES.get(k, k)}**", rule] for k, rule in rows])


def shortcut_markdown(rows: Sequence[Mapping]) -> str:
    """The reward tests: each case's rollout, the live verdict, the process score and the verifier's reason.

    ``rows`` are :func:`rlbook.analysis.reward_spec.shortcut_rows`; the
    reward is left out, since it is 1 exactly when the verdict is accepted.
    """
    body = []
    for r in rows:
        prompt = f"`{r['prompt']}`" if r["prompt"] else "(empty prompt)"
        process = "n/a" if r["process"] is None else f"{r['process']:.1f}"
        body.append(
            [
                r["case"],
                f"{prompt} {code(r['completion'])}",
                _verdict(r["status"]),
                process,
                quoted_as_code(r["reason"]),
            ]
        )
    return markdown_table(["case", "prompt and completion", "verdict", "process", "reason"], body, "lllrl")


def breakdown_markdown(rows: Mapping[str, Mapping]) -> str:
    """Each checkpoint's samples: expected reward, rejections by failure of format or of value, right sums rejected.

    ``rows`` maps a checkpoint's label to its breakdown
    (:func:`rlbook.analysis.disagreement.breakdown`).
    """
    body = [
        [
            label,
            f"{r['expected_reward']:.2f}",
            f"{r['samples'] - r['accepted']:,}",
            f"{r['malformed'] + r['incomplete']:,}",
            f"{r['incorrect']:,}",
            f"{r['right_number_rejected']:,}",
        ]
        for label, r in rows.items()
    ]
    return markdown_table(
        ["checkpoint", "expected reward", "rejected", "format", "wrong value", "right sum first"], body, "lrrrrr"
    )


def breakdown_detail_markdown(rows: Mapping[str, Mapping], statuses: Sequence[str]) -> str:
    """Each verdict's count for each checkpoint: the detail behind :func:`breakdown_markdown`.

    A verdict that no checkpoint received gets no column.
    """
    seen = [s for s in statuses if any(r[s] for r in rows.values())]
    body = [[label, *(f"{r[s]:,}" for s in seen)] for label, r in rows.items()]
    return markdown_table(["checkpoint", *map(_verdict, seen)], body, "l" + "r" * len(seen))


def matrix_markdown(matrix: Mapping) -> str:
    """The disagreement matrix: outcome verdict (rows) against valid steps (columns), counts and shares.

    ``matrix`` has ``rows`` (outcome statuses), ``columns`` (process scores,
    highest first) and ``counts`` (one list per row), as the facts hold it.
    """
    counts, columns = matrix["counts"], list(matrix["columns"])
    total = sum(map(sum, counts))
    n_steps = len(columns) - 1
    header = ["outcome verdict", *(f"{round(c * n_steps)} of {n_steps} steps valid" for c in columns)]
    body = [
        [_verdict(status), *(f"{c:,} ({c / total:.0%})" for c in row)] for status, row in zip(matrix["rows"], counts)
    ]
    return markdown_table(header, body, "l" + "r" * len(columns))


def _sum(prompt: str) -> str:
    """The sum a prompt asks for, ``3+4+5``, short enough for a narrow column (the prompt itself if not a task)."""
    task = parse_prompt(prompt)
    return prompt if task is None else "+".join(map(str, task.operands))


def sample_markdown(sample: Sequence[Mapping]) -> str:
    """A bounded sample of one cell: each rollout's sum and completion, the outcome verdict and the scorer's reason."""
    body = [
        [
            _sum(j["prompt"]),
            code(j["completion"]),
            _verdict(j["status"]),
            f"{j['process']:.1f}",
            j["process_reason"].replace("!=", "\u2260"),
        ]
        for j in sample
    ]
    return markdown_table(["sum", "completion", "outcome", "process", "the scorer's reason"], body, "lllrl")


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def comparison_markdown(table: Mapping[str, Sequence[Mapping]], labels: Mapping[str, str]) -> str:
    """Held-out accuracy and step validity from the first checkpoint to the last, each the mean over the seeds.

    ``table`` maps a run's name to its per-seed rows
    (:func:`rlbook.analysis.disagreement.final_eval`); ``labels`` names each
    run's reward for the reader. :func:`comparison_detail_markdown` gives the seeds one by one.
    """
    body = [
        [
            labels.get(name, name),
            *(
                f"{_mean([r[f'start_{k}'] for r in rows]):.2f} → {_mean([r[f'end_{k}'] for r in rows]):.2f}"
                for k in ("accuracy", "validity")
            ),
        ]
        for name, rows in table.items()
    ]
    return markdown_table(["reward", "held-out accuracy", "step validity"], body, "lrr")


def comparison_detail_markdown(table: Mapping[str, Sequence[Mapping]], labels: Mapping[str, str]) -> str:
    """:func:`comparison_markdown` seed by seed: each run's first and last accuracy and validity."""
    body = [
        [
            labels.get(name, name),
            r["seed"],
            *(f"{r[k]:.3f}" for k in ("start_accuracy", "end_accuracy", "start_validity", "end_validity")),
        ]
        for name, rows in table.items()
        for r in rows
    ]
    header = ["reward", "seed", "accuracy, first", "accuracy, last", "validity, first", "validity, last"]
    return markdown_table(header, body, "lrrrrr")


def block_markdown(rows: Sequence[Mapping]) -> str:
    """Exercise 2.3's block of rollouts, numbered from 0, without their verdicts."""
    return markdown_table(
        ["index", "prompt", "completion"],
        [[i, f"`{j['prompt']}`", code(j["completion"])] for i, j in enumerate(rows)],
        "rll",
    )
