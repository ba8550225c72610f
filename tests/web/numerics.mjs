// The web workshop's numerics run under Node for tests/web: reads a JSON
// request (the exported workshop data and the computations wanted), writes
// the JavaScript's answers as JSON. pytest compares them with rlbook's.
//
//   node tests/web/numerics.mjs request.json answer.json

import { readFileSync, writeFileSync } from "node:fs";

import { erfc } from "../../rlbook/publish/assets/workshop/gelu.js";
import { Policy } from "../../rlbook/publish/assets/workshop/policy.js";
import { makeRng } from "../../rlbook/publish/assets/workshop/rng.js";
import { wilsonInterval } from "../../rlbook/publish/assets/workshop/stats.js";
import { centred, lossAndGradient } from "../../rlbook/publish/assets/workshop/train.js";
import { AdamW } from "../../rlbook/publish/assets/workshop/update.js";
import { verify } from "../../rlbook/publish/assets/workshop/verifier.js";
import { decodeCheckpoint, weightsHash } from "../../rlbook/publish/assets/workshop/weights.js";

const [requestPath, answerPath] = process.argv.slice(2);
const request = JSON.parse(readFileSync(requestPath, "utf8"));
const data = request.data;
const answer = {};

const flats = {};
for (const entry of data?.checkpoints ?? []) {
  flats[entry.name] = await decodeCheckpoint(entry, flats.base);
}

if (request.verify) answer.verify = request.verify.map(([p, c]) => verify(p, c));
if (request.erfc) answer.erfc = request.erfc.map(erfc);
if (request.wilson) answer.wilson = request.wilson.map(([s, n]) => wilsonInterval(s, n));
if (request.hash) {
  answer.hash = {};
  for (const [name, flat] of Object.entries(flats)) answer.hash[name] = await weightsHash(flat, data.tensors);
}
if (request.logprobs) {
  const { checkpoint, sequences } = request.logprobs;
  answer.logprobs = new Policy(data, flats[checkpoint]).logprobs(sequences);
}
if (request.update) {
  // One update on a recorded batch: the loss, the gradient, and the weights after one AdamW step.
  const u = request.update, policy = new Policy(data, Float32Array.from(flats[u.checkpoint]));
  const rollouts = policy.readRollouts(u.prompts, u.tokens, u.length, u.budget);
  rollouts.logp = Float64Array.from(u.old_logp);
  rollouts.advantage = Float64Array.from(u.advantage);
  const grad = new Float64Array(policy.flat.length);
  const loss = lossAndGradient(policy, rollouts, data.recipe, grad);
  const optimizer = new AdamW(grad.length, { betas: data.recipe.betas, eps: data.recipe.adam_eps,
    weightDecay: data.recipe.weight_decay });
  optimizer.step(policy.flat, grad, u.lr);
  answer.update = { loss, grad: Array.from(grad), weights: Array.from(policy.flat), nodes: policy.forest.count };
}
if (request.sample) {
  const s = request.sample, policy = new Policy(data, flats[s.checkpoint]);
  const out = policy.sample([s.prompt], s.n, s.temperature, s.budget, makeRng(s.seed));
  answer.sample = { completions: out.completions,
    logp: out.completions.map((c, r) => Array.from(out.logp.subarray(r * s.budget, r * s.budget + c.length))) };
}
if (request.reuse) {
  // The trainer's shortcut: the update reads its log-probabilities from the forward pass that sampled the batch.
  // Here the same batch is also read afresh, as a recorded batch is, and both gradients are returned.
  const r = request.reuse, policy = new Policy(data, flats.base), recipe = data.recipe;
  const prompts = data.splits.train;
  const rollouts = policy.sample(prompts, recipe.group_size, recipe.temperature, recipe.budget, makeRng(r.seed));
  const rewards = rollouts.completions.map((c, i) => verify(prompts[rollouts.prompt[i]], c).reward);
  rollouts.advantage = centred(rewards, recipe.group_size).advantage;
  const shared = new Float64Array(policy.flat.length), fresh = new Float64Array(policy.flat.length);
  const sharedLoss = lossAndGradient(policy, rollouts, recipe, shared);
  const again = policy.readRollouts(Array.from(rollouts.prompt, (p) => prompts[p]), rollouts.tokens, rollouts.length,
    recipe.budget);
  Object.assign(again, { logp: rollouts.logp, advantage: rollouts.advantage });
  const freshLoss = lossAndGradient(policy, again, recipe, fresh);
  answer.reuse = { sharedLoss, freshLoss, shared: Array.from(shared), fresh: Array.from(fresh) };
}
writeFileSync(answerPath, JSON.stringify(answer));
