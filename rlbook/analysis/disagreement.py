"""Outcome and process verdicts side by side, and where they disagree (chapter 2).

Chapter 2 judges every rollout twice: once by the outcome verifier
(:class:`rlbook.core.rewards.ExactVerifier`, which reads only the final answer)
and once by the process scorer (:func:`rlbook.core.rewards.process_score`, which
judges each partial sum). This module pairs the two verdicts, counts them in
a matrix, draws bounded samples of the cells where they disagree, renders
the reward specification and the pre-training reward tests as tables, and
compares the two multi-step RL runs (``process-outcome`` against
``process-shaped``) across seeds.

Process versus outcome supervision as a research question: Uesato et al.
(2022), "Solving math word problems with process- and outcome-based
feedback"; Lightman et al. (2023), "Let's Verify Step by Step".
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

from rlbook.analysis import reward_spec
from rlbook.core import rewards as rw
from rlbook.core.evaluate import EvalResult, evaluate
from rlbook.core.policy import Policy
from rlbook.core.sampling import Rollouts, sample
from rlbook.core.world import Task, decode, parse_prompt

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from rlbook.runs import Run

OUTCOME_ROWS = ("accepted", "incorrect", "malformed", "incomplete")
"""The outcome statuses a rollout of a well-formed prompt can get (``unverifiable`` needs a bad prompt)."""

AGREE = "agree"
RIGHT_INVALID = "right answer through an invalid step"
VALID_MALFORMED = "valid steps, malformed end"
VALID_INCOMPLETE = "valid steps, stopped by the budget"
DISAGREEMENTS = (RIGHT_INVALID, VALID_MALFORMED, VALID_INCOMPLETE)
"""The cells where the outcome verdict (accepted or not) and the process verdict (every step valid or not) differ."""
PARTIAL_CREDIT = "wrong answer with partial step credit"
"""Not a disagreement of pass and fail, but the process score pays for a rollout the outcome rejects."""


@dataclass(frozen=True)
class Judged:
    """One rollout with both verdicts (chapter 2's disagreement analysis).

    ``status``/``reward``/``reason`` come from the outcome verifier;
    ``steps``/``process``/``process_reason`` from :func:`rewards.process_score`.
    """

    prompt: str
    completion: str
    status: str
    reward: float
    reason: str
    steps: tuple[bool, ...]
    process: float
    process_reason: str

    @property
    def outcome_pass(self) -> bool:
        """The outcome verifier accepts the final answer."""
        return self.status == "accepted"

    @property
    def process_pass(self) -> bool:
        """Every step the task expects is valid."""
        return bool(self.steps) and all(self.steps)

    @property
    def disagrees(self) -> bool:
        """The two verdicts differ: one passes the rollout and the other does not."""
        return self.outcome_pass != self.process_pass

    @property
    def kind(self) -> str:
        """The name of this rollout's cell: one of :data:`DISAGREEMENTS`, :data:`PARTIAL_CREDIT` or ``agree``."""
        if self.outcome_pass and not self.process_pass:
            return RIGHT_INVALID
        if self.process_pass and not self.outcome_pass:
            return VALID_INCOMPLETE if self.status == "incomplete" else VALID_MALFORMED
        if not self.outcome_pass and self.process > 0:
            return PARTIAL_CREDIT
        return AGREE


def judge(prompts: list[str], completions: list[str], verifier: rw.Verifier | None = None) -> list[Judged]:
    """Both verdicts for each (prompt, completion) pair; the outcome verifier defaults to exact 1.0 (ch2)."""
    if len(prompts) != len(completions):
        raise ValueError(f"{len(prompts)} prompts but {len(completions)} completions")
    verifier = verifier or rw.ExactVerifier()
    judged = []
    for prompt, completion in zip(prompts, completions):
        outcome = verifier(prompt, completion)
        process = rw.process_score(prompt, completion)
        judged.append(Judged(prompt, completion, outcome.status, outcome.reward, outcome.reason,
                             process.steps, process.score, process.reason))
    return judged


def sample_rollouts(policy: Policy, tasks: list[Task], n: int, seed: int, budget: int = 8) -> Rollouts:
    """``n`` fresh rollouts per task at temperature 1, reproducible from ``seed`` (ch2's multi-step sample)."""
    return sample(policy, [t.prompt for t in tasks], n=n, budget=budget,
                  generator=torch.Generator().manual_seed(seed))


def judge_rollouts(rollouts: Rollouts) -> list[Judged]:
    """Both verdicts for every rollout of a sampled batch (ch2)."""
    return judge(rollouts.prompts, rollouts.completions())


def logged_rollouts(step_log: dict) -> tuple[list[str], list[str]]:
    """Prompts and completions of one step of a run's rollout log (``run.rollouts[i]``), one per rollout.

    The log keeps one prompt per group and the generated token ids; rows of a
    group are contiguous, so each prompt is repeated for its group (ch2).
    """
    lengths = step_log["lengths"].tolist()
    completions = [decode(row[:n]) for row, n in zip(step_log["tokens"].tolist(), lengths)]
    group = len(completions) // len(step_log["prompts"])
    prompts = [p for p in step_log["prompts"] for _ in range(group)]
    return prompts, completions


# ---------------------------------------------------------------- counting


def process_columns(judged: list[Judged]) -> list[float]:
    """The distinct process scores that occur, highest first (for two steps: 1.0, 0.5, 0.0)."""
    n_steps = max((len(j.steps) for j in judged), default=2)
    return [k / n_steps for k in range(n_steps, -1, -1)]


def matrix(judged: list[Judged]) -> tuple[np.ndarray, list[str], list[float]]:
    """Counts of outcome status (rows, :data:`OUTCOME_ROWS`) against process score (columns).

    Returns ``(counts, rows, columns)``; ``counts[i, j]`` is how many rollouts
    got status ``rows[i]`` and process score ``columns[j]`` (ch2).
    """
    columns = process_columns(judged)
    counts = np.zeros((len(OUTCOME_ROWS), len(columns)), dtype=int)
    for j in judged:
        counts[OUTCOME_ROWS.index(j.status), columns.index(j.process)] += 1
    return counts, list(OUTCOME_ROWS), columns


def kind_counts(judged: list[Judged]) -> dict[str, int]:
    """How many rollouts fall in each named cell: the disagreements, partial credit and agreement (ch2)."""
    counts = {name: 0 for name in (*DISAGREEMENTS, PARTIAL_CREDIT, AGREE)}
    for j in judged:
        counts[j.kind] += 1
    return counts


def bounded_sample(judged: list[Judged], kind: str, k: int = 3, seed: int = 0) -> list[Judged]:
    """At most ``k`` distinct rollouts of one named cell, drawn at random with ``seed`` (ch2).

    Distinct means a different (prompt, completion) pair: a common mistake
    repeated many times is shown once. The draw keeps the sample's order.
    """
    seen, unique = set(), []
    for j in judged:
        if j.kind == kind and (j.prompt, j.completion) not in seen:
            seen.add((j.prompt, j.completion))
            unique.append(j)
    if len(unique) <= k:
        return unique
    picked = sorted(random.Random(seed).sample(range(len(unique)), k))
    return [unique[i] for i in picked]


def rate(judged: list[Judged], kind: str) -> float:
    """Share of the rollouts that fall in the named cell ``kind`` (ch2)."""
    return sum(j.kind == kind for j in judged) / len(judged) if judged else 0.0


def kind_rate_over_training(run: Run, kind: str = RIGHT_INVALID, every: int = 1) -> tuple[list[int], list[float]]:
    """At every ``every``-th training step, the share of the run's own rollouts in cell ``kind`` (ch2).

    Read from the rollout log (``run.rollouts``), so it costs no sampling.
    """
    steps, rates = [], []
    for step_log in run.rollouts[every - 1::every]:
        prompts, completions = logged_rollouts(step_log)
        steps.append(step_log["step"])
        rates.append(rate(judge(prompts, completions), kind))
    return steps, rates


def right_invalid_summary(judged: list[Judged]) -> dict[str, int]:
    """What the rollouts with a right answer through an invalid step wrote as their first sum (ch2).

    ``total`` such rollouts; ``off_by_one``: the first sum is a + b +- 1. An accepted
    answer has a well-formed first sum, and it cannot be a + b (the second
    step would then be valid too), so every one of them has a wrong first sum.
    """
    cases = [j for j in judged if j.kind == RIGHT_INVALID]
    firsts = [(int(j.completion.split(",")[0]), parse_prompt(j.prompt)) for j in cases]
    return {"total": len(cases), "off_by_one": sum(abs(s1 - task.steps[0]) == 1 for s1, task in firsts)}


def partial_credit_summary(judged: list[Judged]) -> dict[str, int]:
    """Which step earned the half credit of the rejected rollouts with process score 0.5 (ch2).

    ``first_valid``: a right first sum followed by a slip; ``second_valid``:
    a wrong first sum carried forward consistently.
    """
    cases = [j for j in judged if j.kind == PARTIAL_CREDIT and len(j.steps) == 2]
    return {"total": len(cases), "first_valid": sum(j.steps == (True, False) for j in cases),
            "second_valid": sum(j.steps == (False, True) for j in cases)}


def valid_end_summary(judged: list[Judged]) -> dict[str, int]:
    """How the rollouts with every step valid but no reward ended (ch2).

    ``malformed`` and ``incomplete`` count the two cells; ``extra_number``
    those that went on to write a third number after the two steps.
    """
    cases = [j for j in judged if j.kind in (VALID_MALFORMED, VALID_INCOMPLETE)]
    return {"malformed": sum(j.status == "malformed" for j in cases),
            "incomplete": sum(j.status == "incomplete" for j in cases),
            "extra_number": sum(len(j.completion.split(rw.EOT)[0].split(",")) > len(j.steps) for j in cases)}


# ---------------------------------------------------------------- the single-step breakdown


def first_number(text: str) -> str:
    """The first run of ASCII digits anywhere in ``text`` ('' when there is none)."""
    digits = ""
    for ch in text:
        if ch in rw.ASCII_DIGITS:
            digits += ch
        elif digits:
            break
    return digits


def right_number_rejected(result: EvalResult) -> int:
    """How many rejected single-step samples still contain the right sum as their first number (ch2).

    The pretrained policy continues a prompt for 3+4 as ``' =7\n'``: the
    sum is there, written as the end of an equation, but there is no
    end-of-turn mark, so the verifier says *incomplete*. Such a sample is a
    failure of format, not of arithmetic.
    """
    count = 0
    for task, row, statuses in zip(result.tasks, result.completions, result.statuses):
        for completion, status in zip(row, statuses):
            if status != "accepted" and first_number(completion) == str(task.answer):
                count += 1
    return count


def breakdown(result: EvalResult) -> dict[str, float | int]:
    """A verdict breakdown of one evaluation: expected reward, count per status, right-but-rejected (ch2)."""
    counts = result.status_counts()
    row: dict[str, float | int] = {"samples": int(result.rewards.size), "expected_reward": result.expected_reward}
    row.update({s: counts.get(s, 0) for s in rw.STATUSES})
    row["right_number_rejected"] = right_number_rejected(result)
    return row


def format_share(row: dict[str, float | int]) -> float:
    """Share of a breakdown's rejected samples that failed on format: malformed or incomplete (ch2)."""
    rejected = row["samples"] - row["accepted"]
    return (row["malformed"] + row["incomplete"]) / rejected if rejected else 0.0


def checkpoint_breakdowns(run: Run, tasks: list[Task], n: int = 32, budget: int = 4, seed: int = 0
                          ) -> tuple[dict[str, EvalResult], dict[str, dict[str, float | int]]]:
    """Evaluate a base run's checkpoints (0: pretrained, 1: after SFT) and break each down by verdict (ch2).

    Returns the evaluations and their :func:`breakdown` rows, both keyed by
    "pretrained" and "after SFT".
    """
    results = {label: evaluate(run.policy(step), tasks, n=n, budget=budget, seed=seed)
               for label, step in (("pretrained", 0), ("after SFT", 1))}
    return results, {label: breakdown(result) for label, result in results.items()}


# ---------------------------------------------------------------- tables


MAX_RULE = 40
"""The most dashes a column's separator gets in :func:`markdown_table`."""


def markdown_table(header: list[str], rows: list[list[object]], align: str | None = None) -> str:
    """A pandoc/Quarto pipe table; ``align`` is one letter per column, ``l`` or ``r`` (ch2's tables).

    Cells are written with ``str``; a ``|`` outside a code span is escaped
    and a newline becomes a space, so any text keeps the table intact. Each
    separator has as many dashes as the column's longest cell, capped at
    :data:`MAX_RULE`: pandoc sizes the columns of a wide pipe table in
    proportion to them, so a long text column wraps without starving the
    short ones.
    """
    align = align or "l" * len(header)
    if len(align) != len(header) or any(len(r) != len(header) for r in rows):
        raise ValueError("every row and the alignment need one entry per column")
    cells = [[_cell(c) for c in row] for row in [header, *rows]]
    widths = [min(MAX_RULE, max(3, *(len(row[i]) for row in cells))) for i in range(len(header))]
    rule = [("-" * w + ":") if a == "r" else (":" + "-" * w) for a, w in zip(align, widths)]
    lines = ["| " + " | ".join(row) + " |" for row in cells]
    return "\n".join([lines[0], "|" + "|".join(rule) + "|", *lines[1:]])


def _cell(value: object) -> str:
    text = str(value).replace("\n", " ")
    parts = text.split("`")
    # even parts are outside code spans: escape their pipes
    return "`".join(p.replace("|", "\\|") if i % 2 == 0 else p for i, p in enumerate(parts))


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


# ---------------------------------------------------------------- outcome-only against shaped RL


def final_eval(run: Run) -> dict[str, float]:
    """Held-out final accuracy and step validity at a run's first and last checkpoints (ch2).

    Accuracy is the expected exact-verifier reward on the held-out prompts
    (``heldout_expected_reward``, 16 samples per prompt at T = 1); step
    validity is the mean process score of the same samples.
    """
    first, last = run.evals[0], run.evals[-1]
    return {"seed": run.seed, "start_accuracy": first["heldout_expected_reward"],
            "end_accuracy": last["heldout_expected_reward"], "start_validity": first["heldout_step_validity"],
            "end_validity": last["heldout_step_validity"], "end_greedy": last["heldout_greedy_accuracy"]}


def compare(runs_by_name: dict[str, list[Run]]) -> dict[str, list[dict[str, float]]]:
    """:func:`final_eval` of every seed of every run, keyed by run name (ch2)."""
    return {name: [final_eval(r) for r in runs] for name, runs in runs_by_name.items()}


def spread(values: list[float]) -> tuple[float, float, float]:
    """Mean, minimum and maximum of a metric over seeds."""
    return float(np.mean(values)), float(np.min(values)), float(np.max(values))


def comparison_markdown(table: dict[str, list[dict[str, float]]]) -> str:
    """Start and end accuracy and validity per run, as mean and range over seeds (ch2)."""
    rows = []
    for name, per_seed in table.items():
        cells = [name, str(len(per_seed))]
        for key in ("start_accuracy", "end_accuracy", "start_validity", "end_validity"):
            mean, low, high = spread([r[key] for r in per_seed])
            cells.append(f"{mean:.2f} ({low:.2f}-{high:.2f})")
        rows.append(cells)
    header = ["run", "seeds", "accuracy at start", "accuracy at end", "validity at start", "validity at end"]
    return markdown_table(header, rows, "lrrrrr")


def paired(table: dict[str, list[dict[str, float]]], first: str, second: str) -> list[tuple[dict, dict]]:
    """The rows of two runs of a :func:`compare` table, paired by seed; ValueError when their seeds differ (ch2)."""
    a, b = (sorted(table[name], key=lambda r: r["seed"]) for name in (first, second))
    if [r["seed"] for r in a] != [r["seed"] for r in b]:
        raise ValueError(f"runs {first!r} and {second!r} have different seeds")
    return list(zip(a, b))


def wins(table: dict[str, list[dict[str, float]]], better: str, worse: str, key: str) -> int:
    """On how many seeds run ``better`` ends with a strictly higher ``key`` than run ``worse`` (ch2)."""
    return sum(a[key] > b[key] for a, b in paired(table, better, worse))


def comparison_claims(table: dict[str, list[dict[str, float]]], shaped: str = "process-shaped",
                      outcome: str = "process-outcome") -> dict[str, float | int]:
    """The numbers chapter 2's comparison text is written from: seed counts and means over seeds.

    ``shaped_validity_wins``/``shaped_accuracy_wins``: seeds on which the
    shaped run ends higher; ``outcome_validity_fell``/``shaped_validity_fell``:
    seeds on which a run ends with lower step validity than it started;
    ``<run>_<metric>``: the mean over seeds of a :func:`final_eval` field;
    ``validity_gap``/``accuracy_gap`` (with ``_min``/``_max``): shaped minus
    outcome-only at the end, mean and range over seeds.
    """
    claims: dict[str, float | int] = {
        "seeds": len(table[shaped]),
        "shaped_validity_wins": wins(table, shaped, outcome, "end_validity"),
        "shaped_accuracy_wins": wins(table, shaped, outcome, "end_accuracy"),
    }
    for key in ("validity", "accuracy"):
        gaps = [b[f"end_{key}"] - a[f"end_{key}"] for a, b in paired(table, outcome, shaped)]
        claims[f"{key}_gap"], claims[f"{key}_gap_min"], claims[f"{key}_gap_max"] = spread(gaps)
    for label, name in (("outcome", outcome), ("shaped", shaped)):
        claims[f"{label}_validity_fell"] = sum(r["end_validity"] < r["start_validity"] for r in table[name])
        claims[f"{label}_accuracy_rose"] = sum(r["end_accuracy"] > r["start_accuracy"] for r in table[name])
        for key in ("start_accuracy", "end_accuracy", "start_validity", "end_validity"):
            claims[f"{label}_{key}"] = spread([r[key] for r in table[name]])[0]
    return claims


def seeds_phrase(k: int, n: int) -> str:
    """``k`` of ``n`` seeds in words: "every seed", "no seed" or "2 of 3 seeds" (ch2's computed wording)."""
    return "every seed" if k == n else ("no seed" if k == 0 else f"{k} of {n} seeds")


def eval_curve(run: Run, key: str) -> tuple[list[int], list[float]]:
    """A held-out metric at every checkpoint of a run (``heldout_expected_reward``, ``heldout_step_validity``)."""
    return [e["step"] for e in run.evals], [e[key] for e in run.evals]


# ---------------------------------------------------------------- fig-outcome-process-reward


def step_notes(j: Judged) -> list[tuple[str, bool, str]]:
    """Each expected step of a judged rollout: (the text written there, valid, the scorer's note) (ch2)."""
    fields = j.completion.split(rw.EOT)[0].split(",")
    notes = j.process_reason.split("; ")
    return [(fields[i] if i < len(fields) else "", valid, notes[i].replace("!=", "\u2260"))
            for i, valid in enumerate(j.steps)]


def figure_rollouts(judged: list[Judged]) -> list[Judged]:
    """Two real rollouts for fig-outcome-process-reward: a disagreement and, if possible, an agreement.

    The disagreement is the first rollout whose right answer comes through
    an invalid step (else the first with partial credit), preferring one
    whose prompt also has an accepted rollout with valid steps; that rollout
    is the agreement (any such rollout if no prompt has both).
    """
    good = [j for j in judged if j.outcome_pass and j.process_pass]
    agreeing = {j.prompt for j in good}
    bads = [j for j in judged if j.kind == RIGHT_INVALID] or [j for j in judged if j.kind == PARTIAL_CREDIT]
    bad = next((j for j in bads if j.prompt in agreeing), bads[0] if bads else None)
    if bad is None:
        return good[:1]
    same = [j for j in good if j.prompt == bad.prompt]
    return (same or good)[:1] + [bad]


def draw_rollout(ax: Axes, j: Judged, y: float, title: str = "") -> None:
    """Draw one judged rollout on ``ax`` at height ``y``: prompt, scored steps, end mark, outcome (ch2).

    Each step is a box coloured by validity with the process scorer's note
    under it; the last box holds the outcome verifier's status and reward,
    with the process score under it. ``title`` is written above the row.
    """
    from matplotlib.patches import FancyBboxPatch

    from .plots import GREY, RED, STATUS_COLOURS, TEAL

    def box(x: float, w: float, text: str, colour: str, note: str, note_colour: str) -> None:
        ax.add_patch(FancyBboxPatch((x, y - 0.3), w, 0.6, boxstyle="round,pad=0.02", facecolor=colour,
                                    edgecolor="white"))
        ax.text(x + w / 2, y, text, ha="center", va="center", color="white", fontsize=10, family="monospace")
        ax.text(x + w / 2, y - 0.45, note, ha="center", va="top", color=note_colour, fontsize=8)

    if title:
        ax.text(0.0, y + 0.45, title, ha="left", va="bottom", fontsize=9, color=GREY, style="italic")
    box(0.0, 2.2, j.prompt, GREY, "prompt", GREY)
    x = 2.4
    for i, (text, valid, note) in enumerate(step_notes(j)):
        colour = TEAL if valid else RED
        box(x, 1.3, f"{text}," if i == 0 else text or "(none)", colour, note.split(" ", 2)[-1], colour)
        x += 1.5
    end = j.completion[len(j.completion.split(rw.EOT)[0]):] or "(budget)"
    box(x, 0.8, end, GREY, "end", GREY)
    box(x + 1.0, 2.6, f"{j.status}, reward {j.reward:.0f}", STATUS_COLOURS[j.status],
        f"process score {j.process:.1f}", TEAL if j.process_pass else RED)


def plot_seeds(ax: Axes, curves: list[tuple[list[int], list[float]]], colour: str, label: str) -> None:
    """Draw one curve per seed (thin) and their mean (thick, labelled) on ``ax`` (ch2's comparison figure).

    All curves must share their x values (the same checkpoint or training steps).
    """
    xs = curves[0][0]
    if any(list(x) != list(xs) for x, _ in curves):
        raise ValueError("the seeds' curves must share their steps")
    for _, ys in curves:
        ax.plot(xs, ys, color=colour, alpha=0.35, linewidth=0.9)
    ax.plot(xs, np.mean([ys for _, ys in curves], axis=0), color=colour, linewidth=2.2,
            label=f"{label} (mean of {len(curves)} seeds)")
