// The grid of the hundred sums a + b that the panels let a reader pick from,
// each marked by its split: held out (never trained on), RL training, or RL
// training and an SFT example too.

import { el } from "./dom.js";

/** What the book's splits make of a prompt: "held out", "SFT and RL training" or "RL training". */
export function sumKind(data, prompt) {
  if (data.splits.heldout.includes(prompt)) return "held out";
  return data.splits.sft.includes(prompt) ? "SFT and RL training" : "RL training";
}

/** The prompt of a + b. */
export function promptOf(a, b) {
  return `U:${a}+${b}?|A:`;
}

/** A small cell drawn as the grid draws a sum of kind `style` (rw-heldout, rw-train, rw-sft), for the key. */
function swatch(style) {
  return el("span", { class: `rw-sum-swatch ${style}`, "aria-hidden": "true" });
}

/**
 * A grid of sum buttons labelled `label`; `pick(a, b)` is called on a click.
 * Returns {node, select(a, b)}; select marks the chosen sum.
 */
export function sumGrid(data, label, pick) {
  const digits = [...Array(10).keys()], cells = [];
  const style = { "held out": "rw-heldout", "SFT and RL training": "rw-sft", "RL training": "rw-train" };
  const node = el("div", {},
    el("p", { class: "rw-label", text: label }),
    el("div", { class: "rw-grid-sums", role: "group", "aria-label": "sum a + b" },
      el("span"), digits.map((b) => el("span", { class: "rw-axis", text: `+${b}` })),
      digits.map((a) => [el("span", { class: "rw-axis", text: String(a) }), digits.map((b) => {
        const kind = sumKind(data, promptOf(a, b));
        const cell = el("button", { type: "button", class: `rw-sum ${style[kind]}`, "aria-label": `${a} + ${b}, ${kind}`,
          title: `${a}+${b}: ${kind}`, onclick: () => pick(a, b) });
        cells.push([a, b, cell]);
        return cell;
      })])),
    // The key shows a cell of each kind beside its words: the SFT cells' stronger tint is darker than the RL
    // cells' on a light page and brighter on a dark one, so no word for its lightness is true on both.
    el("p", { class: "rw-key" },
      swatch("rw-heldout"), " held out, never trained on; ", swatch("rw-train"), " RL training; ",
      swatch("rw-sft"), " RL training and an SFT example."));
  const select = (a, b) => {
    for (const [ca, cb, cell] of cells) cell.setAttribute("aria-pressed", String(ca === a && cb === b));
  };
  return { node, select };
}
