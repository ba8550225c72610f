// The controls of a training panel: one step, train and pause, the speed, and
// a new run; and the status line under them. The lab and the reward-hack panel
// both use them, on a Run (run.js).

import { el, fixed } from "./dom.js";
import { SPEEDS } from "./run.js";

const SPEED_NAMES = new Map([[1, "1 step a second"], [5, "5 a second"], [20, "20 a second"],
  [Infinity, "as fast as it goes"]]);
let panels = 0;  // each panel's radio buttons get a group name of their own

/**
 * The controls; `act` holds step(), toggle(), speed(stepsPerSecond) and
 * reset(). Returns {node, show(run)}: show draws a run's state.
 */
export function runControls(act, speed) {
  const name = `rw-speed-${++panels}`;
  const step = el("button", { type: "button", class: "rw-button", text: "Step", onclick: act.step,
    title: "take one step, then wait" });
  const toggle = el("button", { type: "button", class: "rw-button rw-primary", onclick: act.toggle });
  const reset = el("button", { type: "button", class: "rw-button", text: "New run", onclick: act.reset,
    title: "start again from base, with a new random seed" });
  const speeds = el("fieldset", { class: "rw-speeds" }, el("legend", { text: "Speed" }),
    SPEEDS.map((s) => el("label", { class: "rw-choice" },
      el("input", { type: "radio", name, value: String(s), checked: s === speed, onchange: () => act.speed(s) }),
      ` ${SPEED_NAMES.get(s)}`)));
  const status = el("p", { class: "rw-status", "aria-live": "polite" });
  const node = el("div", {},
    el("div", { class: "rw-controls rw-run-controls" }, el("div", {}, step, toggle, reset), speeds), status);

  function show(run) {
    const last = run.steps[run.steps.length - 1];
    toggle.textContent = { ready: "Train", running: "Pause", paused: "Train", done: "Done", failed: "Stopped" }[run.state];
    toggle.disabled = run.state === "done" || run.state === "failed";
    step.disabled = run.state === "running" || run.state === "done" || run.state === "failed";
    const ms = last ? last.sampleMs + last.watchMs + last.updateMs : 0;
    status.textContent = `Step ${run.steps.length} of ${run.recipe.steps} · random seed ${run.seed}` +
      (last ? ` · training reward ${fixed(last.rewardMean)} · ${fixed(ms, 0)} ms a step` : "") +
      (run.state === "paused" ? " · paused" : "") + (run.state === "failed" ? ` · stopped: ${run.error}` : "");
  }
  return { node, show };
}

/** How far the loophole got in a run against the fail-open verifier. */
export function loopholeText(run) {
  const shares = run.steps.map((s) => s.loopholeShare), top = Math.max(...shares);
  const over = run.steps.find((s) => s.loopholeShare > 0.5);
  if (over) return `The loophole first paid for more than half of a batch at step ${over.step}.`;
  const percent = 100 * top >= 1 ? fixed(100 * top, 0) : (100 * top).toPrecision(1);  // never "at most 0 %"
  return top > 0 ? `The loophole paid for at most ${percent} % of a batch.`
    : "The loophole paid for no answer in any batch.";
}

/**
 * Start the current run's worker (current() gives the run) once `root` comes into view, so that it has
 * compiled the model by the time the reader asks for a step. Returns a function that says whether the
 * panel is in view, for a new run to start its worker at once.
 */
export function prepareInView(root, current) {
  let seen = false;
  new IntersectionObserver((entries) => {
    seen = entries.some((e) => e.isIntersecting);
    if (seen) current()?.prepare();
  }).observe(root);
  return () => seen;
}

/** A random seed for a new run. */
export function newSeed() {
  return crypto.getRandomValues(new Uint32Array(1))[0] >>> 1;
}
