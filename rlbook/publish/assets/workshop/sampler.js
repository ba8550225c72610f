// Sampling answers from the policy, batched over a Forest (rlbook.sampling.sample).
//
// Each prompt is read once, and after it each distinct prefix its answers
// write, however many rows share it; every row draws its own token from its
// node's distribution at the chosen temperature. An answer ends at the
// end-of-turn mark or after `budget` characters. The record keeps, for every
// generated token, its log-probability under the sampling distribution and the
// node whose logits gave it, which the update reads again.

import { logSoftmax } from "./forward.js";

/** One token drawn from log-probabilities `logq` by inverse-CDF sampling. */
export function draw(logq, V, rng) {
  // The same distribution as rlbook's Gumbel-max draw, from one uniform number instead of V.
  const u = rng();
  let acc = 0, last = 0;
  for (let v = 0; v < V; v++) {
    if (logq[v] === -Infinity) continue;
    acc += Math.exp(logq[v]);
    last = v;
    if (u < acc) return v;
  }
  return last;  // u beyond the rounded total
}

/**
 * `n` answers to each prompt (token-id arrays of equal length), rows of one
 * prompt contiguous. Returns {rows, budget, prompt, tokens, logp, length, nodes}:
 * row r answers prompt[r]; tokens, logp and nodes are rows x budget; length[r]
 * counts the characters the policy wrote, the end-of-turn mark included.
 */
export function sampleRollouts(model, forest, prompts, n, temperature, budget, rng, eot) {
  const V = model.V, rows = prompts.length * n;
  forest.reset();
  const ends = prompts.map((p) => forest.insert(p));
  model.forward(forest, 0);
  const out = { rows, budget, prompt: new Int32Array(rows), tokens: new Int32Array(rows * budget).fill(eot),
    logp: new Float64Array(rows * budget), length: new Int32Array(rows), nodes: new Int32Array(rows * budget) };
  const current = new Int32Array(rows), dist = [];  // each row's node; each node's log-probabilities
  for (let r = 0; r < rows; r++) current[r] = ends[(out.prompt[r] = Math.floor(r / n))];
  let writing = rows;
  for (let t = 0; t < budget && writing > 0; t++) {
    const from = forest.count;
    for (let r = 0; r < rows; r++) {
      const node = current[r];
      if (node < 0) continue;  // this answer has ended
      const at = r * budget + t;
      const logq = dist[node] || (dist[node] = logSoftmax(forest.logits, node * V, V, temperature, new Float64Array(V)));
      const token = draw(logq, V, rng);
      out.tokens[at] = token;
      out.logp[at] = logq[token];
      out.nodes[at] = node;
      out.length[r] = t + 1;
      if (token === eot || t === budget - 1) {
        current[r] = -1;
        writing--;
      } else {
        current[r] = forest.child(node, token);  // nothing reads what follows the last character
      }
    }
    model.forward(forest, from);
  }
  return out;
}
