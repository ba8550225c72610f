"""The book's world and runs at a glance: tables built from the package itself (the page "The world at a glance").

Nothing here is typed twice. The splits are counted from
:func:`rlbook.core.world.split`, the model card is read from a loaded
policy, the recipes of ``base`` and ``main`` are their configurations said
in words, each named run's change is the difference of its configuration
from the run it is compared with, also in words
(:mod:`rlbook.analysis.setting_words`), and the notation names the rlbook
object behind each symbol.
(The glossary is read from the chapters themselves: :mod:`rlbook.publish.glossary`.)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from rlbook.analysis import listing
from rlbook.analysis.setting_words import change_words, recipe_words
from rlbook.analysis.tables import markdown_table
from rlbook.core import advantages, evaluate, losses, rewards, rl, sampling, world
from rlbook.core.adamw import AdamW
from rlbook.core.config import RLConfig
from rlbook.core.policy import Policy
from rlbook.core.train import PretrainConfig, SFTConfig
from rlbook.runs import RUNS, RunSpec, process_model
from rlbook.runs.preference import LEARNERS, Learner

# ---------------------------------------------------------------- the task and its splits

SPLIT_ROLES = {
    "sft": "the examples of supervised fine-tuning",
    "train": "the RL prompts (the SFT examples and more)",
    "heldout": "never trained on: validation and test together",
    "validation": "choosing a checkpoint (chapter 8)",
    "test": "scoring the checkpoint chosen",
}


def split_facts(world_name: str = "single") -> dict[str, int]:
    """The size of each split of a world, after checking how the splits nest.

    ``sft`` lies inside ``train``, ``heldout`` is ``validation`` plus ``test``,
    and no held-out prompt is a training prompt; a ValueError says which of
    these fails.
    """
    prompts = {name: {t.prompt for t in world.split(name, world_name)} for name in SPLIT_ROLES}
    if not prompts["sft"] <= prompts["train"]:
        raise ValueError(f"{world_name}: the SFT split is not inside the training split")
    if prompts["heldout"] != prompts["validation"] | prompts["test"] or prompts["validation"] & prompts["test"]:
        raise ValueError(f"{world_name}: held-out is not validation and test side by side")
    if prompts["heldout"] & prompts["train"]:
        raise ValueError(f"{world_name}: a held-out prompt is also a training prompt")
    return {name: len(p) for name, p in prompts.items()}


def splits_markdown() -> str:
    """The splits of the three worlds (single-step, multi-step, worked) with their sizes and roles, as a table."""
    single, multi, worked = split_facts("single"), split_facts("multi"), split_facts("worked")
    rows = [[f"`{name}`", single[name], multi[name], worked[name], role] for name, role in SPLIT_ROLES.items()]
    return markdown_table(["split", "single-step", "multi-step", "worked", "used for"], rows)


def task_markdown() -> str:
    """The vocabulary and one example of each world (the worked world's in both styles), as a table."""
    one, three = world.split("sft")[-1], world.split("sft", "multi")[-1]
    shown = " ".join(f"`{ch}`" if ch.strip() else "(space)" if ch == " " else "(newline)" for ch in world.VOCAB)
    direct = world.split("sft", "worked")[-1]
    worked = world.WorkedTask(direct.operands, style="worked")
    rows = [
        ["vocabulary", f"{len(world.VOCAB)} characters: {shown}; the worked world adds `{world.SEPARATOR}`"],
        ["single-step prompt and answer", f"`{one.prompt}` `{one.completion}`"],
        ["multi-step prompt and answer", f"`{three.prompt}` `{three.completion}`"],
        [
            "worked prompt, direct and worked answers",
            f"`{direct.prompt}` `{direct.completion}` or `{worked.completion}`",
        ],
        ["end of the answer", f"`{world.EOT}` (or the token budget)"],
    ]
    return markdown_table(["", ""], rows)


# ---------------------------------------------------------------- the model and the recipes


def model_card(policy: Policy) -> dict[str, int]:
    """Parameters, layers, heads, width, context and vocabulary of a policy, read from the policy."""
    cfg = policy.cfg
    return {
        "parameters": policy.num_parameters(),
        "layers": cfg.n_layer,
        "attention heads": cfg.n_head,
        "width": cfg.d_model,
        "context (characters)": cfg.block_size,
        "vocabulary": cfg.vocab_size,
    }


def model_card_markdown(policy: Policy) -> str:
    """:func:`model_card` as a two-column table."""
    return markdown_table(["", ""], [[key, f"{value:,}"] for key, value in model_card(policy).items()])


def _settings(config: object, skip: tuple[str, ...] = ("faults", "guard", "verifier_version")) -> dict[str, object]:
    assert dataclasses.is_dataclass(config)  # a stage's settings: PretrainConfig, SFTConfig or RLConfig
    return {f.name: getattr(config, f.name) for f in dataclasses.fields(config) if f.name not in skip}


def _stages(base: RunSpec, main: RunSpec) -> list[tuple[str, RunSpec, PretrainConfig | SFTConfig | RLConfig]]:
    pretrain, sft = base.base_configs()
    return [("pretraining", base, pretrain), ("SFT", base, sft), ("RL", main, main.rl_config())]


def recipe_lines(base: RunSpec, main: RunSpec) -> list[str]:
    """The recipe of ``base`` (pretraining, SFT) and of ``main`` (RL) in words, one markdown line per stage.

    Each stage says every setting that acts in it (:func:`recipe_words`); the
    page's recipe callout shows these lines.
    """
    return [f"- **{stage}** (`{run.name}`): {'; '.join(recipe_words(cfg))}" for stage, run, cfg in _stages(base, main)]


def settings_lines(base: RunSpec, main: RunSpec) -> list[str]:
    """Every setting of ``base`` and ``main`` as the code names it, one markdown line per stage (the folded box
    under the recipe callout)."""
    lines = []
    for stage, run, config in _stages(base, main):
        settings = ", ".join(f"`{name}` {value}" for name, value in _settings(config).items())
        lines.append(f"- **{stage}** (`{run.name}`): {settings}")
    return lines


# ---------------------------------------------------------------- the named runs


def reference_of(name: str, runs: dict[str, RunSpec] = RUNS) -> str | None:
    """The run that run ``name`` is compared with: its parent for a base run; for an RL run the first RL run
    of its world with the same parent, or ``main`` when that is the run itself; None for ``base`` and ``main``."""
    spec = runs[name]
    if spec.rl is None:
        return spec.parent
    siblings = [
        n for n, s in runs.items() if s.rl is not None and s.parent == spec.parent and s.rl.world == spec.rl.world
    ]
    first = siblings[0]
    if first != name:
        return first
    return None if name == "main" else "main"


def changes(name: str, runs: dict[str, RunSpec] = RUNS) -> list[str]:
    """What run ``name`` does differently from :func:`reference_of` it, in words (:func:`change_words`): one
    entry per RL setting, and a base run's changes one entry per stage ("SFT: 200 full-batch steps ...")."""
    reference = reference_of(name, runs)
    if reference is None:
        return []
    a, b = runs[reference], runs[name]
    found = []
    for stage, word in (("pretrain", "pretraining: "), ("sft", "SFT: "), ("rl", "")):
        old, new = getattr(a, stage), getattr(b, stage)
        if old is None or new is None:
            continue
        said = change_words(old, new)
        if stage == "rl":
            found += said
        elif said:
            found.append(word + ", ".join(said))
    return found


def runs_rows(runs: dict[str, RunSpec] = RUNS) -> list[list[str]]:
    """One row per named run: name, parent, the run it is compared with, and what it changes, in words."""
    rows = []
    for name, spec in runs.items():
        reference, changed = reference_of(name, runs), changes(name, runs)
        if reference is None:
            said = "the reference recipe"
        else:
            said = (
                f"like `{reference}`, but " + "; ".join(changed) if changed else f"the same settings as `{reference}`"
            )
        rows.append(
            [f"`{name}`", f"`{spec.parent}`" if spec.parent else "–", f"`{reference}`" if reference else "–", said]
        )
    return rows


def runs_markdown(runs: dict[str, RunSpec] = RUNS) -> str:
    """:func:`runs_rows` as a table."""
    return markdown_table(["run", "parent", "compared with", "what it changes"], runs_rows(runs))


def learner_words(learner: Learner) -> str:
    """What a learner from pairs (chapter 10) trains and on what, in words read from its settings."""
    cfg = learner.cfg
    swapped = f"{cfg.noise:.0%} of them swapped" if cfg.noise else "none swapped"
    pairs = f"pairs from {cfg.rounds} groups of {cfg.group_size} of `base`'s answers per training prompt, {swapped}"
    steps = f"{cfg.steps} steps of {cfg.batch} pairs at learning rate {cfg.lr:g}"
    if learner.kind == "dpo":
        return f"DPO with beta {cfg.beta:g}: {steps}; {pairs}"
    return f"a Bradley–Terry reward model from `base`'s weights: {steps}; {pairs}"


def learners_markdown(learners: dict[str, Learner] = LEARNERS) -> str:
    """Chapter 10's learners from pairs as a table: name, kind, and what each trains, in words."""
    kinds = {"dpo": "policy", "reward-model": "reward model"}
    rows = [[f"`{name}`", kinds[x.kind], learner_words(x)] for name, x in learners.items()]
    return markdown_table(["learner", "what it trains", "how"], rows)


def process_runs_markdown() -> str:
    """Chapter 11's step scorer and its RL runs as a table: name, what it is, and how, in words read from the
    settings in :mod:`rlbook.runs.process_model`."""
    scorer = process_model.SCORER
    parent = f"`{process_model.PARENT}`"
    rows = [
        [
            "step scorer",
            "a process reward model",
            (
                f"{parent}'s network with a head at every position, from its weights: {scorer.steps} updates of "
                f"{scorer.batch} answers at learning rate {scorer.lr:g}, on {scorer.answers:,} of {parent}'s answers to "
                "the training prompts, each step labelled by the exact rule"
            ),
        ],
        *(
            [f"`{reward}`", "RL run", f"`worked` from {parent}, rewarded by {words}"]
            for reward, words in (
                ("prm", "the step scorer's smallest step probability"),
                ("process-exact", "the exact process rule: 1 when every step is right, 0 otherwise"),
            )
        ),
    ]
    return markdown_table(["name", "what it is", "how"], rows)


# ---------------------------------------------------------------- notation

NOTATION: list[tuple[str, str, Callable | str]] = [
    (r"$x$", "a prompt", world.Task),
    (r"$y$, $y_t$", "an answer and its $t$-th character (action)", sampling.sample),
    (r"$\pi_\theta(y_t \mid x, y_{<t})$", "the policy with weights $\\theta$", Policy),
    (r"$R(x, y)$", "the reward of an answer", rewards.ExactVerifier),
    (r"$J(\theta)$", "the expected reward, estimated by sampling", evaluate.evaluate),
    (r"$G$", "answers sampled per prompt (a group)", "group_size"),
    (r"$T$", "the sampling temperature", "temperature"),
    (r"$b$, $A$", "a baseline, and the advantage $A = R - b$", advantages.group_centered),
    (r"$\rho_t$", "the importance ratio of a token", losses.importance_ratio),
    (r"$\varepsilon$", "PPO's clip range", "eps_low"),
    (r"$\beta$", "the weight of the KL penalty", "kl_beta"),
    (r"$\eta$", "the learning rate of AdamW", "lr"),
]
"""Each symbol the chapters use, what it stands for, and the rlbook object (or RLConfig field) behind it."""


def qualified(obj: Callable | type) -> str:
    """``rlbook.core.losses.importance_ratio`` for an object of the package."""
    return f"{obj.__module__}.{obj.__qualname__}"


def notation_rows(main: rl.RLConfig) -> list[list[str]]:
    """:data:`NOTATION` with each object's full name, or the RLConfig field with ``main``'s value."""
    rows = []
    for symbol, meaning, where in NOTATION:
        if isinstance(where, str):
            rows.append([symbol, meaning, f"`RLConfig.{where}` (`main`: {getattr(main, where)})"])
        else:
            rows.append([symbol, meaning, f"`{qualified(where)}`"])
    return rows


# ---------------------------------------------------------------- the algorithm, boxed


def algorithm_steps(main: rl.RLConfig) -> list[tuple[str, Callable]]:
    """The RL step ``main`` runs, one line per stage with the rlbook function that does it, in order."""
    return [
        (
            f"pick the prompts of the step (all {len(world.split('train', main.world))} training prompts)",
            rl.sample_groups,
        ),
        (
            (
                f"sample G = {main.group_size} answers per prompt at T = {main.temperature:g}, "
                f"at most {main.budget} characters, recording each token's log-probability"
            ),
            sampling.sample,
        ),
        ("verify each answer: reward 1 if accepted, else 0", rewards.ExactVerifier.__call__),
        ("advantage = reward minus its group's mean reward", rl.credit),
        ("", advantages.group_centered),
        (f"token loss: PPO clip (ε = {main.eps_low:g}) of ratio × advantage, mean over tokens", rl.update),
        ("", losses.ppo_clip_loss),
        (f"one AdamW step at learning rate {main.lr:g} after {main.warmup} warm-up steps", AdamW.step),
    ]


def algorithm_markdown(main: rl.RLConfig) -> str:
    """:func:`algorithm_steps` as numbered pseudocode lines, each naming its function."""
    lines, number = [], 0
    for text, fn in algorithm_steps(main):
        if text:
            number += 1
            lines.append(f"{number}. {text}: `{qualified(fn)}`")
        else:
            lines.append(f"   (through `{qualified(fn)}`)")
    return "\n".join(lines)


def source_of(fn: Callable) -> str:
    """The source of an rlbook function as the package runs it, laid out for the page (:func:`listing.listing`)."""
    return listing.listing(fn)
