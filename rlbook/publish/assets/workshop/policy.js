// The policy as the page uses it: the book's vocabulary, one checkpoint's
// weights, the transformer over them and a Forest to read batches in.

import { backwardFields } from "./backward.js";
import { Forest } from "./forest.js";
import { logSoftmax, Transformer } from "./forward.js";
import { sampleRollouts } from "./sampler.js";
import { views } from "./weights.js";

export class Policy {
  /**
   * `data` is the exported RLBOOK_WORKSHOP_DATA; `flat` the checkpoint's float32 weights (not copied);
   * `capacity` the prefixes its forest has room for before it grows.
   */
  constructor(data, flat, capacity = 256) {
    this.data = data;
    this.flat = flat;
    this.vocab = data.vocab;
    this.eot = data.vocab.indexOf(data.eot);
    this.model = new Transformer(data.config, views(flat, data.tensors));
    this.forest = new Forest(this.model.V, this.model.B, { ...this.model.fields(), ...backwardFields(this.model) },
      capacity);
  }

  encode(text) {
    return Array.from(text, (ch) => {
      const id = this.vocab.indexOf(ch);
      if (id < 0) throw new RangeError(`character ${JSON.stringify(ch)} is not in the vocabulary`);
      return id;
    });
  }

  /** `n` answers to each prompt text; the rollouts of sampler.js with each row's completion text added. */
  sample(prompts, n, temperature, budget, rng) {
    const ids = prompts.map((p) => this.encode(p));
    const out = sampleRollouts(this.model, this.forest, ids, n, temperature, budget, rng, this.eot);
    out.completions = [];
    for (let r = 0; r < out.rows; r++) {
      let text = "";
      for (let t = 0; t < out.length[r]; t++) text += this.vocab[out.tokens[r * budget + t]];
      out.completions.push(text);
    }
    return out;
  }

  /**
   * Read recorded rollouts (a prompt text per row, tokens rows x budget, each
   * row's length) as the update reads sampled ones: returns them with the node
   * whose logits gave each token, the forward pass done.
   */
  readRollouts(prompts, tokens, length, budget) {
    const forest = this.forest, rows = prompts.length, nodes = new Int32Array(rows * budget);
    forest.reset();
    for (let r = 0; r < rows; r++) {
      let node = forest.insert(this.encode(prompts[r]));
      for (let t = 0; t < length[r]; t++) {
        nodes[r * budget + t] = node;
        if (t < length[r] - 1) node = forest.child(node, tokens[r * budget + t]);
      }
    }
    this.model.forward(forest, 0);
    return { rows, budget, tokens: Int32Array.from(tokens), length: Int32Array.from(length), nodes };
  }

  /** log pi(next character | text so far) after every prefix of each token sequence: one V-row per position. */
  logprobs(sequences) {
    const V = this.model.V, forest = this.forest;
    forest.reset();
    const nodes = sequences.map((seq) => {
      let node = -1;
      return seq.map((token) => (node = forest.child(node, token)));
    });
    this.model.forward(forest, 0);
    return nodes.map((chain) => chain.map((node) => Array.from(logSoftmax(forest.logits, node * V, V, 1,
      new Float64Array(V)))));
  }
}
