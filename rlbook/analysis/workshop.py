"""Chapter 1's workshop: the base policy sampled for real, and one RL update taken apart.

Everything here serves chapter 1 (the RL loop). It picks the workshop's three
held-out sums from a run by code, draws the figures (the loop diagram, the
answers of 32 samples coloured by verdict, expected reward against
temperature, the spread of a sampled estimate), computes the exact probability
of a whole answer string, performs one real RL update on one prompt's group,
and builds the interactive workshop for Jupyter.

Under the exact verifier (version 1.0) exactly one completion earns reward on a
prompt, the canonical ``task.completion``, so :func:`answer_probability` of
that string *is* the prompt's expected reward: no sampling error at all. The
chapter uses it to check what the samples estimate.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, replace

import matplotlib.pyplot as plt
import numpy as np
import torch

from rlbook.core import rewards as rw
from rlbook.core import rl
from rlbook.core.evaluate import EvalResult, evaluate
from rlbook.core.evaluate import eval_seed as core_eval_seed
from rlbook.core.policy import Policy
from rlbook.core.sampling import sample
from rlbook.core.train import adamw
from rlbook.core.world import BUDGET, Task, encode, split
from rlbook.figures import style as house
from rlbook.runs import MAIN, Run, spec

N_SAMPLES = 32
"""Samples per sum in the workshop (the course plate's 32)."""

KINDS = ("confidently right", "never right", "uncertain")
"""The three kinds of held-out sum the workshop shows, in the order it shows them."""
ALL_KINDS = ("confidently right", "uncertain", "rarely right", "never right")
"""Every kind of :func:`classify_prompts`, from the most often right to the least: a partition of the sums."""
RIGHT_BAR = 0.8
"""The share of right samples from which a sum is confidently right (:func:`classify_prompts`)."""
RARE_BAR = 0.2
"""The share of right samples below which a sum that was ever right is rarely right (:func:`classify_prompts`)."""
DOMINANT = 0.5
"""The share of the samples a favourite answer needs to dominate: a policy is confident in an answer it gives at
least this often (chapter 1 calls a never-right sum confidently wrong only then)."""

DEMO_LR = 1e-5
"""Learning rate of :func:`one_update`, the single-group update of chapter 1.

Adam's first step moves every weight by about the learning rate whatever the
size of its gradient. On a batch of one prompt's group the main run's 3e-4
therefore overshoots, so the demonstration takes a smaller step with the same
loss and optimiser; chapter 3 studies the size of the update.
"""


def eval_seed(run: Run, step: int) -> int:
    """The sampler seed of a run's recorded checkpoint evaluation (:func:`rlbook.core.evaluate.eval_seed`).

    Base runs evaluate both of their checkpoints with the seed of an RL run's
    step 0, so that the base policy gets the same numbers everywhere.
    """
    return core_eval_seed(run.seed, 0 if spec(run.name).rl is None else step)


def recorded_samples(run: Run, step: int = 1) -> EvalResult:
    """The held-out samples behind ``run``'s recorded evaluation at checkpoint ``step`` (chapter 1).

    The samples (32 per sum, T = 1, budget 4, exact verifier) are drawn again
    with the recorded sampler seed; a ValueError says so if their per-prompt
    rewards differ from the record, so the chapter's figures and the run
    record can never silently disagree.
    """
    result = evaluate(
        run.policy(step),
        split("heldout"),
        n=N_SAMPLES,
        temperature=1.0,
        budget=BUDGET,
        verifier=rw.get_verifier("exact"),
        seed=eval_seed(run, step),
    )
    recorded = np.asarray(run.eval_at(step)["heldout_per_prompt"])
    if not np.allclose(result.per_prompt, recorded, atol=1e-4):
        raise ValueError(f"re-drawn samples of {run.name} seed {run.seed} step {step} differ from its record")
    return result


def classify_prompts(result: EvalResult, right: float = RIGHT_BAR, rare: float = RARE_BAR) -> dict:
    """Sort every task into one of :data:`ALL_KINDS` by its share of right samples: a partition of the tasks.

    Confidently right from ``right`` up (the right answer is then the
    favourite by far), uncertain from ``rare`` up to below ``right``, rarely
    right above 0 and below ``rare``, never right at 0 (no sample right).
    Every task lands in exactly one kind, so the counts add up to the number
    of tasks. Chapter 1's workshop picks its three sums from this, never by
    hand. The bar for confidently right is 0.8 rather than 0.9 because a weak
    SFT draw can leave no held-out sum at 0.9 (one seed of ``base`` topped
    out at 27 of 32 samples right in one numerical variant), while in nine
    variants every seed had at least six sums at 0.8 or more.
    """
    kinds: dict[str, list[Task]] = {kind: [] for kind in ALL_KINDS}
    for task, rate in zip(result.tasks, result.per_prompt):
        if rate >= right:
            kinds["confidently right"].append(task)
        elif rate >= rare:
            kinds["uncertain"].append(task)
        elif rate > 0:
            kinds["rarely right"].append(task)
        else:
            kinds["never right"].append(task)
    return kinds


def pick_workshop_sums(result: EvalResult, policy: Policy | None = None) -> dict[str, Task]:
    """One sum of each kind, chosen by code from an evaluation (chapter 1's workshop).

    Uses :func:`classify_prompts`. Among the confidently right
    it takes the highest success rate; among the never right (no sample
    right) the one whose right answer has the smallest exact probability when
    ``policy`` is given (the sum a group of samples is least likely to get
    right), then the one whose commonest answer is most frequent; among the
    uncertain the rate closest to one half. Ties among the confidently right
    go to the larger exact probability of the right answer when ``policy`` is
    given; other ties go to the first in split order. A ValueError names any
    kind with no sum.
    """
    kinds = classify_prompts(result)
    empty = [k for k in KINDS if not kinds[k]]
    if empty:
        raise ValueError(f"no held-out sum is {', '.join(empty)} in this evaluation")
    rate = {t: float(r) for t, r in zip(result.tasks, result.per_prompt)}
    top_count = {t: result.answers(i)[0][1] for i, t in enumerate(result.tasks)}
    exact = {
        t: exact_expected_reward(policy, t) if policy is not None else 0.0
        for t in kinds["confidently right"] + kinds["never right"]
    }
    return {
        "confidently right": max(kinds["confidently right"], key=lambda t: (rate[t], exact[t])),
        "never right": min(kinds["never right"], key=lambda t: (exact[t], -top_count[t])),
        "uncertain": min(kinds["uncertain"], key=lambda t: abs(rate[t] - 0.5)),
    }


def _completion_logits(policy: Policy, prompt: str, completion: str) -> tuple[torch.Tensor, torch.Tensor]:
    """The policy's logits at each character of ``completion`` after ``prompt``, and those characters' ids."""
    if not completion:
        raise ValueError("a completion has at least one character")
    ids = torch.tensor([encode(prompt + completion)])
    with torch.no_grad():
        logits, _ = policy(ids[:, :-1])
    return logits[0, -len(completion) :], ids[0, -len(completion) :]


def answer_probability(policy: Policy, prompt: str, completion: str, temperature: float = 1.0) -> float:
    """The probability that ``policy`` writes exactly ``completion`` after ``prompt`` (chapter 1).

    The product of the per-character probabilities, each read from the
    policy's softmax at ``temperature`` given the prompt and the characters
    before it: ``P(y | x) = prod_t pi(y_t | x, y_<t)``. A completion without
    the end-of-turn mark is an episode cut by the budget, and its probability
    is that of its characters alone.
    """
    logits, ids = _completion_logits(policy, prompt, completion)
    logp = torch.log_softmax(logits / temperature, dim=-1).gather(-1, ids[:, None])
    return float(logp.sum().exp())


def exact_expected_reward(policy: Policy, task: Task, temperature: float = 1.0) -> float:
    """The exact expected reward of ``task`` under the exact verifier: P(the canonical answer) (chapter 1)."""
    return answer_probability(policy, task.prompt, task.completion, temperature)


def exact_reward_curve(policy: Policy, task: Task, temperatures) -> np.ndarray:
    """:func:`exact_expected_reward` at each temperature, from one forward pass (chapter 1)."""
    logits, ids = _completion_logits(policy, task.prompt, task.completion)
    temps = torch.as_tensor(np.asarray(temperatures, dtype=np.float32))[:, None, None]
    logp = torch.log_softmax(logits[None] / temps, dim=-1).gather(-1, ids[None, :, None].expand(len(temps), -1, 1))
    return logp.sum(dim=(1, 2)).exp().numpy().astype(float)


def _show(completion: str) -> str:
    """A completion as the figures print it, one mark per character: a newline as "⏎", a space as "␣", and the
    end-of-turn mark as the ``#`` it is."""
    return completion.replace("\n", "\u23ce").replace(" ", "\u2423")


def probability_text(p: float) -> str:
    """A probability for a title: two decimals, or two significant digits below 0.01 so that it never reads as
    zero ("0.0031", "2.4e-05") (chapter 1's workshop)."""
    return f"{p:.2f}" if p >= 0.01 or p == 0 else f"{p:.2g}"


def draw_answers(
    ax, task: Task, completions: list[str], statuses: list[str], title: str = "", rows: int | None = None
) -> None:
    """Bars of the distinct answers to one sum with their counts, coloured by the verifier's status.

    ``rows`` fixes the number of bar slots, so that panels side by side have bars of one thickness.
    """
    counts: dict[str, list] = {}
    for text, status in zip(completions, statuses):
        counts.setdefault(text, [0, status])[0] += 1
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1][0], kv[0]))
    ax.barh(
        range(len(ranked)),
        [c for _, (c, _) in ranked],
        height=0.7,
        color=[house.STATUS_COLOURS[s] for _, (_, s) in ranked],
    )
    ax.set_yticks(range(len(ranked)), [_show(text) for text, _ in ranked], family="monospace")
    ax.set_ylim(max(rows or 0, len(ranked), 3) - 0.5, -0.5)
    ax.set_xlabel("samples")
    ax.set_title(title or f"{task.name} = {task.answer}")


def reward_vs_temperature(policy: Policy, tasks: list[Task], temperatures, n: int = 256, seed: int = 0) -> np.ndarray:
    """Sampled expected reward of each task at each temperature, shape (tasks, temperatures) (chapter 1)."""
    return np.stack(
        [
            evaluate(policy, tasks, n=n, temperature=float(t), seed=seed + k).per_prompt
            for k, t in enumerate(temperatures)
        ],
        axis=1,
    )


@dataclass
class Spread:
    """How much a sampled estimate of one prompt's expected reward varies with the number of samples."""

    task: Task
    p: float
    ns: list[int]
    sd: np.ndarray
    repeats: int

    @property
    def binomial_sd(self) -> np.ndarray:
        """The spread sampling theory predicts: sqrt(p (1 - p) / n)."""
        return np.sqrt(self.p * (1 - self.p) / np.asarray(self.ns))


def estimate_spread(
    policy: Policy, task: Task, ns=(1, 2, 4, 8, 16, 32, 64), repeats: int = 100, seed: int = 0
) -> Spread:
    """Draw ``repeats`` fresh estimates of ``task``'s expected reward for each sample count (chapter 1).

    Every estimate is the mean reward of ``n`` new samples from the policy at
    T = 1 (real resampling, not a bootstrap); ``sd`` is the standard deviation
    of the ``repeats`` estimates for each ``n``. ``p`` is the exact expected
    reward from :func:`exact_expected_reward`.
    """
    verifier = rw.get_verifier("exact")
    gen = torch.Generator().manual_seed(seed)
    sds = []
    for n in ns:
        rollouts = sample(policy, [task.prompt], n=n * repeats, generator=gen)
        rewards, _ = rw.score(verifier, rollouts.prompts, rollouts.completions())
        sds.append(rewards.reshape(repeats, n).mean(axis=1).std())
    return Spread(task, exact_expected_reward(policy, task), list(ns), np.array(sds), repeats)


@dataclass
class UpdateDemo:
    """One RL update on one prompt's group: the group, its credit, and each answer's probability before and after."""

    task: Task
    completions: list[str]
    rewards: np.ndarray
    statuses: list[str]
    advantages: np.ndarray
    answers: list[str]
    before: np.ndarray
    after: np.ndarray
    stats: dict

    @property
    def baseline(self) -> float:
        """The group-mean baseline subtracted from each reward."""
        return float(self.rewards.mean())

    def count(self, answer: str) -> int:
        return self.completions.count(answer)

    def advantage_of(self, answer: str) -> float | None:
        """The advantage the update gave each sample of ``answer`` (None if it was not sampled)."""
        rows = [a for c, a in zip(self.completions, self.advantages) if c == answer]
        return float(rows[0]) if rows else None

    def table(self) -> list[tuple]:
        """(answer, count, reward, advantage, P before, P after), most probable first."""
        verifier = rw.get_verifier("exact")
        rows = [
            (a, self.count(a), verifier(self.task.prompt, a).reward, self.advantage_of(a), b, c)
            for a, b, c in zip(self.answers, self.before, self.after)
        ]
        return sorted(rows, key=lambda r: -r[4])


def one_update(
    policy: Policy, task: Task, group_size: int = 16, seed: int = 0, lr: float = DEMO_LR, cfg: rl.RLConfig | None = None
) -> UpdateDemo:
    """Sample a group for one prompt, score it, credit it and take one real gradient step (chapter 1).

    The steps are the book's own: :func:`rlbook.core.sampling.sample`,
    :func:`rlbook.core.rewards.score`, :func:`rlbook.core.rl.credit` (group-mean
    baseline), :class:`rlbook.core.rl.Batch` and :func:`rlbook.core.rl.update` with the
    ``main`` run's loss (PPO clip, token mean) and AdamW at ``lr``. The
    policy passed in is not changed: the update is applied to a copy. The
    answers measured are the distinct sampled ones plus the right one.
    """
    cfg = replace(cfg or MAIN, group_size=group_size, lr=lr)
    learner = copy.deepcopy(policy)
    rollouts = sample(
        learner,
        [task.prompt],
        n=group_size,
        temperature=cfg.temperature,
        budget=cfg.budget,
        generator=torch.Generator().manual_seed(seed),
    )
    completions = rollouts.completions()
    rewards, statuses = rw.score(rl.make_verifier(cfg), rollouts.prompts, completions)
    advantages, used = rl.credit(cfg, rewards, statuses)
    answers = list(dict.fromkeys(completions + [task.completion]))
    before = np.array([answer_probability(learner, task.prompt, a) for a in answers])
    optimiser = adamw(learner.parameters(), cfg.lr)
    stats = rl.update(learner, optimiser, rl.Batch(0, rollouts, rewards, statuses, advantages, used), cfg)
    after = np.array([answer_probability(learner, task.prompt, a) for a in answers])
    return UpdateDemo(
        task, completions, np.asarray(rewards), statuses, advantages.numpy(), answers, before, after, stats
    )


def rollout_record(policy: Policy, task: Task, seed: int = 0) -> dict:
    """One real rollout as the book records it, with the verifier's verdict (Exercise 1.1).

    The first of up to 64 samples that ended with the end-of-turn mark after
    at least one digit, so that it has two actions or more, and whose first
    two characters (actions 0 and 1) differ, so that a reader who counts the
    actions from 1 instead of 0 names a different action. Its fields are
    those of :meth:`rlbook.core.sampling.Rollouts.as_rows` plus ``reward``,
    ``status`` and ``reason``.
    """
    rollouts = sample(policy, [task.prompt], n=64, generator=torch.Generator().manual_seed(seed))
    rows = rollouts.as_rows()
    two_different = (r for r in rows if r["termination"] == "end-of-turn" and len(set(r["completion"][:2])) == 2)
    row = next(two_different, None)
    if row is None:
        raise ValueError(f"no sample for {task.name} has two actions or more, the first two different")
    verdict = rw.get_verifier("exact")(row["prompt"], row["completion"])
    return {**row, "reward": verdict.reward, "status": verdict.status, "reason": verdict.reason}


def interactive_workshop(
    policy: Policy, tasks: list[Task], n: int = N_SAMPLES, budget: int = BUDGET, start: Task | None = None
):
    """The workshop for Jupyter: pick a sum and a temperature, see ``n`` fresh samples (chapter 1).

    Returns an ipywidgets box that opens on ``start`` (default: the first of
    ``tasks``); every change of sum, every release of the temperature slider
    (not each step of a drag), and every click on "sample again" draws ``n``
    new samples and redraws the answers coloured by verdict with their
    sampled and exact expected reward.
    """
    import ipywidgets as widgets
    from IPython.display import display

    wide = {"description_width": "initial"}
    picker = widgets.Dropdown(
        options=[(t.name, t) for t in tasks], value=start or tasks[0], description="sum", style=wide
    )
    temperature = widgets.FloatSlider(
        value=1.0, min=0.1, max=2.0, step=0.1, description="temperature", continuous_update=False, style=wide
    )
    again = widgets.Button(description="sample again")
    out = widgets.Output()
    draws = iter(range(10**9))
    verifier = rw.get_verifier("exact")

    def redraw(*_):
        task, temp = picker.value, temperature.value
        rollouts = sample(
            policy,
            [task.prompt],
            n=n,
            temperature=temp,
            budget=budget,
            generator=torch.Generator().manual_seed(next(draws)),
        )
        rewards, statuses = rw.score(verifier, rollouts.prompts, rollouts.completions())
        fig, ax = house.figure(5, 3)
        title = (
            f"{task.name} at T = {temp:.1f}: sampled {probability_text(rewards.mean())}, "
            f"exact {probability_text(exact_expected_reward(policy, task, temp))}"
        )
        draw_answers(ax, task, rollouts.completions(), statuses, title)
        with out:
            out.clear_output(wait=True)
            display(fig)
        plt.close(fig)

    picker.observe(redraw, names="value")
    temperature.observe(redraw, names="value")
    again.on_click(redraw)
    redraw()
    return widgets.VBox([widgets.HBox([picker, temperature, again]), out])


def try_it(groups) -> list[dict]:
    """The "Try it" of chapter 1: mean reward and group-centred advantages of each group of rewards."""
    from rlbook.core.advantages import group_centered

    return [
        {"rewards": list(g), "mean": float(np.mean(g)), "advantages": group_centered(list(g)).tolist()} for g in groups
    ]
