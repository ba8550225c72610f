// The lab: an RL run from base in a Web Worker, step by step at the pace the
// reader picks, with a recipe the reader may change within the book's choices
// (recipe.js), curves of each batch and of the held-out expected reward beside
// the book's own runs, and one watched sum's answers and probabilities as the
// policy learns (watch-view.js). The run it trains is offered for sampling in
// the sample panel, through the page's `lab` channel.

import { answerProbabilities } from "./answers.js";
import { LineChart } from "./charts.js";
import { loopholeText, newSeed, prepareInView, runControls } from "./controls.js";
import { el, explainedIn, fixed, listing } from "./dom.js";
import { choicesOf, describe, recipeOf, settings } from "./recipe.js";
import { makeRng } from "./rng.js";
import { Run } from "./run.js";
import { watching } from "./train.js";
import { watchView } from "./watch-view.js";

/** The recipe's settings as radio buttons, each with what it is and where the book explains it. */
function recipeForm(data, choices, change) {
  const node = el("div", { class: "rw-recipe" });
  for (const setting of settings(data)) {
    node.append(el("fieldset", { class: "rw-setting" }, el("legend", { text: setting.label }),
      setting.options.map((o) => el("label", { class: "rw-choice" },
        el("input", { type: "radio", name: `rw-${setting.key}`, value: o.value, checked: choices[setting.key] === o.value,
          onchange: () => change(setting.key, o.value) }), ` ${o.text}`)),
      el("p", { class: "rw-key" }, `${setting.about[0].toUpperCase()}${setting.about.slice(1)}.`,
        explainedIn(data, setting.sections))));
  }
  return node;
}

/** The training sum whose right answer `base` is least sure of: the first sum the lab watches. */
function unsureSum(data, policy) {
  const sure = data.splits.train.map((prompt) => {
    const [a, b] = prompt.match(/[0-9]/g).map(Number);
    return [Math.abs(answerProbabilities(policy, prompt, [`${a + b}${data.eot}`], 1)[0] - 0.5), prompt];
  });
  return sure.sort((x, y) => x[0] - y[0])[0][1];
}

/**
 * The sentence under a finished run: where it ended, and where the book's seeds of the same recipe ended, if it
 * has them, with this run placed against them. Values are compared as they are printed.
 */
export function summaryText(run, references, name) {
  const evals = run.evals, last = evals[evals.length - 1].heldoutExpectedReward, first = evals[0].heldoutExpectedReward;
  let text = `After ${run.steps.length} steps this run's held-out expected reward is ${fixed(last)}, from ` +
    `${fixed(first)} at step 0.`;
  if (references) {
    const finals = references.map((r) => fixed(r.heldout_expected_reward[r.heldout_expected_reward.length - 1]));
    const seeds = listing(references.map((r) => r.seed)), mine = fixed(last);
    const low = Math.min(...finals.map(Number)), high = Math.max(...finals.map(Number));
    if (low === high) {
      text += ` The book's ${name} run ended at ${finals[0]} on ${finals.length > 1 ? `each of seeds ${seeds}` :
        `seed ${seeds}`}; this run ended ${Number(mine) === low ? "level with it" :
        Number(mine) > low ? "above it" : "below it"}.`;
    } else {
      const where = Number(mine) > high ? "above all of them" : Number(mine) < low ? "below all of them" :
        "within their range";
      text += ` The book's ${name} run ended at ${listing(finals)} on seeds ${seeds}; this run ended ${where}. ` +
        "Each run samples its own answers, so each lands somewhere else.";
    }
  }
  if (run.recipe.verifier === "fail-open") text += ` ${loopholeText(run)}`;
  return text;
}

/**
 * Mount the lab into `root`; `base` is base's weights, `basePolicy` a policy that reads them, `lab` the
 * page's channel to the sample panel.
 */
export function mountLabPanel(root, data, base, workerUrl, lab, basePolicy) {
  const state = { choices: choicesOf(data, "main"), seed: newSeed(), speed: 5, watch: unsureSum(data, basePolicy) };
  let run = null, charts = null;
  const lookRng = makeRng(state.seed);  // base's answers to the watched sum before a run's first step
  const form = recipeForm(data, state.choices, (key, value) => { state.choices[key] = value; start(); });
  const seedInput = el("input", { type: "number", min: "0", step: "1", value: String(state.seed), class: "rw-seed",
    "aria-label": "random seed", onchange: () => {
      state.seed = Math.max(0, Math.floor(Number(seedInput.value) || 0));
      start();
    } });
  const about = el("p", { class: "rw-key rw-about" });
  const controls = runControls({
    step: () => run.stepOnce(),
    toggle: () => (run.state === "running" ? run.pause() : run.play()),
    speed: (s) => { state.speed = s; run.setSpeed(s); },
    reset: () => { state.seed = newSeed(); seedInput.value = String(state.seed); start(); },
  }, state.speed);
  const chartBox = el("div", { class: "rw-charts" });
  const view = watchView(data, (prompt) => {
    state.watch = prompt;
    run.watch(prompt);
    if (!run.worker) lookAtBase();
  });
  const summary = el("p", { class: "rw-summary", "aria-live": "polite" });
  root.append(el("div", { class: "rw-panel" },
    // On a phone the recipe starts folded, so that the controls and curves are in view.
    el("details", { class: "rw-recipe-box", open: matchMedia("(min-width: 700px)").matches },
      el("summary", { text: "Recipe" }), form,
      el("p", { class: "rw-label" }, "Random seed ", seedInput), about),
    controls.node, chartBox, view.node, summary));

  function lookAtBase() {
    view.show(watching(basePolicy, data, run.recipe, state.watch, lookRng).record, 0);
  }

  function start() {
    if (run) run.stop();
    const { recipe, run: name } = recipeOf(data, state.choices);
    const refName = name && data.references[name] ? name : "main", references = data.references[refName];
    about.textContent = describe(data, recipe, name);
    const series = [{ key: "reward", label: `training reward (${recipe.verifier} verifier)`, cls: "rw-s1" },
      { key: "flat", label: "zero-variance groups", cls: "rw-s2" }];
    if (recipe.verifier === "fail-open") {
      series.push({ key: "loophole", label: "paid only through the loophole", cls: "rw-s3" });
    }
    charts = {
      batch: new LineChart("Each step's batch", recipe.steps, series),
      heldout: new LineChart("Held-out expected reward (exact verifier) at each checkpoint", recipe.steps,
        [...references.map((r, i) => ({ key: `seed${r.seed}`, cls: "rw-ref",
          label: i ? "" : `${refName}, seeds ${references[0].seed} to ${references[references.length - 1].seed}` })),
        { key: "mine", label: "this run", cls: "rw-s1", dots: true }]),
    };
    for (const r of references) {
      charts.heldout.draw(`seed${r.seed}`, r.steps.map((s, i) => [s, r.heldout_expected_reward[i]]));
    }
    chartBox.replaceChildren(charts.batch.node, charts.heldout.node);
    summary.textContent = "";
    run = new Run({ workerUrl, data, base, recipe, seed: state.seed, watch: state.watch, speed: state.speed, on: {
      step: (record) => {
        const started = performance.now();
        const points = (key) => run.steps.map((s) => [s.step, s[key]]);
        charts.batch.draw("reward", points("rewardMean"));
        charts.batch.draw("flat", points("zeroVarianceFrac"));
        if (recipe.verifier === "fail-open") charts.batch.draw("loophole", points("loopholeShare"));
        if (record.watch) view.show(record.watch, record.step);
        show();
        lab.dispatchEvent(new Event("step"));
        record.drawMs = performance.now() - started;  // the page's own work for a step (the benchmark reports it)
      },
      eval: () => {
        charts.heldout.draw("mine", run.evals.map((e) => [e.step, e.heldoutExpectedReward]));
        if (run.state === "done" && run.evals[run.evals.length - 1].step === recipe.steps) {
          summary.textContent = summaryText(run, name === refName ? references : null, refName);
        }
      },
      watched: (record) => view.show(record, record.step),
      state: () => show(),
      error: () => show(),
    } });
    lab.run = run;
    root.workshopRun = run;  // what the run has measured, for the browser tests and the benchmark to read
    lab.dispatchEvent(new Event("run"));
    if (inView()) run.prepare();
    lookAtBase();
    show();
  }

  function show() {
    controls.show(run);
    root.dataset.state = run.state;
    root.dataset.steps = String(run.steps.length);
  }

  const inView = prepareInView(root, () => run);
  start();
}
