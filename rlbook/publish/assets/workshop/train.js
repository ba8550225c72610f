// main's RL recipe, step by step (rlbook.rl.train_rl with main's RLConfig):
// sample a group of answers for every training prompt, score them with the
// exact verifier, centre each group's rewards on its mean (the advantage),
// take one PPO-clip step with AdamW under a linear warm-up, and evaluate the
// held-out expected reward at every checkpoint. It runs anywhere (the page's
// worker, Node); it knows nothing of the page.

import { backward } from "./backward.js";
import { Policy } from "./policy.js";
import { makeRng } from "./rng.js";
import { AdamW, ppoLoss } from "./update.js";
import { verify } from "./verifier.js";

/** Group-centred advantages r - mean(group) (rlbook.advantages.group_centered) and the zero-variance share. */
export function centred(rewards, groupSize) {
  const advantage = new Float64Array(rewards.length);
  let flat = 0;
  for (let start = 0; start < rewards.length; start += groupSize) {
    const group = rewards.slice(start, start + groupSize);
    const mean = group.reduce((a, b) => a + b, 0) / groupSize;
    group.forEach((r, k) => { advantage[start + k] = r - mean; });
    if (group.every((r) => r === group[0])) flat++;
  }
  return { advantage, zeroVarianceFrac: flat / (rewards.length / groupSize) };
}

/** The loss of `policy` on rollouts whose advantages are set, with d loss / d weights written into `grad`. */
export function lossAndGradient(policy, rollouts, recipe, grad) {
  const { loss, dlogits } = ppoLoss(policy.model, policy.forest, rollouts, recipe.eps_low,
    recipe.eps_high);
  grad.fill(0);
  backward(policy.model, policy.forest, dlogits, grad, policy.data.tensors);
  return loss;
}

export class Trainer {
  /** A run of main's recipe from `flat` (copied), drawing from its own random stream `seed`. */
  constructor(data, flat, seed) {
    this.data = data;
    this.recipe = data.recipe;
    this.seed = seed;
    this.policy = new Policy(data, Float32Array.from(flat));
    this.optimizer = new AdamW(flat.length, { betas: this.recipe.betas, eps: this.recipe.adam_eps,
      weightDecay: this.recipe.weight_decay });
    this.grad = new Float64Array(flat.length);
    this.rng = makeRng(seed);
    this.step = 0;
  }

  get done() {
    return this.step >= this.recipe.steps;
  }

  /** Is there a checkpoint evaluation after `step` (step 0, every checkpoint_every steps, the last)? */
  isCheckpoint(step) {
    return step === 0 || step % this.recipe.checkpoint_every === 0 || step === this.recipe.steps;
  }

  /** One RL step; returns its measurements. */
  next() {
    const r = this.recipe, step = ++this.step, t0 = performance.now();
    const prompts = this.data.splits.train;
    const rollouts = this.policy.sample(prompts, r.group_size, r.temperature, r.budget, this.rng);
    const rewards = rollouts.completions.map((c, i) => verify(prompts[rollouts.prompt[i]], c).reward);
    const { advantage, zeroVarianceFrac } = centred(rewards, r.group_size);
    rollouts.advantage = advantage;
    const t1 = performance.now();
    // The forest still holds the forward pass that sampled these answers, at the weights the update starts
    // from, so the update reads its log-probabilities from it instead of reading the batch again.
    const loss = lossAndGradient(this.policy, rollouts, r, this.grad);
    const lr = r.lr * Math.min(1, step / Math.max(1, r.warmup));
    this.optimizer.step(this.policy.flat, this.grad, lr);
    return { step, rewardMean: rewards.reduce((a, b) => a + b, 0) / rewards.length, zeroVarianceFrac, loss,
      sampleMs: t1 - t0, updateMs: performance.now() - t1 };
  }

  /** Held-out expected reward of the current weights: eval_n samples per held-out sum at T = 1. */
  evaluate() {
    const r = this.recipe, prompts = this.data.splits.heldout;
    // A stream of its own for each checkpoint, so that evaluating never moves the training stream.
    const rng = makeRng((this.seed + 1) * 100003 + this.step);
    const rollouts = this.policy.sample(prompts, r.eval_n, 1, r.budget, rng);
    const hits = rollouts.completions.reduce((a, c, i) => a + verify(prompts[rollouts.prompt[i]], c).reward, 0);
    return { step: this.step, heldoutExpectedReward: hits / rollouts.rows };
  }
}
