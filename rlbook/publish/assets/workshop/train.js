// An RL run step by step (rlbook.core.rl.rl_step): sample a group of answers for
// every training prompt, score them with the run's verifier, turn each group's
// rewards into advantages, take one PPO-clip step with AdamW under a linear
// warm-up, and evaluate the held-out expected reward under the exact verifier
// at every checkpoint. The recipe is main's or one the reader changed within
// the book's choices (learning rate and warm-up, group size, baseline,
// verifier). Each step can also watch one sum: its fresh answers and how the
// step moved the probabilities of its most likely answers. It runs anywhere
// (the page's worker, Node); it knows nothing of the page.

import { advantages, zeroVarianceFraction } from "./advantages.js";
import { answerProbabilities, topAnswers } from "./answers.js";
import { backward } from "./backward.js";
import { verifyFailOpen } from "./fail-open.js";
import { Policy } from "./policy.js";
import { makeRng } from "./rng.js";
import { AdamW, ppoLoss } from "./update.js";
import { verify } from "./verifier.js";

/** The verifiers a run can train against, by the name rlbook's configurations use. */
export const VERIFIERS = { exact: verify, "fail-open": verifyFailOpen };

export const WATCH_SAMPLES = 32;  // fresh answers shown for the watched sum, as in the sample panel
export const WATCH_TOP = 5;  // most likely answers whose probabilities are followed

/**
 * One completion judged as the trainer sees it: the run verifier's status and
 * reward, and whether it is paid only through a loophole (the run's verifier
 * pays it, the exact verifier rejects it: rlbook's audit.loophole_rows).
 */
export function judge(verifierName, prompt, completion) {
  const { reward, status } = VERIFIERS[verifierName](prompt, completion);
  const loophole = reward > 0 && verify(prompt, completion).status !== "accepted";
  return { reward, status, loophole };
}

/** The loss of `policy` on rollouts whose advantages are set, with d loss / d weights written into `grad`. */
export function lossAndGradient(policy, rollouts, recipe, grad) {
  const { loss, dlogits } = ppoLoss(policy.model, policy.forest, rollouts, recipe.eps_low, recipe.eps_high);
  grad.fill(0);
  backward(policy.model, policy.forest, dlogits, grad, policy.data.tensors);
  return loss;
}

/**
 * The sum `prompt` as `policy` answers it under `recipe`: WATCH_SAMPLES fresh
 * answers, each judged, and the WATCH_TOP most likely answers with their exact
 * probabilities (`before`). With a step's `rollouts`, each listed answer also
 * gets how often its group drew it and the advantage the update gives it (none
 * for a sum outside the training prompts, or an answer its group did not
 * draw). Returns {record, describe}: describe(completion, p) makes one more
 * listed answer the same way.
 */
export function watching(policy, data, recipe, prompt, rng, rollouts = null) {
  const r = recipe;
  const fresh = policy.sample([prompt], WATCH_SAMPLES, r.temperature, r.budget, rng).completions;
  const group = new Map();  // completion -> [count, advantage] in this step's group for the prompt
  const at = data.splits.train.indexOf(prompt);
  if (rollouts && at >= 0) {
    for (let row = at * r.group_size; row < (at + 1) * r.group_size; row++) {
      const text = rollouts.completions[row];
      group.set(text, [(group.get(text)?.[0] ?? 0) + 1, rollouts.advantage[row]]);
    }
  }
  const describe = (completion, before) => ({ completion, before, count: group.get(completion)?.[0] ?? 0,
    advantage: group.get(completion)?.[1] ?? null, ...judge(r.verifier, prompt, completion) });
  const top = topAnswers(policy, prompt, WATCH_TOP, r.temperature, r.budget).map((a) => describe(a.completion, a.p));
  const record = { prompt, trained: at >= 0, groupSize: rollouts && at >= 0 ? r.group_size : 0, top,
    answers: fresh.map((c) => ({ completion: c, ...judge(r.verifier, prompt, c) })) };
  return { record, describe };
}

export class Trainer {
  /** A run of `recipe` from `flat` (copied), drawing from its own random streams, all made from `seed`. */
  constructor(data, flat, seed, recipe) {
    this.data = data;
    this.recipe = recipe;
    this.seed = seed;
    this.policy = new Policy(data, Float32Array.from(flat), 1024);  // room for a batch of main's from the start
    // Two more readers of weights, each with a forest of its own: the watcher reads the training weights (its
    // reading leaves the batch's forest, which the update needs, alone); the evaluator reads any snapshot.
    this.watcher = new Policy(data, this.policy.flat);
    this.evaluator = new Policy(data, new Float32Array(flat.length));
    this.optimizer = new AdamW(flat.length, { betas: recipe.betas, eps: recipe.adam_eps,
      weightDecay: recipe.weight_decay });
    this.grad = new Float64Array(flat.length);
    this.rng = makeRng(seed);
    this.watchRng = makeRng((seed + 1) * 999983);  // watching a sum never moves the training stream
    this.step = 0;
  }

  get done() {
    return this.step >= this.recipe.steps;
  }

  /** Is there a checkpoint evaluation after `step` (step 0, every checkpoint_every steps, the last)? */
  isCheckpoint(step) {
    return step === 0 || step % this.recipe.checkpoint_every === 0 || step === this.recipe.steps;
  }

  /** The learning rate of step `step` (from 1): linear warm-up to lr over `warmup` steps (rlbook.rl.warmup_lr). */
  learningRate(step) {
    return this.recipe.lr * Math.min(1, step / Math.max(1, this.recipe.warmup));
  }

  /**
   * One RL step; returns its measurements. With `watch` (a prompt), also what
   * the step did to that sum: see look() and the `watch` field's `after`.
   */
  next(watch = null) {
    const r = this.recipe, step = ++this.step, t0 = performance.now();
    const prompts = this.data.splits.train;
    const rollouts = this.policy.sample(prompts, r.group_size, r.temperature, r.budget, this.rng);
    const verdicts = rollouts.completions.map((c, i) => judge(r.verifier, prompts[rollouts.prompt[i]], c));
    const rewards = verdicts.map((v) => v.reward);
    rollouts.advantage = advantages(rewards, r.group_size, r.advantage);
    const t1 = performance.now();
    const seen = watch === null ? null : this.watching(watch, rollouts);
    if (seen) this.evaluator.flat.set(this.policy.flat);  // the weights before the step, for follow()
    const t2 = performance.now();
    // The forest still holds the forward pass that sampled these answers, at the weights the update starts
    // from, so the update reads its log-probabilities from it instead of reading the batch again.
    const loss = lossAndGradient(this.policy, rollouts, r, this.grad);
    const lr = this.learningRate(step);
    this.optimizer.step(this.policy.flat, this.grad, lr);
    const t3 = performance.now();
    const watched = seen && this.follow(seen);
    const mean = (f) => verdicts.reduce((a, v) => a + f(v), 0) / verdicts.length;
    return { step, lr, rewardMean: mean((v) => v.reward), loopholeShare: mean((v) => v.loophole),
      zeroVarianceFrac: zeroVarianceFraction(rewards, r.group_size), loss, watch: watched,
      sampleMs: t1 - t0, watchMs: t2 - t1 + performance.now() - t3, updateMs: t3 - t2 };
  }

  /** The watched sum at the current weights, as watching() records it (with no step yet). */
  look(prompt) {
    return watching(this.watcher, this.data, this.recipe, prompt, this.watchRng, null).record;
  }

  /** watching() at the current weights, with this step's rollouts. */
  watching(prompt, rollouts) {
    return watching(this.watcher, this.data, this.recipe, prompt, this.watchRng, rollouts);
  }

  /**
   * After the update (the weights before it kept in the evaluator): each
   * listed answer's probability now (`after`), and any answer that rose into
   * the top, with its probability before the step too.
   */
  follow({ record, describe }) {
    const r = this.recipe, prompt = record.prompt;
    const listed = new Set(record.top.map((a) => a.completion));
    const risen = topAnswers(this.watcher, prompt, WATCH_TOP, r.temperature, r.budget)
      .map((a) => a.completion).filter((c) => !listed.has(c));
    const before = answerProbabilities(this.evaluator, prompt, risen, r.temperature);
    const top = [...record.top, ...risen.map((c, i) => describe(c, before[i]))];
    const after = answerProbabilities(this.watcher, prompt, top.map((a) => a.completion), r.temperature);
    top.forEach((a, i) => { a.after = after[i]; });
    return { ...record, top: top.sort((x, y) => y.before - x.before) };
  }

  /**
   * Held-out expected reward (exact verifier) of the current weights, or of
   * `flat` given as the weights of step `step`: eval_n samples per held-out
   * sum at T = 1, from a stream of its own for each checkpoint.
   */
  evaluate(flat = null, step = this.step) {
    const r = this.recipe, prompts = this.data.splits.heldout;
    const policy = flat ? this.evaluator : this.policy;
    if (flat) policy.flat.set(flat);
    const rng = makeRng((this.seed + 1) * 100003 + step);
    const rollouts = policy.sample(prompts, r.eval_n, 1, r.budget, rng);
    const hits = rollouts.completions.reduce((a, c, i) => a + verify(prompts[rollouts.prompt[i]], c).reward, 0);
    return { step, heldoutExpectedReward: hits / rollouts.rows };
  }
}
