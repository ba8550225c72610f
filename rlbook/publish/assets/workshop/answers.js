// The exact probabilities of whole answers (rlbook.workshop.answer_probability)
// and a policy's most likely answers to one prompt, found without sampling.
//
// An answer's probability is the product of its characters' probabilities; it
// ends at the end-of-turn mark or after `budget` characters. A prefix's
// probability bounds that of every answer that continues it, so expanding the
// most probable prefix first (best-first search) meets the answers in order of
// probability: the first k complete answers met are the k most likely.

import { logSoftmax } from "./forward.js";

/** A binary max-heap of [logp, payload] pairs. */
class Heap {
  constructor() {
    this.items = [];
  }

  push(item) {
    const a = this.items;
    a.push(item);
    for (let i = a.length - 1; i > 0;) {
      const up = (i - 1) >> 1;
      if (a[up][0] >= a[i][0]) break;
      [a[up], a[i]] = [a[i], a[up]];
      i = up;
    }
  }

  pop() {
    const a = this.items, top = a[0], last = a.pop();
    if (a.length) {
      a[0] = last;
      for (let i = 0; ;) {
        const l = 2 * i + 1, r = l + 1;
        let best = i;
        if (l < a.length && a[l][0] > a[best][0]) best = l;
        if (r < a.length && a[r][0] > a[best][0]) best = r;
        if (best === i) break;
        [a[best], a[i]] = [a[i], a[best]];
        i = best;
      }
    }
    return top;
  }

  get size() {
    return this.items.length;
  }
}

/**
 * The `k` most likely answers of `policy` to `prompt` at `temperature`, most
 * likely first, as [{completion, p}]. Reads at most `limit` prefixes; should
 * the answers be spread so thin that the limit is reached first, it returns
 * the fewer answers found by then, which are still the most likely ones.
 */
export function topAnswers(policy, prompt, k, temperature, budget, limit = 400) {
  const forest = policy.forest, V = policy.model.V, eot = policy.eot;
  forest.reset();
  const logq = new Float64Array(V), heap = new Heap(), found = [];
  const expand = (node, text, logp) => {  // the node's logits are computed: queue its continuations
    logSoftmax(forest.logits, node * V, V, temperature, logq);
    for (let v = 0; v < V; v++) {
      if (logq[v] === -Infinity) continue;
      const next = text + policy.vocab[v];
      heap.push([logp + logq[v], { node, token: v, text: next, done: v === eot || next.length === budget }]);
    }
  };
  let node = -1;
  for (const token of policy.encode(prompt)) node = forest.child(node, token);
  policy.model.forward(forest, 0);
  expand(node, "", 0);
  while (found.length < k && heap.size && forest.count < limit) {
    const [logp, item] = heap.pop();
    if (item.done) found.push({ completion: item.text, p: Math.exp(logp) });
    else {
      const child = forest.child(item.node, item.token);
      policy.model.forward(forest, child);
      expand(child, item.text, logp);
    }
  }
  return found;
}

/** The exact probability of each of `completions` after `prompt` (a prefix shared by several is read once). */
export function answerProbabilities(policy, prompt, completions, temperature) {
  const forest = policy.forest, V = policy.model.V;
  forest.reset();
  const start = forest.insert(policy.encode(prompt));
  const chains = completions.map((c) => {
    const ids = policy.encode(c), chain = [start];  // chain[t]: the node whose logits give character t
    for (let t = 0; t + 1 < ids.length; t++) chain.push(forest.child(chain[t], ids[t]));
    return [ids, chain];
  });
  policy.model.forward(forest, 0);
  const logq = new Float64Array(V);
  return chains.map(([ids, chain]) => {
    let total = 0;
    ids.forEach((id, t) => {
      logSoftmax(forest.logits, chain[t] * V, V, temperature, logq);
      total += logq[id];
    });
    return Math.exp(total);
  });
}
