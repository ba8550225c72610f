// The train panel: main's RL recipe run from base in a Web Worker, step by
// step, with its training reward, its share of zero-variance groups and its
// held-out expected reward at every checkpoint drawn as it learns, beside the
// held-out expected reward of the book's own main run for seeds 0 to 2.

import { LineChart } from "./charts.js";
import { el, fixed } from "./dom.js";

/** Mount the panel into `root`; `bundle` is the workshop's own script function, which the worker runs. */
export function mountTrainPanel(root, data, baseFlat, bundle) {
  const recipe = data.recipe, steps = recipe.steps;
  const source = `"use strict";\n${bundle.toString()}\nrlbookWorkshop("worker");\n`;
  const workerUrl = URL.createObjectURL(new Blob([source], { type: "text/javascript" }));
  const references = data.main_seeds;
  const finals = references.map((r) => r.heldout_expected_reward[r.heldout_expected_reward.length - 1]);

  const learning = new LineChart("Training reward and zero-variance groups, per step", steps,
    [{ key: "reward", label: "training reward", cls: "rw-s1" }, { key: "flat", label: "zero-variance groups", cls: "rw-s2" }]);
  const heldout = new LineChart("Held-out expected reward at each checkpoint", steps,
    [...references.map((r, i) => ({ key: `seed${r.seed}`, cls: "rw-ref",
      label: i ? "" : `main, seeds ${references[0].seed} to ${references[references.length - 1].seed}` })),
    { key: "mine", label: "this run", cls: "rw-s1", dots: true }]);
  for (const r of references) heldout.draw(`seed${r.seed}`, r.steps.map((s, i) => [s, r.heldout_expected_reward[i]]));
  const toggle = el("button", { type: "button", class: "rw-button", onclick: () => toggleRun() });
  const reset = el("button", { type: "button", class: "rw-button", onclick: () => start(false), text: "Reset" });
  const status = el("p", { class: "rw-status", "aria-live": "polite" });
  const verdict = el("p", { class: "rw-summary" });
  root.append(el("div", { class: "rw-panel" },
    el("p", { class: "rw-key", text: `From base (seed 0): ${data.splits.train.length} training sums × ${recipe.group_size} ` +
      `answers a step, at most ${recipe.budget} characters, PPO clip ${recipe.eps_low}, token-mean loss, AdamW ` +
      `at ${recipe.lr} after a ${recipe.warmup}-step warm-up; held-out expected reward from ${recipe.eval_n} ` +
      `answers to each of the ${data.splits.heldout.length} held-out sums every ${recipe.checkpoint_every} steps.` }),
    el("div", { class: "rw-controls" }, toggle, reset), status,
    el("div", { class: "rw-charts" }, learning.node, heldout.node), verdict));

  let worker = null, run = null;

  function start(go) {
    if (worker) worker.terminate();
    run = { seed: crypto.getRandomValues(new Uint32Array(1))[0] >>> 1, steps: [], evals: [], state: "ready", ms: 0 };
    root.workshopRun = run;  // what the run has measured, for the browser tests and the benchmark to read
    learning.draw("reward", []);
    learning.draw("flat", []);
    heldout.draw("mine", []);
    verdict.textContent = "";
    worker = new Worker(workerUrl);
    worker.onmessage = (event) => receive(event.data);
    worker.onerror = (event) => fail(event.message);
    if (go) begin();
    show();
  }

  function begin() {
    const { checkpoints, ...plain } = data;  // the worker needs the weights, not their encoded text
    worker.postMessage({ type: "start", data: plain, flat: Float32Array.from(baseFlat), seed: run.seed });
    run.state = "running";
  }

  function toggleRun() {
    if (run.state === "ready") begin();
    else if (run.state === "running") { worker.postMessage({ type: "pause" }); run.state = "paused"; }
    else if (run.state === "paused") { worker.postMessage({ type: "resume" }); run.state = "running"; }
    show();
  }

  function receive(message) {
    if (message.type === "step") {
      run.steps.push(message);
      run.ms = message.sampleMs + message.updateMs;
      learning.draw("reward", run.steps.map((m) => [m.step, m.rewardMean]));
      learning.draw("flat", run.steps.map((m) => [m.step, m.zeroVarianceFrac]));
    } else if (message.type === "eval") {
      run.evals.push(message);
      heldout.draw("mine", run.evals.map((e) => [e.step, e.heldoutExpectedReward]));
    } else if (message.type === "done") {
      run.state = "done";
      const last = run.evals[run.evals.length - 1].heldoutExpectedReward;
      // One sentence for every outcome: the numbers say where this run ended among the book's seeds.
      verdict.textContent = `After ${steps} steps this run's held-out expected reward is ${fixed(last)}; ` +
        `the book's main run ended between ${fixed(Math.min(...finals))} and ${fixed(Math.max(...finals))} ` +
        `(seeds ${references.map((r, i) => `${r.seed}: ${fixed(finals[i])}`).join(", ")}). ` +
        `Each run samples its own answers, so each lands somewhere else.`;
      root.dataset.finalHeldout = String(last);
    } else if (message.type === "error") {
      fail(message.message);
    }
    show();
  }

  function fail(text) {
    run.state = "failed";
    status.textContent = `Training stopped: ${text}`;
    throw new Error(text);
  }

  function show() {
    toggle.textContent = { ready: "Train", running: "Pause", paused: "Resume", done: "Done", failed: "Stopped" }[run.state];
    toggle.disabled = run.state === "done" || run.state === "failed";
    const last = run.steps[run.steps.length - 1];
    status.textContent = `Step ${run.steps.length} of ${steps} · random seed ${run.seed}` +
      (last ? ` · training reward ${fixed(last.rewardMean)} · ${fixed(run.ms, 0)} ms a step` : "") +
      (run.state === "paused" ? " · paused" : "");
    root.dataset.state = run.state;
    root.dataset.steps = String(run.steps.length);
  }

  start(false);
}
