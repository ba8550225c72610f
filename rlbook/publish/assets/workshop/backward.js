// The backward pass of forward.js over the nodes of a Forest: given the loss's
// gradient with respect to each node's logits, add the gradient with respect
// to every weight into `grad` (a Float64Array laid out like the flat weights).
//
// It is PyTorch's autograd for rlbook.policy.Policy written out, layer by
// layer in reverse. A node's keys and values are read by every node below it
// in the tree, so their gradients gather contributions from all descendants;
// going layer by layer over all nodes at once lets every node's contributions
// arrive before its own keys' and values' gradients are used.

import { geluGrad } from "./gelu.js";
import { layout } from "./weights.js";

/** Gradient buffers per node, beside the forward's activations in the forest. */
export function backwardFields(model) {
  return { dx: model.D, dmid: model.D, dh: model.D, dy: model.D, dqkv: 3 * model.D, du: model.F };
}

/** Add d loss / d weights into `grad`, from `dlogits` (a Float64Array of nodes x vocab) of every node. */
export function backward(model, forest, dlogits, grad, tensors) {
  const { D, F, V, L } = model, n = forest.count;
  const at = layout(tensors).places;
  const g = (name) => grad.subarray(at[name][0], at[name][0] + at[name][1].reduce((a, b) => a * b, 1));
  const { dx, dmid, dh, dy, dqkv, du } = forest;
  linearBack(dlogits, forest.hf, model.w["head.weight"], g("head.weight"), null, dh, n, D, V);
  layerNormBack(dh, forest.hatf, forest.rstdf, model.w["ln_f.weight"], g("ln_f.weight"), g("ln_f.bias"), dx, n, D, false);
  for (let l = L - 1; l >= 0; l--) {
    const b = model.block(l), p = `blocks.${l}.`;
    // x_{l+1} = mid + fc2(gelu(fc1(ln2(mid)))): the MLP's residual branch.
    linearBack(dx, forest[`g${l}`], b.fc2w, g(p + "mlp.2.weight"), g(p + "mlp.2.bias"), du, n, F, D);
    const u = forest[`u${l}`];
    for (let k = 0; k < n * F; k++) du[k] *= geluGrad(u[k]);
    linearBack(du, forest[`h2_${l}`], b.fc1w, g(p + "mlp.0.weight"), g(p + "mlp.0.bias"), dh, n, D, F);
    dmid.set(dx.subarray(0, n * D));
    layerNormBack(dh, forest[`hat2_${l}`], forest[`rstd2_${l}`], b.ln2w, g(p + "ln2.weight"), g(p + "ln2.bias"),
      dmid, n, D, true);
    // mid = x_l + out(attention(qkv(ln1(x_l)))): the attention's residual branch.
    linearBack(dmid, forest[`y${l}`], b.outw, g(p + "attn.out.weight"), g(p + "attn.out.bias"), dy, n, D, D);
    attendBack(model, forest, l, n);
    linearBack(dqkv, forest[`h1_${l}`], b.qkvw, g(p + "attn.qkv.weight"), g(p + "attn.qkv.bias"), dh, n, D, 3 * D);
    dx.set(dmid.subarray(0, n * D));
    layerNormBack(dh, forest[`hat1_${l}`], forest[`rstd1_${l}`], b.ln1w, g(p + "ln1.weight"), g(p + "ln1.bias"),
      dx, n, D, true);
  }
  const dtok = g("tok.weight"), dpos = g("pos.weight");
  for (let i = 0; i < n; i++) {
    const t = forest.token[i] * D, p = forest.pos[i] * D;
    for (let d = 0; d < D; d++) {
      dtok[t + d] += dx[i * D + d];
      dpos[p + d] += dx[i * D + d];
    }
  }
}

/**
 * For out = W x + b over n rows: write din = dout W and add dW += dout^T x and
 * db += the sum of dout's rows. As in forward.js's linear, four independent
 * sums at a time (four rows of din, then four rows of dW); rows of dout that
 * are zero (nodes whose logits no loss term reads) are skipped.
 */
function linearBack(dout, x, w, dw, db, din, n, nIn, nOut) {
  din.fill(0, 0, n * nIn);
  let r = 0;
  for (; r + 4 <= n; r += 4) {
    const d0 = r * nIn, d1 = d0 + nIn, d2 = d1 + nIn, d3 = d2 + nIn;
    for (let o = 0; o < nOut; o++) {
      const a0 = dout[r * nOut + o], a1 = dout[(r + 1) * nOut + o];
      const a2 = dout[(r + 2) * nOut + o], a3 = dout[(r + 3) * nOut + o];
      if (a0 === 0 && a1 === 0 && a2 === 0 && a3 === 0) continue;
      const wo = o * nIn;
      for (let i = 0; i < nIn; i++) {
        const wi = w[wo + i];
        din[d0 + i] += a0 * wi;
        din[d1 + i] += a1 * wi;
        din[d2 + i] += a2 * wi;
        din[d3 + i] += a3 * wi;
      }
    }
  }
  for (; r < n; r++) {
    for (let o = 0; o < nOut; o++) {
      const a = dout[r * nOut + o];
      for (let i = 0; i < nIn; i++) din[r * nIn + i] += a * w[o * nIn + i];
    }
  }
  let o = 0;
  for (; o + 4 <= nOut; o += 4) {
    const w0 = o * nIn, w1 = w0 + nIn, w2 = w1 + nIn, w3 = w2 + nIn;
    for (let r = 0; r < n; r++) {
      const a0 = dout[r * nOut + o], a1 = dout[r * nOut + o + 1];
      const a2 = dout[r * nOut + o + 2], a3 = dout[r * nOut + o + 3];
      if (a0 === 0 && a1 === 0 && a2 === 0 && a3 === 0) continue;
      if (db) {
        db[o] += a0;
        db[o + 1] += a1;
        db[o + 2] += a2;
        db[o + 3] += a3;
      }
      const xr = r * nIn;
      for (let i = 0; i < nIn; i++) {
        const xi = x[xr + i];
        dw[w0 + i] += a0 * xi;
        dw[w1 + i] += a1 * xi;
        dw[w2 + i] += a2 * xi;
        dw[w3 + i] += a3 * xi;
      }
    }
  }
  for (; o < nOut; o++) {
    for (let r = 0; r < n; r++) {
      const a = dout[r * nOut + o];
      if (db) db[o] += a;
      for (let i = 0; i < nIn; i++) dw[o * nIn + i] += a * x[r * nIn + i];
    }
  }
}

/**
 * For out = hat * w + b with hat = (x - mean) / std: add the weight and bias
 * gradients and write (or, with `accumulate`, add) d x into `dx`.
 */
function layerNormBack(dout, hat, rstd, w, dw, db, dx, n, D, accumulate) {
  for (let r = 0; r < n; r++) {
    const o = r * D;
    let meanG = 0, meanGH = 0;
    for (let d = 0; d < D; d++) {
      const gh = dout[o + d] * w[d];
      dw[d] += dout[o + d] * hat[o + d];
      db[d] += dout[o + d];
      meanG += gh;
      meanGH += gh * hat[o + d];
    }
    meanG /= D;
    meanGH /= D;
    for (let d = 0; d < D; d++) {
      const value = rstd[r] * (dout[o + d] * w[d] - meanG - hat[o + d] * meanGH);
      dx[o + d] = accumulate ? dx[o + d] + value : value;
    }
  }
}

/**
 * Attention's backward pass: from dy (d loss / d attention output) to dqkv.
 * With p = softmax(s), s_j = q . k_j / sqrt(size) and y = sum_j p_j v_j:
 * dv_j += p_j dy, dp_j = dy . v_j, ds_j = p_j (dp_j - sum_j' p_j' dp_j'),
 * dq = sum_j ds_j k_j / sqrt(size) and dk_j += ds_j q / sqrt(size).
 */
function attendBack(model, forest, l, n) {
  const { D, H, B } = model, size = D / H, scale = 1 / Math.sqrt(size);
  const qkv = forest[`qkv${l}`], att = forest[`att${l}`], dy = forest.dy, dqkv = forest.dqkv;
  const context = forest.context, lengths = forest.contextLength;
  const ds = new Float64Array(B);
  dqkv.fill(0, 0, n * 3 * D);
  for (let i = 0; i < n; i++) {
    const len = lengths[i], c0 = i * B;
    for (let h = 0; h < H; h++) {
      const a = (i * H + h) * B, out = i * D + h * size, q = i * 3 * D + h * size;
      let weighted = 0;
      for (let j = 0; j < len; j++) {
        const v = context[c0 + j] * 3 * D + 2 * D + h * size;
        let dp = 0;
        for (let d = 0; d < size; d++) {
          dp += dy[out + d] * qkv[v + d];
          dqkv[v + d] += att[a + j] * dy[out + d];
        }
        ds[j] = dp;
        weighted += att[a + j] * dp;
      }
      for (let j = 0; j < len; j++) {
        const k = context[c0 + j] * 3 * D + D + h * size;
        const s = att[a + j] * (ds[j] - weighted) * scale;
        for (let d = 0; d < size; d++) {
          dqkv[q + d] += s * qkv[k + d];
          dqkv[k + d] += s * qkv[q + d];
        }
      }
    }
  }
}
