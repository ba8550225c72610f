// The policy's forward pass over the nodes of a Forest: rlbook.policy.Policy
// (token and position embeddings, pre-norm attention and MLP blocks, a final
// layer norm and a linear read-out), computed in float64 from the float32
// weights. Every intermediate that the backward pass needs is kept in the
// forest, one row per node, so one forward serves both sampling and the update.

import { gelu } from "./gelu.js";

const LN_EPS = 1e-5;  // nn.LayerNorm's default

export class Transformer {
  /** `config` is rlbook's PolicyConfig; `weights` maps state-dict names to Float32Array views. */
  constructor(config, weights) {
    this.V = config.vocab_size;
    this.D = config.d_model;
    this.H = config.n_head;
    this.L = config.n_layer;
    this.B = config.block_size;
    this.F = 4 * this.D;
    this.w = weights;
  }

  /** Weights of block `l` by their short names. */
  block(l) {
    const w = this.w, p = `blocks.${l}.`;
    return { ln1w: w[p + "ln1.weight"], ln1b: w[p + "ln1.bias"], qkvw: w[p + "attn.qkv.weight"],
      qkvb: w[p + "attn.qkv.bias"], outw: w[p + "attn.out.weight"], outb: w[p + "attn.out.bias"],
      ln2w: w[p + "ln2.weight"], ln2b: w[p + "ln2.bias"], fc1w: w[p + "mlp.0.weight"], fc1b: w[p + "mlp.0.bias"],
      fc2w: w[p + "mlp.2.weight"], fc2b: w[p + "mlp.2.bias"] };
  }

  /** The activation arrays a Forest keeps for this model: name -> width per node. */
  fields() {
    const { D, H, F, B, L, V } = this;
    const f = {};
    for (let l = 0; l < L; l++) {
      Object.assign(f, { [`x${l}`]: D, [`hat1_${l}`]: D, [`rstd1_${l}`]: 1, [`h1_${l}`]: D, [`qkv${l}`]: 3 * D,
        [`att${l}`]: H * B, [`y${l}`]: D, [`mid${l}`]: D, [`hat2_${l}`]: D, [`rstd2_${l}`]: 1, [`h2_${l}`]: D,
        [`u${l}`]: F, [`g${l}`]: F });
    }
    Object.assign(f, { [`x${L}`]: D, hatf: D, rstdf: 1, hf: D, logits: V });
    return f;
  }

  /** Compute nodes from..forest.count-1; every earlier node (any ancestor) must be computed already. */
  forward(forest, from = 0) {
    const { D, L } = this, to = forest.count;
    if (to <= from) return;
    const x0 = forest.x0, tok = this.w["tok.weight"], pos = this.w["pos.weight"];
    for (let i = from; i < to; i++) {
      const t = forest.token[i] * D, p = forest.pos[i] * D;
      for (let d = 0; d < D; d++) x0[i * D + d] = tok[t + d] + pos[p + d];
    }
    for (let l = 0; l < L; l++) {
      const b = this.block(l);
      const x = forest[`x${l}`], mid = forest[`mid${l}`], next = forest[`x${l + 1}`];
      const h1 = forest[`h1_${l}`], qkv = forest[`qkv${l}`], y = forest[`y${l}`];
      const h2 = forest[`h2_${l}`], u = forest[`u${l}`], g = forest[`g${l}`];
      layerNorm(x, forest[`hat1_${l}`], forest[`rstd1_${l}`], h1, b.ln1w, b.ln1b, from, to, D);
      linear(h1, b.qkvw, b.qkvb, qkv, from, to, D, 3 * D);
      this.attend(forest, l, from, to);
      linear(y, b.outw, b.outb, mid, from, to, D, D);
      for (let k = from * D; k < to * D; k++) mid[k] += x[k];
      layerNorm(mid, forest[`hat2_${l}`], forest[`rstd2_${l}`], h2, b.ln2w, b.ln2b, from, to, D);
      linear(h2, b.fc1w, b.fc1b, u, from, to, D, this.F);
      for (let k = from * this.F; k < to * this.F; k++) g[k] = gelu(u[k]);
      linear(g, b.fc2w, b.fc2b, next, from, to, this.F, D);
      for (let k = from * D; k < to * D; k++) next[k] += mid[k];
    }
    layerNorm(forest[`x${L}`], forest.hatf, forest.rstdf, forest.hf, this.w["ln_f.weight"], this.w["ln_f.bias"],
      from, to, D);
    linear(forest.hf, this.w["head.weight"], null, forest.logits, from, to, D, this.V);
  }

  /** Causal self-attention of each node over its context (its ancestors and itself), head by head. */
  attend(forest, l, from, to) {
    const { D, H, B } = this, size = D / H, scale = 1 / Math.sqrt(size);
    const qkv = forest[`qkv${l}`], att = forest[`att${l}`], y = forest[`y${l}`];
    const context = forest.context, lengths = forest.contextLength;
    for (let i = from; i < to; i++) {
      const n = lengths[i], c0 = i * B;
      for (let h = 0; h < H; h++) {
        const q = i * 3 * D + h * size, a = (i * H + h) * B;
        let top = -Infinity;
        for (let j = 0; j < n; j++) {
          const k = context[c0 + j] * 3 * D + D + h * size;
          let s = 0;
          for (let d = 0; d < size; d++) s += qkv[q + d] * qkv[k + d];
          att[a + j] = s * scale;
          if (att[a + j] > top) top = att[a + j];
        }
        let sum = 0;
        for (let j = 0; j < n; j++) sum += (att[a + j] = Math.exp(att[a + j] - top));
        const out = i * D + h * size;
        for (let d = 0; d < size; d++) y[out + d] = 0;
        for (let j = 0; j < n; j++) {
          const p = (att[a + j] /= sum), v = context[c0 + j] * 3 * D + 2 * D + h * size;
          for (let d = 0; d < size; d++) y[out + d] += p * qkv[v + d];
        }
      }
    }
  }
}

/**
 * out[r] = W x[r] + b for rows from..to-1 (W is nIn-wide rows, as nn.Linear
 * stores it). Four rows at a time: each weight is loaded once for four
 * independent sums, which runs about twice as fast as one row at a time,
 * where every addition waits for the one before.
 */
export function linear(x, w, b, out, from, to, nIn, nOut) {
  let r = from;
  for (; r + 4 <= to; r += 4) {
    const x0 = r * nIn, x1 = x0 + nIn, x2 = x1 + nIn, x3 = x2 + nIn;
    for (let o = 0; o < nOut; o++) {
      const wo = o * nIn, bias = b ? b[o] : 0;
      let s0 = bias, s1 = bias, s2 = bias, s3 = bias;
      for (let i = 0; i < nIn; i++) {
        const wi = w[wo + i];
        s0 += x[x0 + i] * wi;
        s1 += x[x1 + i] * wi;
        s2 += x[x2 + i] * wi;
        s3 += x[x3 + i] * wi;
      }
      out[r * nOut + o] = s0;
      out[(r + 1) * nOut + o] = s1;
      out[(r + 2) * nOut + o] = s2;
      out[(r + 3) * nOut + o] = s3;
    }
  }
  for (; r < to; r++) {
    for (let o = 0; o < nOut; o++) {
      let s = b ? b[o] : 0;
      for (let i = 0; i < nIn; i++) s += x[r * nIn + i] * w[o * nIn + i];
      out[r * nOut + o] = s;
    }
  }
}

/** nn.LayerNorm over rows from..to-1, keeping the normalised rows and 1/std for the backward pass. */
function layerNorm(x, hat, rstd, out, w, b, from, to, D) {
  for (let r = from; r < to; r++) {
    const o = r * D;
    let mean = 0;
    for (let d = 0; d < D; d++) mean += x[o + d];
    mean /= D;
    let variance = 0;
    for (let d = 0; d < D; d++) variance += (x[o + d] - mean) ** 2;
    const inv = 1 / Math.sqrt(variance / D + LN_EPS);
    rstd[r] = inv;
    for (let d = 0; d < D; d++) {
      hat[o + d] = (x[o + d] - mean) * inv;
      out[o + d] = hat[o + d] * w[d] + b[d];
    }
  }
}

/** log softmax(logits / temperature) of one node's row of logits, written into `out`. */
export function logSoftmax(logits, offset, V, temperature, out) {
  let top = -Infinity;
  for (let v = 0; v < V; v++) top = Math.max(top, logits[offset + v] / temperature);
  let sum = 0;
  for (let v = 0; v < V; v++) sum += Math.exp(logits[offset + v] / temperature - top);
  const norm = top + Math.log(sum);
  for (let v = 0; v < V; v++) out[v] = logits[offset + v] / temperature - norm;
  return out;
}
