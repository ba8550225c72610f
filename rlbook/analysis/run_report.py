"""What a report of an RL run states, and what its run record lets a reviewer check (chapter 8).

- :func:`evaluation_report`: the items an evaluation of an RL run reports,
  at the start and at the selected checkpoint;
- :func:`reward_hack_count`: rollouts a run's own verifier paid that the
  exact verifier rejects;
- :func:`record_rows`, :func:`record_differences` and
  :func:`interrupted_copy`: the run record as a table, two records compared,
  and a record as it reads after an interruption;
- :func:`zero_variance_rollouts` and :func:`process_disagreements`: the
  figures behind the chapter's misconceptions.
"""

from __future__ import annotations

from rlbook.analysis import audit
from rlbook.analysis.selection import CheckpointScores, checkpoint_scores
from rlbook.core import rewards as rw
from rlbook.core.evaluate import EvalResult
from rlbook.core.stats import Estimate
from rlbook.record.display import as_table


def reward_hack_count(run) -> tuple[int, int]:
    """(rollouts the run's own verifier paid but the exact verifier rejects, all rollouts) over ``run``'s training."""
    hits = total = 0
    for stored in run.rollouts:
        rows = audit.loophole_rows(audit.from_stored(stored))
        hits += int(rows.sum())
        total += len(rows)
    return hits, total


def _ci(e: Estimate) -> str:
    return f"{e.value:.2f} [{e.lo:.2f}, {e.hi:.2f}]"


NOT_APPLICABLE = "–"
"""The cell of :func:`evaluation_report` where an item has no value at step 0 (no rollouts yet), as the book's other
tables mark a missing value."""


def evaluation_report(run, hack_run, selected: CheckpointScores, retained: dict[int, float]) -> list[list[str]]:
    """What an evaluation of ``run`` reports: rows (item, at step 0, at the selected checkpoint) (chapter 8).

    ``hack_run`` supplies the reward-hacking cases (a run against the
    fail-open verifier), ``selected`` is the chosen checkpoint of ``run`` and
    ``retained`` its retained-capability score by step. Intervals are 95 %
    over prompts.
    """
    scores = checkpoint_scores(run)
    first = scores[0]
    rec = run.record
    verifier = f"{rec['verifier']['name']} {rec['verifier']['version']}"
    lengths = dict(zip(run.metric("step"), run.metric("completion_len")))
    evaluation = rec["evaluations"][0]
    hacks, hack_total = reward_hack_count(hack_run)
    return [
        ["training reward (training prompts)", _ci(first.train_reward), _ci(selected.train_reward)],
        ["task accuracy (held-out prompts, exact 1.0)", _ci(first.heldout), _ci(selected.heldout)],
        ["answer length (characters, training batch)", f"{lengths[1]:.2f} (step 1)", f"{lengths[selected.step]:.2f}"],
        ["retained capability (plain a+b=, greedy)", f"{retained[0]:.2f}", f"{retained[selected.step]:.2f}"],
        [
            "budget per answer; evaluation samples",
            (
                f"{rec['sampling']['token_budget']} characters; {evaluation['n']} per prompt at T = "
                f"{evaluation['temperature']:g}"
            ),
            "the same",
        ],
        [
            "training rollouts; generated characters",
            NOT_APPLICABLE,
            f"{rec['cost']['rollouts']:,}; {rec['cost']['generated_tokens']:,}",
        ],
        ["verifier: training; evaluation", f"{verifier}; exact 1.0", "the same"],
        [
            f"reward-hacking cases (`{hack_run.name}` run)",
            NOT_APPLICABLE,
            f"{hacks:,} of {hack_total:,} rollouts paid by {hack_run.record['verifier']['name']}, rejected by exact",
        ],
    ]


def record_rows(record: dict) -> list[list[str]]:
    """The run record as (field, value) rows for a table (:func:`rlbook.record.display.as_table`), fields as code."""
    return [[f"`{field}`", value] for field, value in as_table(record)]


def record_differences(
    a: dict, b: dict, skip: tuple[str, ...] = ("run_id", "created", "cost", "versions", "checkpoints", "evaluations")
) -> list[tuple]:
    """Rows of :func:`rlbook.record.as_table` whose values differ between records ``a`` and ``b``.

    Fields that differ between any two runs (ids, times, cost, checkpoints
    and evaluations) are skipped by default: what is left says how the two
    runs were set up differently, and what their training produced.
    """
    rows_a, rows_b = dict(as_table(a)), dict(as_table(b))
    keys = list(rows_a) + [k for k in rows_b if k not in rows_a]
    return [
        (k, rows_a.get(k, "absent"), rows_b.get(k, "absent"))
        for k in keys
        if k.split(".")[0] not in skip and rows_a.get(k) != rows_b.get(k)
    ]


def interrupted_copy(record: dict, step: int, last_checkpoint: str | None) -> dict:
    """A copy of ``record`` as it would read had the run stopped after ``step`` (chapter 8).

    Status ``interrupted``, ``steps_completed`` the step it stopped after, and
    an ``interrupted`` entry naming the step and the checkpoint to resume
    from; the checkpoints and evaluations after ``step`` are dropped, since
    they were never made.
    """
    copy = dict(record, status="interrupted", interrupted={"step": step, "last_checkpoint": last_checkpoint})
    if "steps_completed" in record:
        copy["steps_completed"] = step
    copy["checkpoints"] = [c for c in record["checkpoints"] if c["step"] <= step]
    copy["evaluations"] = [e for e in record["evaluations"] if e["step"] <= step]
    return copy


def zero_variance_rollouts(run) -> tuple[int, int]:
    """(rollouts in groups whose samples all got the same reward, all rollouts) over ``run``'s training.

    Such a group has advantage zero for every sample, so its rollouts cost
    sampling and scoring but move no weight (chapters 3 and 8).
    """
    zero = total = 0
    for metrics, stored in zip(run.metrics, run.rollouts):
        size = stored["tokens"].shape[0]
        zero += round(metrics["zero_variance_frac"] * size)
        total += size
    return int(zero), int(total)


def process_disagreements(result: EvalResult) -> dict[str, float]:
    """Where outcome and process scores of multi-step samples part ways (chapter 8's misconceptions).

    ``right_but_invalid_step``: share of accepted answers with at least one
    invalid step (the right total reached through a wrong partial sum);
    ``wrong_but_consistent``: share of rejected answers whose first step is
    wrong but whose second step is consistent with it, so that the process
    scorer still gives them 0.5 (:func:`rlbook.core.rewards.process_score` judges
    step 2 against the policy's own step 1). Also the counts behind the two
    shares: ``invalid_step`` of ``accepted``, ``consistent`` of ``rejected``.
    """
    accepted, steps = [], []
    for task, statuses, completions in zip(result.tasks, result.statuses, result.completions):
        for status, text in zip(statuses, completions):
            accepted.append(status == "accepted")
            steps.append(rw.process_score(task.prompt, text).steps)
    right = [s for s, a in zip(steps, accepted) if a]
    wrong = [s for s, a in zip(steps, accepted) if not a]
    invalid = sum(not all(s) for s in right)
    consistent = sum(s == (False, True) for s in wrong)
    return {
        "right_but_invalid_step": invalid / len(right) if right else 0.0,
        "wrong_but_consistent": consistent / len(wrong) if wrong else 0.0,
        "invalid_step": invalid,
        "accepted": len(right),
        "consistent": consistent,
        "rejected": len(wrong),
    }
