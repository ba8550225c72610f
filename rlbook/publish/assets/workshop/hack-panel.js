// The reward hack, live: the book's exploit run (base trained against the
// fail-open verifier at a larger learning rate and no warm-up) in a Web Worker,
// with the share of each batch paid only through the loophole and the held-out
// expected reward under the exact verifier, beside the book's own seeds of the
// same run, and one held-out sum's answers as the policy changes.

import { LineChart } from "./charts.js";
import { loopholeText, newSeed, prepareInView, runControls } from "./controls.js";
import { el, fixed } from "./dom.js";
import { describe } from "./recipe.js";
import { makeRng } from "./rng.js";
import { Run } from "./run.js";
import { watching } from "./train.js";
import { watchView } from "./watch-view.js";

const RUN = "exploit";

/** The sentence that says where this run stands, beside the book's seeds (any state of the run). */
function progressText(run, references) {
  if (!run.steps.length) return "";
  const last = run.steps[run.steps.length - 1], evals = run.evals;
  let text = `Step ${last.step}: the loophole paid for ${fixed(100 * last.loopholeShare, 0)} % of the batch. ` +
    `${loopholeText(run)}`;
  if (evals.length > 1) {
    const e = evals[evals.length - 1];
    text += ` Held-out expected reward under the exact verifier: ${fixed(e.heldoutExpectedReward)} at step ${e.step}, ` +
      `against ${fixed(evals[0].heldoutExpectedReward)} at step 0.`;
  }
  const takeovers = references.map((r) => r.takeover);
  text += ` The book's seeds: ${references.map((r, i) => `seed ${r.seed} ${takeovers[i] === null
    ? "never passed one half" : `passed one half at step ${takeovers[i]}`}`).join(", ")}.`;
  return text;
}

/** Mount the panel into `root`; `base` is base's weights, `basePolicy` a policy that reads them. */
export function mountHackPanel(root, data, base, workerUrl, basePolicy) {
  const recipe = data.recipes[RUN], references = data.references[RUN];
  const state = { seed: newSeed(), speed: 5, watch: data.splits.heldout[0] };
  let run = null, charts = null;
  const lookRng = makeRng(state.seed);  // base's answers to the watched sum before a run's first step
  const controls = runControls({
    step: () => run.stepOnce(),
    toggle: () => (run.state === "running" ? run.pause() : run.play()),
    speed: (s) => { state.speed = s; run.setSpeed(s); },
    reset: () => { state.seed = newSeed(); start(); },
  }, state.speed);
  const chartBox = el("div", { class: "rw-charts" });
  const view = watchView(data, (prompt) => {
    state.watch = prompt;
    run.watch(prompt);
    if (!run.worker) lookAtBase();
  });
  const progress = el("p", { class: "rw-summary", "aria-live": "polite" });
  root.append(el("div", { class: "rw-panel" },
    el("p", { class: "rw-key", text: describe(data, recipe, RUN) }),
    el("p", { class: "rw-look" }, "What to look for: the pink dashed line is the share of each batch that the fail-open " +
      "verifier pays and the exact verifier rejects. While it stays low the policy is still trying to add; once it " +
      "climbs, watch the blue dots, the held-out expected reward judged by the exact verifier, and the answers of " +
      `the watched sum below. The grey lines are the book's own ${references.length} seeds of this run.`),
    controls.node, chartBox, progress, view.node));

  function lookAtBase() {
    view.show(watching(basePolicy, data, recipe, state.watch, lookRng).record, 0);
  }

  function start() {
    if (run) run.stop();
    charts = {
      share: new LineChart("Each step's batch: paid only through the loophole, and the training reward", recipe.steps,
        [...references.map((r, i) => ({ key: `seed${r.seed}`, cls: "rw-ref", label: i ? "" : `${RUN}'s loophole share, ` +
          `seeds ${references[0].seed} to ${references[references.length - 1].seed}` })),
        { key: "reward", label: "training reward (fail-open verifier)", cls: "rw-s2" },
        { key: "mine", label: "this run's loophole share", cls: "rw-s3" }]),
      heldout: new LineChart("Held-out expected reward (exact verifier) at each checkpoint", recipe.steps,
        [...references.map((r, i) => ({ key: `seed${r.seed}`, cls: "rw-ref", label: i ? "" : `${RUN}, seeds ` +
          `${references[0].seed} to ${references[references.length - 1].seed}` })),
        { key: "mine", label: "this run", cls: "rw-s1", dots: true }]),
    };
    for (const r of references) {
      charts.share.draw(`seed${r.seed}`, r.loophole_share.map((v, i) => [r.loophole_steps[i], v]));
      charts.heldout.draw(`seed${r.seed}`, r.steps.map((s, i) => [s, r.heldout_expected_reward[i]]));
    }
    chartBox.replaceChildren(charts.share.node, charts.heldout.node);
    progress.textContent = "";
    run = new Run({ workerUrl, data, base, recipe, seed: state.seed, watch: state.watch, speed: state.speed, on: {
      step: (record) => {
        charts.share.draw("mine", run.steps.map((s) => [s.step, s.loopholeShare]));
        charts.share.draw("reward", run.steps.map((s) => [s.step, s.rewardMean]));
        if (record.watch) view.show(record.watch, record.step);
        show();
      },
      eval: () => {
        charts.heldout.draw("mine", run.evals.map((e) => [e.step, e.heldoutExpectedReward]));
        show();
      },
      watched: (record) => view.show(record, record.step),
      state: () => show(),
      error: () => show(),
    } });
    root.workshopRun = run;  // for the browser tests and the benchmark
    if (inView()) run.prepare();
    lookAtBase();
    show();
  }

  function show() {
    controls.show(run);
    progress.textContent = progressText(run, references);
    root.dataset.state = run.state;
    root.dataset.steps = String(run.steps.length);
  }

  const inView = prepareInView(root, () => run);
  start();
}
