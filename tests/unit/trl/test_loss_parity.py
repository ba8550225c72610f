"""TRL's own ``GRPOTrainer._compute_loss`` against rlbook's loss, for every run of the catalogue that the bridge
translates, with the bridge's settings (``grpo_kwargs``): loss values and gradients to 1e-6.

Two levels. On tensors: random log-probabilities (float64) go into TRL's
loss in place of its model's forward pass and into rlbook's
:func:`rlbook.core.losses.token_loss` plus :func:`~rlbook.core.losses.kl_penalty`,
as :func:`rlbook.core.rl.update` combines them; the gradients are taken with
respect to those log-probabilities. On a tiny model: rlbook's own
:func:`rlbook.core.rl.update` on a policy against ``_compute_loss`` on the
same weights as GPT-2 (:func:`rlbook.trl.to_gpt2`), gradients compared weight
by weight. The metric tests show where a shared log name measures something
else (:data:`rlbook.trl.METRIC_NOTES`). Nothing here trains a run.
"""

from __future__ import annotations

import copy
import tempfile
from dataclasses import replace

import pytest
import torch

from rlbook import trl_bridge as tb
from rlbook.core import losses
from rlbook.core import rl as rl_lib
from rlbook.core.packing import reference_logprobs
from rlbook.core.policy import Policy, PolicyConfig
from rlbook.core.sampling import sample
from rlbook.runs.catalogue import RUNS
from rlbook.trl.model import weight_names
from rlbook.trl.trainer import quiet_trl

pytest.importorskip("trl")


def _translatable() -> dict:
    out = {}
    for name, spec in RUNS.items():
        if spec.rl is None:
            continue
        try:
            tb.grpo_kwargs(spec.rl)
        except ValueError:
            continue
        out[name] = spec.rl
    return out


RUN_CONFIGS = _translatable()
# the one aggregation no catalogue run uses, so that every loss_type the bridge emits is held too
RUN_CONFIGS["constant (no run)"] = replace(RUNS["main"].rl, aggregation="constant")
TOL = 1e-6


def test_the_catalogue_translates_every_loss_the_bridge_knows():
    kinds = {tb.grpo_kwargs(cfg)["loss_type"] for cfg in RUN_CONFIGS.values()}
    assert kinds == {"dapo", "grpo", "dr_grpo", "cispo"}
    assert any(cfg.kl_beta for cfg in RUN_CONFIGS.values()) and any(cfg.loss == "pg" for cfg in RUN_CONFIGS.values())
    assert {cfg.kl_estimator for cfg in RUN_CONFIGS.values() if cfg.kl_beta} == set(losses.KL_ESTIMATORS)
    assert any(cfg.advantage == "rloo" for cfg in RUN_CONFIGS.values())
    assert len(RUN_CONFIGS) >= 11


_TRAINERS: dict = {}


def trainer_for(cfg, policy: Policy | None = None):
    """A GRPOTrainer set up by the bridge (``make_trainer``) for ``cfg``, on ``policy``.

    Without ``policy`` it runs on a small random one, one trainer per configuration for the whole module.
    """
    if policy is None and repr(cfg) in _TRAINERS:
        return _TRAINERS[repr(cfg)]
    with quiet_trl(), tempfile.TemporaryDirectory() as out:
        trainer, _ = tb.make_trainer(tb.TRLSpec("parity", cfg), policy or Policy(PolicyConfig(block_size=24)), 0, out)
    trainer.model.train()
    trainer.current_gradient_accumulation_steps = 1  # what training_step sets with no accumulation
    if policy is None:
        _TRAINERS[repr(cfg)] = trainer
    return trainer


def trl_compute_loss(trainer, logp, adv, mask, old=None, ref=None, entropies=None):
    """``trainer._compute_loss`` with ``logp`` standing in for the model's per-token log-probabilities."""
    rows, width = logp.shape
    trainer._get_per_token_logps_and_entropies = lambda *a, **k: (
        logp,
        torch.zeros_like(logp) if entropies is None else entropies,
        None,
    )
    inputs = {
        "prompt_ids": torch.zeros(rows, 1, dtype=torch.long),
        "prompt_mask": torch.ones(rows, 1, dtype=torch.long),
        "completion_ids": torch.zeros(rows, width, dtype=torch.long),
        "completion_mask": mask.long(),
        "advantages": adv,
        "num_items_in_batch": mask.sum(),
    }
    if old is not None:
        inputs["old_per_token_logps"] = old
    if ref is not None:
        inputs["ref_per_token_logps"] = ref
    try:
        return trainer._compute_loss(trainer.model, inputs)
    finally:
        del trainer._get_per_token_logps_and_entropies


def rlbook_loss(cfg, logp, old, adv, mask, ref):
    """The loss :func:`rlbook.core.rl.update` minimises, on given log-probabilities."""
    loss, stats = losses.token_loss(
        cfg.loss, logp, old, adv, mask, how=cfg.aggregation, max_tokens=cfg.budget, **cfg.loss_params()
    )
    kl = losses.aggregate(losses.kl_k3(logp, ref), mask, cfg.aggregation, cfg.budget)
    if not cfg.kl_beta:
        return loss, stats, kl
    penalty = losses.aggregate(losses.kl_penalty(cfg.kl_estimator, logp, old, ref), mask, cfg.aggregation, cfg.budget)
    return loss + cfg.kl_beta * penalty, stats, kl


def random_batch(cfg, seed: int, rows: int = 8):
    """Log-probs, old and reference log-probs, advantages and a ragged mask, float64."""
    g = torch.Generator().manual_seed(seed)
    shape = (rows, cfg.budget)
    logp = -torch.rand(shape, generator=g, dtype=torch.float64) * 3 - 0.05
    off = cfg.updates_per_batch > 1  # only then does TRL use recorded old log-probs (num_iterations > 1)
    old = logp - 0.4 * torch.randn(shape, generator=g, dtype=torch.float64) if off else logp.clone()
    ref = logp + 0.5 * torch.randn(shape, generator=g, dtype=torch.float64)
    adv = torch.randn(rows, generator=g, dtype=torch.float64)
    lengths = torch.randint(1, cfg.budget + 1, (rows,), generator=g)
    mask = torch.arange(cfg.budget)[None, :] < lengths[:, None]
    return logp, old, ref, adv, mask


def tensor_parity(cfg, seed: int) -> tuple[float, float, float]:
    """(value difference, largest gradient difference, value offset for pg) of TRL's and rlbook's loss."""
    logp, old, ref, adv, mask = random_batch(cfg, seed)
    ours_logp = logp.clone().requires_grad_(True)
    ours, _, _ = rlbook_loss(cfg, ours_logp, old, adv, mask, ref)
    ours.backward()
    theirs_logp = logp.clone().requires_grad_(True)
    trainer = trainer_for(cfg)
    theirs = trl_compute_loss(
        trainer, theirs_logp, adv, mask, old if cfg.updates_per_batch > 1 else None, ref if cfg.kl_beta else None
    )
    theirs.backward()
    grad = float((ours_logp.grad - theirs_logp.grad).abs().max())
    if cfg.loss == "pg":  # rlbook's value is -A logp, TRL's -A ratio with ratio 1: -A
        expected = -losses.aggregate(adv[:, None].expand_as(logp), mask, cfg.aggregation, cfg.budget)
        return float((theirs - expected).detach().abs()), grad, float((ours - theirs).detach())
    return float((theirs - ours).detach().abs()), grad, 0.0


@pytest.mark.parametrize("name", sorted(RUN_CONFIGS))
def test_trl_loss_and_gradient_equal_rlbooks_on_random_tensors(name):
    cfg = RUN_CONFIGS[name]
    for seed in range(20):
        value, grad, _ = tensor_parity(cfg, seed)
        assert value < TOL and grad < TOL, (name, seed, value, grad)


def test_trls_default_kl_has_another_gradient_the_issues_example():
    """logp = -1, ref = -2, beta 0.1, two tokens, dapo: 0.0316 per token in rlbook, 0.0500 with TRL's default."""
    cfg = RUNS["ppo-kl"].rl
    trainer = trainer_for(cfg)
    logp0 = torch.full((1, cfg.budget), -1.0, dtype=torch.float64)
    mask = torch.tensor([[True, True] + [False] * (cfg.budget - 2)])
    ref, adv = torch.full_like(logp0, -2.0), torch.zeros(1, dtype=torch.float64)
    grads = {}
    for correction in (False, True):
        trainer.args.use_bias_correction_kl = correction
        logp = logp0.clone().requires_grad_(True)
        trl_compute_loss(trainer, logp, adv, mask, old=logp0.clone(), ref=ref).backward()
        grads[correction] = logp.grad[0, :2]
    trainer.args.use_bias_correction_kl = tb.grpo_kwargs(cfg)["use_bias_correction_kl"]
    ours = logp0.clone().requires_grad_(True)
    rlbook_loss(cfg, ours, logp0, adv, mask, ref)[0].backward()
    assert ours.grad[0, :2] == pytest.approx([0.1 * (1 - torch.e**-1) / 2] * 2)  # 0.0316
    assert grads[False] == pytest.approx(ours.grad[0, :2].tolist(), abs=1e-15)
    assert grads[True] == pytest.approx([0.1 * 1.0 / 2] * 2)  # beta x (logp - ref) / 2 tokens = 0.0500


def model_parity(cfg, seed: int = 0) -> tuple[float, float]:
    """(loss difference, largest weight-gradient difference): rlbook's update against TRL's _compute_loss."""
    torch.manual_seed(seed)
    policy = Policy(PolicyConfig(block_size=24))
    reference = copy.deepcopy(policy).eval()
    g = torch.Generator().manual_seed(seed)
    rollouts = sample(policy, ["U:3+4?|A:", "U:9+8?|A:"], n=cfg.group_size, budget=cfg.budget, generator=g)
    if cfg.updates_per_batch > 1:  # a later update on the batch: the policy has moved since it sampled
        with torch.no_grad():
            for p in policy.parameters():
                p.add_(0.05 * torch.randn(p.shape, generator=g))
    rewards = torch.randint(0, 2, (len(rollouts),), generator=g).double().numpy()
    adv, used = rl_lib.credit(cfg, rewards, ["accepted"] * len(rollouts))
    batch = rl_lib.Batch(1, rollouts, rewards, ["accepted"] * len(rollouts), adv, used)
    ref_logp = reference_logprobs(reference, rollouts)
    stats = rl_lib.update(policy, torch.optim.SGD(policy.parameters(), lr=0.0), batch, cfg, ref_logp)
    ours = {name: p.grad for name, p in policy.named_parameters()}

    trainer = trainer_for(cfg, copy.deepcopy(policy))
    trainer.model.zero_grad()
    inputs = {
        "prompt_ids": rollouts.prompt_ids,
        "prompt_mask": torch.ones_like(rollouts.prompt_ids),
        "completion_ids": rollouts.tokens,
        "completion_mask": rollouts.mask.long(),
        "advantages": adv,
        "num_items_in_batch": rollouts.mask.sum(),
    }
    if cfg.updates_per_batch > 1:
        inputs["old_per_token_logps"] = rollouts.logprobs
    if cfg.kl_beta:
        inputs["ref_per_token_logps"] = ref_logp
    loss = trainer._compute_loss(trainer.model, inputs)
    loss.backward()
    theirs = dict(trainer.model.named_parameters())
    worst = max(
        float((ours[a] - (theirs[b].grad.t() if flip else theirs[b].grad)).abs().max())
        for a, b, flip in weight_names(policy.cfg)
    )
    if cfg.loss == "pg":  # TRL's value: -A x ratio with ratio 1
        expected = -losses.aggregate(
            adv[:, None].expand_as(rollouts.logprobs), rollouts.mask, cfg.aggregation, cfg.budget
        )
        return abs(float(loss.detach() - expected)), worst
    return abs(float(loss.detach()) - stats["loss"]), worst


@pytest.mark.parametrize("name", sorted(RUN_CONFIGS))
def test_trl_compute_loss_on_a_tiny_model_matches_rlbooks_update(name):
    cfg = RUN_CONFIGS[name]
    value, grad = model_parity(cfg)
    assert grad < TOL and value < TOL, (name, grad, value)


def test_cispo_clip_counts_differ_where_the_advantage_is_negative():
    cfg = RUNS["cispo"].rl
    logp = torch.zeros(1, cfg.budget, dtype=torch.float64, requires_grad=True)
    old = torch.full_like(logp, -torch.log(torch.tensor(5.0, dtype=torch.float64)).item())  # ratio 5 > cap 4
    mask = torch.ones(1, cfg.budget, dtype=torch.bool)
    adv = torch.tensor([-1.0], dtype=torch.float64)
    trainer = trainer_for(cfg)
    trl_compute_loss(trainer, logp, adv, mask, old=old)
    assert trainer._metrics["train"]["cispo_clip_ratio"][-1] == 0.0
    assert rlbook_loss(cfg, logp, old, adv, mask, old)[1]["clip_fraction"] == 1.0
    assert "A > 0" in tb.METRIC_NOTES["clip_fraction"]


def test_trl_logs_the_kl_as_a_token_mean_whatever_the_loss_type():
    cfg = replace(RUNS["seq-mean"].rl, kl_beta=0.1)
    logp, _, ref, adv, mask = random_batch(cfg, 3)
    trainer = trainer_for(cfg)
    trl_compute_loss(trainer, logp, adv, mask, ref=ref)
    logged = trainer._metrics["train"]["kl"][-1]
    k3 = losses.kl_k3(logp, ref)
    assert logged == pytest.approx(float(losses.aggregate(k3, mask, "token_mean")), rel=1e-6)
    assert abs(logged - float(rlbook_loss(cfg, logp, logp, adv, mask, ref)[2])) > 1e-3  # rlbook's: seq_mean
    assert "token mean" in tb.METRIC_NOTES["kl"]


def test_under_use_bias_correction_kl_trl_logs_ratio_times_k3_where_rlbook_logs_k3():
    """On a batch's later updates (old != logp) the two kl metrics part; on its first they agree."""
    cfg = replace(RUNS["main"].rl, kl_beta=0.1, kl_estimator="k3-ratio", updates_per_batch=4, steps=25)
    logp, old, ref, adv, mask = random_batch(cfg, 5)
    trainer = trainer_for(cfg)
    trl_compute_loss(trainer, logp, adv, mask, old=old, ref=ref)
    logged = trainer._metrics["train"]["kl"][-1]
    ratio_k3 = torch.exp(logp - old) * losses.kl_k3(logp, ref)
    assert logged == pytest.approx(float(losses.aggregate(ratio_k3, mask, "token_mean")), rel=1e-6)
    assert abs(logged - float(rlbook_loss(cfg, logp, old, adv, mask, ref)[2])) > 1e-3  # rlbook's: plain k3
    trl_compute_loss(trainer, logp, adv, mask, old=logp.clone(), ref=ref)  # the first update: ratio 1
    assert trainer._metrics["train"]["kl"][-1] == pytest.approx(float(rlbook_loss(cfg, logp, logp, adv, mask, ref)[2]))
    one = [torch.tensor([[v]], dtype=torch.float64) for v in (-1.0, -1.5, -2.0)]  # the note's example: logp, old, ref
    k3 = float(losses.kl_k3(one[0], one[2]))
    assert (round(float(torch.exp(one[0] - one[1])) * k3, 4), round(k3, 4)) == (0.6065, 0.3679)
    assert "TRL 0.6065, rlbook 0.3679" in tb.METRIC_NOTES["kl"] and "use_bias_correction_kl" in tb.METRIC_NOTES["kl"]


class _Rewards:
    """A reward function paying 1 to every answer of 3+4 and alternately 1 and 0 to those of 9+8."""

    __name__ = "fixed"

    def __call__(self, prompts, completions, **_):
        return [1.0 if p.startswith("U:3+4") else float(i % 2) for i, p in enumerate(prompts)]


def grpo_trainer(kwargs: dict, policy: Policy, out: str):
    """A GRPOTrainer with ``GRPOConfig(**kwargs)`` on two prompts, rewarded by :class:`_Rewards`."""
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    args = GRPOConfig(
        output_dir=out,
        seed=0,
        use_cpu=True,
        bf16=False,
        fp16=False,
        logging_steps=1,
        report_to="none",
        save_strategy="no",
        disable_tqdm=True,
        **kwargs,
    )
    return GRPOTrainer(
        model=tb.to_gpt2(policy),
        reward_funcs=_Rewards(),
        args=args,
        train_dataset=Dataset.from_dict({"prompt": ["U:3+4?|A:", "U:9+8?|A:"]}),
        processing_class=tb.char_tokenizer(),
    )


def one_logged_step(cfg) -> dict:
    """TRL's log of one real training step of ``cfg`` on two prompts with :class:`_Rewards` (tiny random model)."""
    kwargs = {**tb.grpo_kwargs(cfg, prompts_per_step=2), "max_steps": 1, "warmup_steps": 0}
    with quiet_trl(), tempfile.TemporaryDirectory() as out:
        trainer = grpo_trainer(kwargs, Policy(PolicyConfig()), out)
        trainer.train()
    return trainer.state.log_history[0]


def test_trl_logs_the_weighted_reward_and_a_batch_zero_std_fraction():
    from rlbook.core.advantages import zero_variance_fraction

    rewards = torch.tensor([[1.0] * 16, [float(i % 2) for i in range(16)]])
    assert zero_variance_fraction(rewards) == 0.5  # rlbook's measure of this batch, whatever the scaling
    scaled = one_logged_step(RUNS["reward-x10"].rl)
    assert scaled["rewards/fixed/mean"] == pytest.approx(0.75) and scaled["reward"] == pytest.approx(7.5)
    assert scaled["frac_reward_zero_std"] == pytest.approx(0.5)
    batch = one_logged_step(replace(RUNS["main"].rl, advantage="batch_std"))
    assert batch["frac_reward_zero_std"] == 0.0  # one std for the batch, and it is not zero
    assert "7.5" in tb.METRIC_NOTES["reward_mean"] and "'batch'" in tb.METRIC_NOTES["zero_variance_frac"]


def test_at_temperature_other_than_1_the_bridge_refuses_because_trl_trains_at_t():
    cfg = RUNS["main"].rl
    with pytest.raises(ValueError, match="temperature 0.5"):
        tb.grpo_kwargs(replace(cfg, temperature=0.5))
    torch.manual_seed(0)
    policy = Policy(PolicyConfig(block_size=24))
    rollouts = sample(
        policy, ["U:3+4?|A:"] * 2, n=4, budget=cfg.budget, temperature=0.5, generator=torch.Generator().manual_seed(0)
    )
    from rlbook.core.packing import generated_logprobs

    with torch.no_grad():
        trained = generated_logprobs(policy, rollouts)[0]  # what rlbook's update trains on: T = 1
    ids = torch.cat([rollouts.prompt_ids, rollouts.tokens], dim=1)
    at = {}
    for t in (1.0, 0.5):  # TRL fixes the temperature into the model's head when the trainer is built
        with quiet_trl(), tempfile.TemporaryDirectory() as out:
            trainer = grpo_trainer({**tb.grpo_kwargs(cfg, prompts_per_step=2), "temperature": t}, policy, out)
        with torch.no_grad():
            at[t] = trainer._get_per_token_logps_and_entropies(
                trainer.model, ids, torch.ones_like(ids), rollouts.tokens.shape[1]
            )[0]
    m = rollouts.mask
    assert float((at[1.0] - trained)[m].abs().max()) < TOL  # at T = 1 the two libraries train on the same numbers
    assert float((at[0.5] - trained)[m].abs().max()) > 0.1  # at T = 0.5 TRL trains on the sampling log-probs
    assert float((at[0.5] - rollouts.logprobs)[m].abs().max()) < 1e-5
