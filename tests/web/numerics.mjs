// The web workshop's numerics run under Node for tests/web: reads a JSON
// request (the exported workshop data and the computations wanted), writes
// the JavaScript's answers as JSON. pytest compares them with rlbook's.
//
//   node tests/web/numerics.mjs request.json answer.json
//
// request.modules names another folder of the same modules to run instead of
// rlbook/publish/assets/workshop/ (the compacted copies the site ships).

import { readFileSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [requestPath, answerPath] = process.argv.slice(2);
const request = JSON.parse(readFileSync(requestPath, "utf8"));
const folder = request.modules ?? new URL("../../rlbook/publish/assets/workshop/", import.meta.url).pathname;
const load = (name) => import(pathToFileURL(`${folder}/${name}`).href);
const { advantages, zeroVarianceFraction } = await load("advantages.js");
const { explain, signed } = await load("advantages-panel.js");
const { answerProbabilities, topAnswers } = await load("answers.js");
const { pythonInt, verifyFailOpen } = await load("fail-open.js");
const { erfc } = await load("gelu.js");
const { Policy } = await load("policy.js");
const { makeRng } = await load("rng.js");
const { wilsonInterval } = await load("stats.js");
const { judge, lossAndGradient, Trainer } = await load("train.js");
const { AdamW } = await load("update.js");
const { startingSum } = await load("sample-panel.js");
const { loopholeText } = await load("controls.js");
const { summaryText } = await load("lab-panel.js");
const { describe } = await load("recipe.js");
const { movedText } = await load("watch-view.js");
const { verify } = await load("verifier.js");
const { decodeCheckpoint, weightsHash } = await load("weights.js");

const data = request.data;
const answer = {};

const flats = {};
for (const entry of data?.checkpoints ?? []) {
  flats[entry.name] = await decodeCheckpoint(entry, flats.base);
}

if (request.advantagesPanel) answer.advantagesPanel = request.advantagesPanel.map(explain);
if (request.signed) answer.signed = request.signed.map(signed);
if (request.verify) answer.verify = request.verify.map(([p, c]) => verify(p, c));
if (request.failOpen) answer.failOpen = request.failOpen.map(([p, c]) => verifyFailOpen(p, c));
if (request.pythonInt) answer.pythonInt = request.pythonInt.map(pythonInt);
if (request.judge) answer.judge = request.judge.map(([v, p, c]) => judge(v, p, c));
if (request.erfc) answer.erfc = request.erfc.map(erfc);
if (request.startingSum) {
  answer.startingSum = request.startingSum.map((sum) =>
    startingSum({ getElementById: (id) => (sum === null || id !== "rlbook-workshop-sum" ? null : { dataset: { sum } }) }));
}
if (request.movedText) answer.movedText = request.movedText.map(movedText);
if (request.summaryText) answer.summaryText = request.summaryText.map(([run, refs, name]) => summaryText(run, refs, name));
if (request.loopholeText) answer.loopholeText = request.loopholeText.map(loopholeText);
if (request.describe) answer.describe = request.describe.map(([recipe, run]) => describe(data, recipe, run));
if (request.wilson) answer.wilson = request.wilson.map(([s, n]) => wilsonInterval(s, n));
if (request.advantages) {
  answer.advantages = request.advantages.map(({ rewards, groupSize, method }) => ({
    values: Array.from(advantages(rewards, groupSize, method)), zeroVariance: zeroVarianceFraction(rewards, groupSize) }));
}
if (request.hash) {
  answer.hash = {};
  for (const [name, flat] of Object.entries(flats)) answer.hash[name] = await weightsHash(flat, data.tensors);
}
if (request.logprobs) {
  const { checkpoint, sequences } = request.logprobs;
  answer.logprobs = new Policy(data, flats[checkpoint]).logprobs(sequences);
}
if (request.update) {
  // One update on a recorded batch: the loss, the gradient, and the weights after one AdamW step. With
  // `method`, the advantages are computed here from the batch's rewards, as the trainer computes them.
  const u = request.update, policy = new Policy(data, Float32Array.from(flats[u.checkpoint]));
  const recipe = data.recipes.main;
  const rollouts = policy.readRollouts(u.prompts, u.tokens, u.length, u.budget);
  rollouts.logp = Float64Array.from(u.old_logp);
  rollouts.advantage = u.method ? advantages(u.rewards, u.group_size, u.method) : Float64Array.from(u.advantage);
  const grad = new Float64Array(policy.flat.length);
  const loss = lossAndGradient(policy, rollouts, recipe, grad);
  const optimizer = new AdamW(grad.length, { betas: recipe.betas, eps: recipe.adam_eps,
    weightDecay: recipe.weight_decay });
  optimizer.step(policy.flat, grad, u.lr);
  answer.update = { loss, grad: Array.from(grad), weights: Array.from(policy.flat), nodes: policy.forest.count,
    advantage: Array.from(rollouts.advantage) };
}
if (request.sample) {
  const s = request.sample, policy = new Policy(data, flats[s.checkpoint]);
  const out = policy.sample([s.prompt], s.n, s.temperature, s.budget, makeRng(s.seed));
  answer.sample = { completions: out.completions,
    logp: out.completions.map((c, r) => Array.from(out.logp.subarray(r * s.budget, r * s.budget + c.length))) };
}
if (request.top) {
  const t = request.top, policy = new Policy(data, flats[t.checkpoint]);
  answer.top = t.prompts.map((prompt) => topAnswers(policy, prompt, t.k, t.temperature, t.budget));
  answer.probabilities = t.prompts.map((prompt, i) => answerProbabilities(policy, prompt, t.completions[i],
    t.temperature));
}
if (request.train) {
  // A few steps of a recipe watching one sum; the weights after each step too, when asked.
  const t = request.train, trainer = new Trainer(data, flats.base, t.seed, { ...data.recipes[t.recipe], ...t.change });
  answer.train = { steps: [], weights: [] };
  for (let i = 0; i < t.steps; i++) {
    const { sampleMs, watchMs, updateMs, ...record } = trainer.next(t.watch);
    answer.train.steps.push(record);
    if (t.weights) answer.train.weights.push(Array.from(trainer.policy.flat));
  }
  answer.train.evaluation = trainer.evaluate();
}
if (request.reuse) {
  // The trainer's shortcut: the update reads its log-probabilities from the forward pass that sampled the batch.
  // Here the same batch is also read afresh, as a recorded batch is, and both gradients are returned.
  const r = request.reuse, policy = new Policy(data, flats.base), recipe = data.recipes.main;
  const prompts = data.splits.train;
  const rollouts = policy.sample(prompts, recipe.group_size, recipe.temperature, recipe.budget, makeRng(r.seed));
  const rewards = rollouts.completions.map((c, i) => verify(prompts[rollouts.prompt[i]], c).reward);
  rollouts.advantage = advantages(rewards, recipe.group_size, "centered");
  const shared = new Float64Array(policy.flat.length), fresh = new Float64Array(policy.flat.length);
  const sharedLoss = lossAndGradient(policy, rollouts, recipe, shared);
  const again = policy.readRollouts(Array.from(rollouts.prompt, (p) => prompts[p]), rollouts.tokens, rollouts.length,
    recipe.budget);
  Object.assign(again, { logp: rollouts.logp, advantage: rollouts.advantage });
  const freshLoss = lossAndGradient(policy, again, recipe, fresh);
  answer.reuse = { sharedLoss, freshLoss, shared: Array.from(shared), fresh: Array.from(fresh) };
}
writeFileSync(answerPath, JSON.stringify(answer));
