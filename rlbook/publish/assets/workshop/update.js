// The RL update of main's recipe: PPO's clipped objective per generated
// token, averaged over every generated token of the batch (rlbook.losses.
// ppo_clip_loss with how="token_mean"), its gradient with respect to the
// logits that produced each token, and AdamW (rlbook.adamw.AdamW).

import { logSoftmax } from "./forward.js";

/**
 * The loss and d loss / d logits of every node, for rollouts whose tokens were
 * read at the nodes `rollouts.nodes` of `forest` (sampler.js records them).
 *
 * Per generated token, with ratio = exp(logp - old logp) and advantage A, the
 * objective is min(ratio A, clip(ratio, 1 - epsLow, 1 + epsHigh) A) and the
 * loss is minus its mean over the generated tokens. Its gradient with respect
 * to logp is ratio A, or 0 where the clipped term is the smaller; PyTorch's
 * minimum splits the gradient between equal terms, and inside the clip range
 * both terms are equal and both pass it on, which gives ratio A in all.
 */
export function ppoLoss(model, forest, rollouts, epsLow, epsHigh) {
  const V = model.V, { rows, budget, tokens, logp: old, length, nodes, advantage } = rollouts;
  const logits = forest.logits, n = forest.count;
  const logpAll = new Float64Array(n * V), seen = new Uint8Array(n);
  const coef = new Float64Array(n * V);  // d loss / d logp of token v at node i, summed over the rows
  let generated = 0;
  for (let r = 0; r < rows; r++) generated += length[r];
  let total = 0;
  for (let r = 0; r < rows; r++) {
    const a = advantage[r];
    for (let t = 0; t < length[r]; t++) {
      const node = nodes[r * budget + t], token = tokens[r * budget + t];
      if (!seen[node]) {
        logSoftmax(logits, node * V, V, 1, logpAll.subarray(node * V, node * V + V));
        seen[node] = 1;
      }
      const ratio = Math.exp(logpAll[node * V + token] - old[r * budget + t]);
      const bounded = Math.min(Math.max(ratio, 1 - epsLow), 1 + epsHigh);
      const plain = ratio * a, clip = bounded * a;
      total += Math.min(plain, clip);
      // The share of the gradient that reaches ratio: all of it when the plain term is the smaller, half of
      // it on a tie, plus the clipped term's half when the ratio lies inside the clip range.
      const share = plain < clip ? 1 : plain > clip ? 0 : 0.5 + (ratio === bounded ? 0.5 : 0);
      coef[node * V + token] -= share * plain / generated;
    }
  }
  // d logp_v / d logits = onehot(v) - softmax: d loss / d logits = coef - (sum of coef) * softmax.
  const dlogits = new Float64Array(n * V);
  for (let i = 0; i < n; i++) {
    if (!seen[i]) continue;
    let sum = 0;
    for (let v = 0; v < V; v++) sum += coef[i * V + v];
    for (let v = 0; v < V; v++) dlogits[i * V + v] = coef[i * V + v] - sum * Math.exp(logpAll[i * V + v]);
  }
  return { loss: -total / Math.max(generated, 1), dlogits };
}

/**
 * AdamW over one flat vector of float32 weights, as rlbook.adamw.AdamW
 * computes it: decoupled decay, then the running means of the gradient and of
 * its square with Adam's bias corrections. The moments are float32 too, as in
 * PyTorch.
 */
export class AdamW {
  constructor(size, { betas = [0.9, 0.999], eps = 1e-8, weightDecay = 0 } = {}) {
    this.betas = betas;
    this.eps = eps;
    this.weightDecay = weightDecay;
    this.steps = 0;
    this.expAvg = new Float32Array(size);
    this.expAvgSq = new Float32Array(size);
  }

  /** One step of the float32 `weights` in place, from `grad`, at learning rate `lr`. */
  step(weights, grad, lr) {
    const [b1, b2] = this.betas, m = this.expAvg, v = this.expAvgSq;
    this.steps += 1;
    const correction2 = Math.sqrt(1 - b2 ** this.steps), stepSize = lr / (1 - b1 ** this.steps);
    const decay = 1 - lr * this.weightDecay;
    for (let i = 0; i < weights.length; i++) {
      const g = grad[i];
      weights[i] *= decay;
      m[i] += (1 - b1) * (g - m[i]);
      v[i] = v[i] * b2 + (1 - b2) * g * g;
      weights[i] -= stepSize * m[i] / (Math.sqrt(v[i]) / correction2 + this.eps);
    }
  }
}
