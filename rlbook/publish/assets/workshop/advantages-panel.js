// Chapter 3's "try it", live: the rewards of a group of four answers, which
// the reader edits, and the advantages three baselines give them, computed by
// advantages.js, the code that credits the lab's training batches. It needs
// no checkpoint: nothing is sampled.

import { advantages } from "./advantages.js";
import { el, fixed } from "./dom.js";

const SIZE = 4;
const PRESETS = [[0, 0, 0, 1], [1, 1, 0, 0], [1, 1, 1, 1]];  // the guide's exercise, in its order
const ROWS = [
  ["centered", "group-centred", "r − mean"],
  ["group_std", "group-normalised", "(r − mean) / (sd + 10⁻⁶)"],
  ["rloo", "leave-one-out", "r − mean of the other 3"],
];

/** A signed number with three decimals, no minus sign on a zero, and three significant digits for a value
 *  too small to show at three decimals (never "0.000" for an advantage that is not 0). */
export function signed(value) {
  if (value === 0) return fixed(0, 3);
  const text = Math.abs(value) < 0.0005 ? value.toPrecision(3) : fixed(value, 3);
  return value > 0 ? `+${text}` : text.replace("-", "−");
}

/** What the panel shows for `rewards`: the three rows of advantages (or none) and the sentence below them. */
export function explain(rewards) {
  if (rewards.length !== SIZE || rewards.some((r) => !Number.isFinite(r))) {
    return { rows: null, readout: "Type a number into each of the four boxes." };
  }
  const rows = ROWS.map(([method, name, rule]) => [name, rule, Array.from(advantages(rewards, SIZE, method))]);
  const mean = rewards.reduce((a, b) => a + b, 0) / SIZE;
  const std = Math.sqrt(rewards.reduce((a, r) => a + (r - mean) ** 2, 0) / SIZE);
  if (!Number.isFinite(mean) || !Number.isFinite(std) || rows.some(([, , values]) => values.some((v) => !Number.isFinite(v)))) {
    return { rows: null, readout: "These rewards are too large to compute with: their sum or their spread " +
      "overflows a double-precision number (about 1.8 × 10³⁰⁸). Try rewards under 10¹⁵⁰." };
  }
  return { rows, readout: `Mean reward ${fixed(mean, 3)}, standard deviation (sd) ${fixed(std, 3)}. ` + (std === 0
    ? "Every answer earned the same reward, so every advantage is 0: this group moves nothing, however high its reward."
    : `Each row sums to 0; leave-one-out is ${SIZE}/${SIZE - 1} times group-centred, and group-normalised divides ` +
      `group-centred by ${fixed(std, 3)} (plus 10⁻⁶).`) };
}

/** Mount the panel into `root`. */
export function mountAdvantagesPanel(root) {
  const inputs = [...Array(SIZE).keys()].map((i) => el("input", { type: "number", step: "any", value: String(PRESETS[0][i]),
    class: "rw-reward", "aria-label": `reward of answer ${i + 1}`, oninput: () => render() }));
  const table = el("table", { class: "rw-advantages" });
  const readout = el("p", { class: "rw-readout", "aria-live": "polite" });
  const presets = PRESETS.map((rewards) => el("button", { type: "button", class: "rw-button",
    text: `[${rewards.join(", ")}]`, onclick: () => {
      rewards.forEach((r, i) => { inputs[i].value = String(r); });
      render();
    } }));
  root.append(el("div", { class: "rw-panel" },
    el("p", { class: "rw-label", text: "Rewards of four answers to one prompt" }),
    el("div", { class: "rw-rewards" }, inputs.map((input, i) => el("label", {}, `answer ${i + 1} `, input))),
    el("p", { class: "rw-key" }, "Try ", presets, " or type any rewards."),
    el("div", { class: "rw-scroll" }, table), readout));

  function render() {
    const blank = inputs.some((input) => input.value.trim() === "");
    const rewards = inputs.map((input) => (blank ? NaN : Number(input.value)));
    const { rows, readout: sentence } = explain(rewards);
    readout.textContent = sentence;
    if (rows === null) {
      table.replaceChildren();
      return;
    }
    table.replaceChildren(
      el("thead", {}, el("tr", {}, el("th", { scope: "col", text: "advantage" }),
        rewards.map((r, i) => el("th", { scope: "col" }, el("span", { class: "rw-wide", text: "answer " }), `${i + 1}`,
          el("br"), el("small", { text: `r = ${r}` }))))),
      el("tbody", {}, rows.map(([name, rule, values]) => el("tr", { "data-method": name },
        el("th", { scope: "row" }, name, el("br"), el("small", { text: rule })),
        values.map((v) => el("td", { text: signed(v) }))))));
  }

  render();
}
