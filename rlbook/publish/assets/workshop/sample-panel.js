// The workshop panel: pick a sum, a temperature and a checkpoint, and see 32
// answers of the book's real policy, each judged by the exact verifier, with
// the expected reward they estimate and its interval. Sampling runs on the
// page itself: 32 answers take a few milliseconds.

import { el, fixed, shown, VERDICTS } from "./dom.js";
import { makeRng } from "./rng.js";
import { wilsonInterval } from "./stats.js";
import { verify } from "./verifier.js";

const SAMPLES = 32;  // rlbook.workshop.N_SAMPLES, the course plate's 32
const BARS = 12;  // distinct answers drawn as bars; the chips show every answer

/** Mount the panel into `root`; `policies` maps a checkpoint name to {policy, entry, hash}. */
export function mountSamplePanel(root, data, policies) {
  const heldout = new Set(data.splits.heldout), train = new Set(data.splits.train), sft = new Set(data.splits.sft);
  const state = { a: 5, b: 6, temperature: 1, checkpoint: "base" };
  const rng = makeRng(crypto.getRandomValues(new Uint32Array(1))[0]);
  const budget = data.recipe.budget;

  const cells = [];
  const grid = el("div", { class: "rw-grid-sums", role: "group", "aria-label": "sum a + b" },
    el("span"), [...Array(10).keys()].map((b) => el("span", { class: "rw-axis", text: `+${b}` })),
    [...Array(10).keys()].map((a) => [el("span", { class: "rw-axis", text: String(a) }),
      [...Array(10).keys()].map((b) => {
        const prompt = `U:${a}+${b}?|A:`;
        const kind = heldout.has(prompt) ? "held out" : sft.has(prompt) ? "SFT and RL training" : "RL training";
        const cell = el("button", { type: "button", class: `rw-sum ${heldout.has(prompt) ? "rw-heldout" : sft.has(prompt)
          ? "rw-sft" : train.has(prompt) ? "rw-train" : ""}`, "aria-label": `${a} + ${b}, ${kind}`, title: `${a}+${b}: ${kind}`,
          onclick: () => { Object.assign(state, { a, b }); render(); } });
        cells.push([a, b, cell]);
        return cell;
      })]));
  const temperature = el("input", { type: "range", min: "0.1", max: "2", step: "0.1", value: "1",
    "aria-label": "temperature", oninput: () => { state.temperature = Number(temperature.value); render(); } });
  const tLabel = el("output");
  const radios = Object.keys(policies).map((name) => el("label", {},
    el("input", { type: "radio", name: "rw-checkpoint", value: name, checked: name === state.checkpoint,
      onchange: () => { state.checkpoint = name; render(); } }),
    ` ${name} ${name === "base" ? "(after SFT)" : "(after RL)"}`));
  const identity = el("p", { class: "rw-identity" });
  const chips = el("div", { class: "rw-chips", "aria-label": `${SAMPLES} sampled answers` });
  const bars = el("div", { class: "rw-bars" });
  const readout = el("p", { class: "rw-readout", "aria-live": "polite" });
  const again = el("button", { type: "button", class: "rw-button", onclick: () => render(), text: `Sample ${SAMPLES} again` });
  root.append(el("div", { class: "rw-panel" },
    el("div", { class: "rw-controls" },
      el("div", {}, el("p", { class: "rw-label", text: "Sum a + b (rows a, columns b)" }), grid,
        el("p", { class: "rw-key", text: "Marked with a ring: held out, never trained on. Shaded: RL training sums; darker: also SFT examples." })),
      el("div", {},
        el("p", { class: "rw-label" }, "Temperature ", tLabel), temperature,
        el("p", { class: "rw-label", text: "Checkpoint (seed 0)" }), radios, identity, again)),
    el("p", { class: "rw-prompt" }), chips, bars, readout,
    el("p", { class: "rw-key" }, Object.entries(VERDICTS).slice(0, 4).map(([status, label]) =>
      el("span", { class: `rw-swatch rw-${status}`, text: label })))));

  function render() {
    const { a, b, temperature: T, checkpoint } = state, prompt = `U:${a}+${b}?|A:`;
    const { policy, entry, hash } = policies[checkpoint];
    for (const [ca, cb, cell] of cells) cell.setAttribute("aria-pressed", String(ca === a && cb === b));
    tLabel.textContent = fixed(T, 1);
    identity.textContent = `${entry.version} · weights hash ${hash}`;
    const started = performance.now();
    const rollouts = policy.sample([prompt], SAMPLES, T, budget, rng);
    const verdicts = rollouts.completions.map((c) => verify(prompt, c));
    const ms = performance.now() - started;
    const right = verdicts.filter((v) => v.reward === 1).length;
    const [lo, hi] = wilsonInterval(right, SAMPLES);
    const canonical = `${a + b}${data.eot}`;
    const exact = policy.answerProbability(prompt, canonical, T);
    root.querySelector(".rw-prompt").textContent =
      `${prompt}  (${a} + ${b} = ${a + b}${heldout.has(prompt) ? ", held out" : ""}), T = ${fixed(T, 1)}, ${checkpoint}`;
    chips.replaceChildren(...rollouts.completions.map((c, i) =>
      el("span", { class: `rw-chip rw-${verdicts[i].status}`, title: VERDICTS[verdicts[i].status], text: shown(c) })));
    const counts = new Map();
    rollouts.completions.forEach((c, i) => counts.set(c, [(counts.get(c)?.[0] ?? 0) + 1, verdicts[i].status]));
    const ranked = [...counts].sort((x, y) => y[1][0] - x[1][0] || (x[0] < y[0] ? -1 : 1));
    const rest = ranked.slice(BARS).reduce((n, [, [count]]) => n + count, 0);
    bars.replaceChildren(el("div", {}, ranked.slice(0, BARS).map(([text, [count, status]]) => el("div", { class: "rw-bar-row" },
      el("code", { text: shown(text) }),
      el("span", { class: `rw-bar rw-${status}`, style: `width: ${(100 * count) / SAMPLES}%` }),
      el("span", { text: `${count} × ${VERDICTS[status]}` }))),
    rest ? el("p", { class: "rw-key", text: `and ${ranked.length - BARS} more answers, ${rest} samples in all` }) : null));
    readout.textContent = `Expected reward ${fixed(right / SAMPLES)}: ${right} of ${SAMPLES} answers right ` +
      `(95 % Wilson interval ${fixed(lo)} to ${fixed(hi)}). Exact probability of the right answer ` +
      `${canonical} at this temperature: ${exact >= 1e-3 ? fixed(exact, 3) : exact.toExponential(1)}. ` +
      `Sampled in ${fixed(ms, 1)} ms.`;
    root.dataset.sampleMs = String(ms);
  }
  // The first answers are drawn in a task of their own, after warm-up draws in tasks of their own: the first
  // calls run before the JavaScript engine has compiled the model's loops, and together they would hold the
  // page up for longer than the 50 ms a task may take.
  const warmUps = [1, 4, 16];
  const next = () => {
    if (!warmUps.length) return render();
    policies[state.checkpoint].policy.sample(["U:0+0?|A:"], warmUps.shift(), 1, budget, rng);
    setTimeout(next, 0);
  };
  setTimeout(next, 0);
}
