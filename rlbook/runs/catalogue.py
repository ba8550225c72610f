"""The book's named runs: what each one trains and from which parent (every chapter).

A run is a named configuration: a *base* run pretrains and fine-tunes a
policy, an *RL* run trains from its parent's last checkpoint. Every figure in
the book comes from one of the runs named in :data:`RUNS`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from rlbook.core.guard import Guard
from rlbook.core.reward_model import JudgeConfig
from rlbook.core.rl import RLConfig
from rlbook.core.train import PretrainConfig, SFTConfig
from rlbook.core.world import WORKED_BUDGET

# Each run trains on one thread; the book gets its parallelism by training runs side by side
# (rlbook.runs.prefetch), one per core. On 2 cores, two one-thread runs at a time trained the 17
# seed-0 runs in 69 s against 87 s for two two-thread runs at a time (interleaved, 2 rounds):
# two-thread runs sharing two cores spend their time waking each other's threads for tensors
# too small to split. A run alone is slower on one thread (base 16 s against 12 s).
DEFAULT_THREADS = 1
# Every seed of a base run starts SFT from one pretrained policy, trained with this seed and cached
# once: as in RL for language models, where every RL seed starts from the same pretrained model, a
# run's seeds differ in SFT's replayed windows and in everything RL samples, not in pretraining.
# Pretraining was a quarter of the book's training time when each seed had its own.
PRETRAIN_SEED = 0
# Chapter 4's learned judge: trained from this run's policy on 1,000 labelled samples of it, once per seed,
# and cached on its own; the runs whose verifier is "judge" train against it.
JUDGE = JudgeConfig()
JUDGE_PARENT = "base"


@dataclass(frozen=True)
class RunSpec:
    """A named run: a base (pretraining + SFT) or an RL run from a parent run.

    An RL run starts from its parent's last checkpoint. A base run with a
    parent continues the parent's *pretrained* checkpoint (step 0, before
    SFT) rather than a fresh policy. A base run's pretraining is the same for
    every seed (see :data:`PRETRAIN_SEED`); its seeds part at SFT.
    """

    name: str
    description: str
    parent: str | None = None
    pretrain: PretrainConfig | None = None
    sft: SFTConfig | None = None
    rl: RLConfig | None = None

    def rl_config(self) -> RLConfig:
        """The RL settings of an RL run; ValueError naming the run when it is a base run."""
        if self.rl is None:
            raise ValueError(f"{self.name!r} is a base run: it has no RL settings")
        return self.rl

    def base_configs(self) -> tuple[PretrainConfig, SFTConfig]:
        """The pretraining and SFT settings of a base run; ValueError naming the run when it is an RL run."""
        if self.pretrain is None or self.sft is None:
            raise ValueError(f"{self.name!r} is an RL run: it has no pretraining or SFT settings")
        return self.pretrain, self.sft


MAIN = RLConfig(
    world="single",
    steps=100,
    group_size=16,
    prompts_per_step=0,
    temperature=1.0,
    budget=4,
    lr=3e-4,
    warmup=10,
    loss="ppo",
    eps_low=0.2,
    eps_high=0.2,
    cispo_cap=4.0,
    aggregation="token_mean",
    advantage="centered",
    reward_scale=1.0,
    kl_beta=0.0,
    kl_estimator="k3",
    updates_per_batch=1,
    verifier="exact",
    verifier_version=None,
    stale=0,
    selection="none",
    refill_rounds=0,
    overlong="none",
    overlong_cache=4,
    checkpoint_every=10,
    eval_n=32,
    faults=(),
    guard=Guard(),
)
"""``main``'s settings, written out in full: the one home of the book's recipe. Every other RL run of the world
of sums is ``main`` with a change (``replace(MAIN, ...)``), so an edit here is an edit to all of them, and the
defaults of :class:`RLConfig` play no part in it."""
MULTI = RLConfig(world="multi", steps=60, group_size=8, prompts_per_step=64, budget=8, eval_n=16)
# Chapter 7's worked world (#a+b= with a, b from 10 to 99, answered directly or with the columns written out): a
# wider policy with rotary positions, pretrained once for both of its base runs and every seed. 2,000 steps, set on
# the README's three draws (this machine's AVX-512 kernels, AVX2, default), seeds 0-2: the policy begins to copy the
# operands' digits into its working only after 750 to 1,000 steps, and how far it has got by a given step varies
# with the draw. After 1,500 steps the AVX2 draw's worked-base answered 0.12-0.15 of the held-out sums right (0.35-0.38
# on AVX-512) and RL did not raise it; after 2,500 direct answers had caught up on the default draw, and RL no
# longer moved the share of worked answers (0.45-0.55 before and after). After 2,000, on every draw and seed,
# worked-base answered 0.57-0.63 right and `worked` took the share of worked answers to 0.95 or more. On one thread
# (parts=1): in the book's prefetch it trains beside the other runs, whose worker a second thread would only slow.
WORKED_PRETRAIN = PretrainConfig(
    world="worked", steps=2000, batch=64, block_size=32, space_prob=0.0, parts=1, d_model=48, rope=True
)
WORKED_SFT = SFTConfig(steps=50, replay_batch=32, worked_share=0.5)
# 16 prompts x 16 answers a step. With 8 (half the cost of a step) the updates were too noisy for lr 3e-4: on one seed
# `worked` fell from 0.71 to 0.47 held-out accuracy between two checkpoints and recovered, and the direct-only control
# lost training reward as well as held-out accuracy on all three seeds.
WORKED = RLConfig(world="worked", steps=60, prompts_per_step=16, budget=WORKED_BUDGET, eval_n=4, checkpoint_every=10)
TIGHT_BUDGET = 18
"""Chapter 9's tight budget in the worked world: room for a direct answer (3 or 4 characters) and for the worked
answers of 15, 17 and 18 characters, not for the longest, of 20 (``9+9=18,9+9+1=19;198#``: both columns carry)."""
RUNS: dict[str, RunSpec] = {
    spec.name: spec
    for spec in [
        RunSpec(
            "base",
            "pretraining on plain equations, then SFT on 30 chat examples",
            pretrain=PretrainConfig(),
            sft=SFTConfig(),
        ),
        RunSpec("main", "GRPO-style RL from base: 60 prompts x 16 samples, PPO clip, exact verifier", "base", rl=MAIN),
        RunSpec(
            "exploit",
            "RL against the fail-open verifier (chapter 4's reward hack)",
            "base",
            rl=replace(MAIN, verifier="fail-open", lr=1e-3, warmup=0, steps=40, checkpoint_every=5),
        ),
        RunSpec(
            "exploit-slow",
            "exploit at main's learning rate and warm-up",
            "base",
            rl=replace(MAIN, verifier="fail-open", steps=60, checkpoint_every=5),
        ),
        RunSpec(
            "pg", "plain policy gradient with a group-mean baseline", "base", rl=replace(MAIN, loss="pg", steps=60)
        ),
        RunSpec("ppo", "PPO clip, 4 updates per batch", "base", rl=replace(MAIN, updates_per_batch=4, steps=60)),
        RunSpec(
            "cispo", "CISPO, 4 updates per batch", "base", rl=replace(MAIN, loss="cispo", updates_per_batch=4, steps=60)
        ),
        RunSpec(
            "ppo-kl",
            "PPO clip, 4 updates per batch, KL penalty 0.1 to base",
            "base",
            rl=replace(MAIN, updates_per_batch=4, kl_beta=0.1, steps=60),
        ),
        RunSpec(
            "ppo-kl-ratio",
            "ppo-kl with the k3 penalty weighted by the importance ratio (TRL's default)",
            "base",
            rl=replace(MAIN, updates_per_batch=4, kl_beta=0.1, kl_estimator="k3-ratio", steps=60),
        ),
        RunSpec(
            "seq-mean",
            "PPO clip with per-sequence mean aggregation",
            "base",
            rl=replace(MAIN, aggregation="seq_mean", steps=60),
        ),
        RunSpec(
            "group-std",
            "PPO clip with std-normalised group advantages",
            "base",
            rl=replace(MAIN, advantage="group_std", steps=60),
        ),
        RunSpec(
            "rloo",
            "PPO clip with RLOO's leave-one-out advantages",
            "base",
            rl=replace(MAIN, advantage="rloo", steps=60),
        ),
        RunSpec(
            "reward-x10", "PPO clip with rewards scaled by 10", "base", rl=replace(MAIN, reward_scale=10.0, steps=60)
        ),
        RunSpec(
            "stale",
            "PPO clip learning from rollouts sampled 4 steps earlier",
            "base",
            rl=replace(MAIN, stale=4, steps=60),
        ),
        RunSpec(
            "accepted-only",
            "selection rule: keep only accepted rollouts (advantage 1)",
            "base",
            rl=replace(MAIN, selection="accepted", steps=60),
        ),
        RunSpec(
            "faults",
            "main with injected faults: a verifier outage, a malformed burst, a non-finite loss",
            "base",
            rl=replace(MAIN, steps=40, faults=((8, "verifier_outage"), (15, "malformed_burst"), (22, "nan_loss"))),
        ),
        RunSpec(
            "abort",
            "injected verifier outages in a row until the abort criterion stops the run",
            "base",
            rl=replace(MAIN, steps=40, faults=tuple((s, "verifier_outage") for s in range(10, 40))),
        ),
        RunSpec(
            "rm",
            "RL from base against the learned judge's probability (chapter 4's over-optimisation)",
            "base",
            rl=replace(MAIN, verifier="judge", steps=40, checkpoint_every=5),
        ),
        RunSpec(
            "rm-kl",
            "rm with a KL penalty 0.1 to base",
            "base",
            rl=replace(MAIN, verifier="judge", kl_beta=0.1, steps=40, checkpoint_every=5),
        ),
        RunSpec(
            "clip-higher",
            "ppo with DAPO's clip-higher: the upper clip bound 1.28 against 1.2",
            "base",
            rl=replace(MAIN, updates_per_batch=4, eps_high=0.28, steps=60),
        ),
        RunSpec(
            "gspo",
            "GSPO: one importance ratio per answer, clipped at the paper's 3e-4 and 4e-4, 4 updates per batch",
            "base",
            rl=replace(
                MAIN, loss="gspo", aggregation="seq_mean", eps_low=3e-4, eps_high=4e-4, updates_per_batch=4, steps=60
            ),
        ),
        RunSpec(
            "dynamic",
            "main with DAPO's dynamic sampling: groups with one reward dropped and refilled, up to 3 rounds",
            "base",
            rl=replace(MAIN, refill_rounds=3, steps=60),
        ),
        RunSpec(
            "process-base",
            "multi-step world: base's pretrained policy, pretrained further on equations and chains "
            "with a context of 24, then SFT on 60 examples",
            "base",
            pretrain=PretrainConfig(world="multi", steps=600, block_size=24, space_prob=0.3, parts=1),
            sft=SFTConfig(steps=200),
        ),
        RunSpec("process-outcome", "multi-step RL, outcome reward only", "process-base", rl=MULTI),
        RunSpec(
            "process-shaped",
            "multi-step RL, outcome + 0.5 x step validity",
            "process-base",
            rl=replace(MULTI, verifier="exact+process"),
        ),
        RunSpec(
            "worked-base",
            "worked world: pretraining on columns and two-digit sums in both styles, then SFT on 40 "
            "examples, half of them worked",
            pretrain=WORKED_PRETRAIN,
            sft=WORKED_SFT,
        ),
        RunSpec(
            "worked-direct-base",
            "worked-base's pretrained policy (no further pretraining), SFT on the same 40 "
            "examples all answered directly",
            "worked-base",
            pretrain=replace(WORKED_PRETRAIN, steps=0),
            sft=replace(WORKED_SFT, worked_share=0.0),
        ),
        RunSpec("worked", "RL from worked-base, outcome reward only, room for the working", "worked-base", rl=WORKED),
        RunSpec(
            "worked-direct",
            "RL from worked-direct-base with a budget of 4 characters: direct answers only",
            "worked-direct-base",
            rl=replace(WORKED, budget=4),
        ),
        RunSpec(
            "worked-seq-mean",
            "worked with each answer's tokens averaged first (GRPO's aggregation), not every token alike",
            "worked-base",
            rl=replace(WORKED, aggregation="seq_mean"),
        ),
        RunSpec(
            "worked-tight",
            f"worked with a budget of {TIGHT_BUDGET} characters, which cuts off the longest worked answers",
            "worked-base",
            rl=replace(WORKED, budget=TIGHT_BUDGET),
        ),
        RunSpec(
            "worked-tight-filter",
            "worked-tight with the cut-off answers left out of the loss (DAPO's overlong filtering)",
            "worked-base",
            rl=replace(WORKED, budget=TIGHT_BUDGET, overlong="filter"),
        ),
        RunSpec(
            "worked-tight-shape",
            "worked-tight with DAPO's soft length penalty over the budget's last 4 characters (its last fifth, as in DAPO)",
            "worked-base",
            rl=replace(WORKED, budget=TIGHT_BUDGET, overlong="shape", overlong_cache=4),
        ),
        RunSpec(
            "worked-rediscover", "RL from worked-direct-base with room for the working", "worked-direct-base", rl=WORKED
        ),
    ]
}


def spec(name: str) -> RunSpec:
    """The run named ``name``; a ValueError lists the known names otherwise."""
    if name not in RUNS:
        raise ValueError(f"unknown run {name!r}; known runs: {', '.join(RUNS)}")
    return RUNS[name]
