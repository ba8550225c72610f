// The sample panel: pick a sum, a temperature and a policy, and see 32 answers
// of it, each judged by the exact verifier, with the expected reward they
// estimate and its interval. The policies are the book's real checkpoints
// (base and main) and, once the lab has trained, the reader's own run at any
// step it has reached. Sampling runs on the page itself: 32 answers take a
// few milliseconds.

import { answerProbabilities } from "./answers.js";
import { answerChip, el, fixed, probability, shown, VERDICTS } from "./dom.js";
import { Policy } from "./policy.js";
import { makeRng } from "./rng.js";
import { wilsonInterval } from "./stats.js";
import { promptOf, sumGrid, sumKind } from "./sum-grid.js";
import { verify } from "./verifier.js";
import { weightsHash } from "./weights.js";

const SAMPLES = 32;  // rlbook.workshop.N_SAMPLES, the course plate's 32
const BARS = 12;  // distinct answers drawn as bars; the chips show every answer

/**
 * The sum the panel opens on: the one the page's text discusses, named by an
 * element `#rlbook-workshop-sum` with a `data-sum` such as "9+6" (chapter 1
 * writes its workshop's uncertain sum there), else 5+6.
 */
export function startingSum(doc = globalThis.document) {
  const named = doc?.getElementById?.("rlbook-workshop-sum")?.dataset?.sum ?? "";
  const match = /^(\d)\+(\d)$/.exec(named.trim());
  return match ? { a: Number(match[1]), b: Number(match[2]) } : { a: 5, b: 6 };
}

/**
 * Mount the panel into `root`; `policies` maps a checkpoint name to {policy,
 * entry, hash}; `lab` is the page's channel to the lab's run (its `run`, and
 * the events "run" and "step").
 */
export function mountSamplePanel(root, data, policies, lab) {
  const state = { ...startingSum(), temperature: 1, checkpoint: "base", step: 0 };
  const rng = makeRng(crypto.getRandomValues(new Uint32Array(1))[0]);
  const budget = data.recipes.main.budget;
  const mine = new Policy(data, new Float32Array(policies.base.policy.flat.length));  // this run's weights, when picked
  const hashes = new WeakMap();  // snapshot -> its weights hash
  let renders = 0;  // a weights hash arrives later; only the latest render's is shown

  const grid = sumGrid(data, "Sum a + b (rows a, columns b)", (a, b) => { Object.assign(state, { a, b }); render(); });
  const temperature = el("input", { type: "range", min: "0.1", max: "2", step: "0.1", value: "1",
    "aria-label": "temperature", oninput: () => { state.temperature = Number(temperature.value); render(); } });
  const tLabel = el("output");
  const choice = (name, text) => el("label", { class: "rw-choice" },
    el("input", { type: "radio", name: "rw-checkpoint", value: name, checked: name === state.checkpoint,
      onchange: () => { state.checkpoint = name; if (name === "run") pickLatest(); render(); } }), ` ${text}`);
  const radios = Object.keys(policies)
    .map((name) => choice(name, `${name} ${name === "base" ? "(after SFT)" : "(after RL)"}`));
  const stepInput = el("input", { type: "range", min: "0", max: "0", step: "1", value: "0", "aria-label": "step of this run",
    oninput: () => { state.step = Number(stepInput.value); render(); } });
  const stepLabel = el("output");
  const runChoice = el("div", { class: "rw-this-run", hidden: true }, choice("run", "this run (trained in the lab below)"),
    el("div", { class: "rw-run-step" }, el("span", { text: "at step " }), stepLabel, stepInput));
  const identity = el("p", { class: "rw-identity" });
  const chips = el("div", { class: "rw-chips", "aria-label": `${SAMPLES} sampled answers` });
  const bars = el("div", { class: "rw-bars" });
  const readout = el("p", { class: "rw-readout", "aria-live": "polite" });
  const prompt = el("p", { class: "rw-prompt" });
  const again = el("button", { type: "button", class: "rw-button", onclick: () => render(), text: `Sample ${SAMPLES} again` });
  root.append(el("div", { class: "rw-panel" },
    el("div", { class: "rw-controls" }, grid.node,
      el("div", {},
        el("p", { class: "rw-label" }, "Temperature ", tLabel), temperature,
        el("p", { class: "rw-label", text: "Policy" }), radios, runChoice, identity, again)),
    prompt, chips, bars, readout,
    el("p", { class: "rw-key" }, Object.entries(VERDICTS).slice(0, 4).map(([status, label]) =>
      el("span", { class: `rw-swatch rw-${status}`, text: label })))));

  // The lab's run: "this run" is offered from its first step, at any step it has reached.
  const follow = () => {
    const run = lab.run, reached = run ? run.snapshots.length - 1 : 0;
    runChoice.hidden = reached === 0;
    stepInput.max = String(reached);
    if (state.checkpoint === "run" && reached === 0) {
      state.checkpoint = "base";
      radios[0].querySelector("input").checked = true;
      render();
    }
  };
  const pickLatest = () => {  // "this run" is picked at the latest step it has reached
    state.step = lab.run.snapshots.length - 1;
    stepInput.value = String(state.step);
  };
  lab.addEventListener("run", () => {
    state.step = 0;
    stepInput.value = "0";
    follow();
  });
  lab.addEventListener("step", follow);

  /** The policy picked, with the words that name it and its weights hash (a promise). */
  function picked() {
    if (state.checkpoint !== "run") {
      const { policy, entry, hash } = policies[state.checkpoint];
      return { policy, name: state.checkpoint, identity: Promise.resolve(`${entry.version} · weights hash ${hash}`) };
    }
    const run = lab.run, step = Math.min(state.step, run.snapshots.length - 1), flat = run.snapshots[step];
    mine.flat.set(flat);
    if (!hashes.has(flat)) hashes.set(flat, weightsHash(flat, data.tensors));
    return { policy: mine, name: `this run at step ${step}`,
      identity: hashes.get(flat)
        .then((hash) => `this run (random seed ${run.seed}) at step ${step} · weights hash ${hash}`) };
  }

  function render() {
    const { a, b, temperature: T } = state, text = promptOf(a, b);
    const { policy, name, identity: words } = picked();
    grid.select(a, b);
    tLabel.textContent = fixed(T, 1);
    stepLabel.textContent = `${Math.min(state.step, Number(stepInput.max))} `;
    const render_ = ++renders;
    words.then((line) => { if (render_ === renders) identity.textContent = line; });
    const started = performance.now();
    const rollouts = policy.sample([text], SAMPLES, T, budget, rng);
    const verdicts = rollouts.completions.map((c) => ({ completion: c, ...verify(text, c) }));
    const ms = performance.now() - started;
    const right = verdicts.filter((v) => v.reward === 1).length;
    const [lo, hi] = wilsonInterval(right, SAMPLES);
    const canonical = `${a + b}${data.eot}`;
    const exact = answerProbabilities(policy, text, [canonical], T)[0];
    const heldout = sumKind(data, text) === "held out";
    prompt.textContent = `${text}  (${a} + ${b} = ${a + b}${heldout ? ", held out" : ""}), T = ${fixed(T, 1)}, ${name}`;
    chips.replaceChildren(...verdicts.map(answerChip));
    const counts = new Map();
    verdicts.forEach((v) => counts.set(v.completion, [(counts.get(v.completion)?.[0] ?? 0) + 1, v.status]));
    const ranked = [...counts].sort((x, y) => y[1][0] - x[1][0] || (x[0] < y[0] ? -1 : 1));
    const rest = ranked.slice(BARS).reduce((n, [, [count]]) => n + count, 0);
    bars.replaceChildren(el("div", {}, ranked.slice(0, BARS).map(([answer, [count, status]]) => el("div", { class: "rw-bar-row" },
      el("code", { text: shown(answer) }),
      el("span", { class: `rw-bar rw-${status}`, style: `width: ${(100 * count) / SAMPLES}%` }),
      el("span", { text: `${count} × ${VERDICTS[status]}` }))),
    rest ? el("p", { class: "rw-key", text: `and ${ranked.length - BARS} more answers, ${rest} samples in all` }) : null));
    readout.textContent = `Expected reward ${fixed(right / SAMPLES)}: ${right} of ${SAMPLES} answers right ` +
      `(95 % Wilson interval ${fixed(lo)} to ${fixed(hi)}). Exact probability of the right answer ` +
      `${canonical} at this temperature: ${probability(exact)}. Sampled in ${fixed(ms, 1)} ms.`;
    root.dataset.sampleMs = String(ms);
  }
  // The first answers are drawn in a task of their own, after warm-up draws in tasks of their own: the first
  // calls run before the JavaScript engine has compiled the model's loops, and together they would hold the
  // page up for longer than the 50 ms a task may take.
  const warmUps = [1, 4, 16];
  const next = () => {
    if (!warmUps.length) return render();
    policies.base.policy.sample(["U:0+0?|A:"], warmUps.shift(), 1, budget, rng);
    setTimeout(next, 0);
  };
  setTimeout(next, 0);
}
