// The page's entry: mount the panels wherever a page asks for them (elements
// with class rlbook-workshop and data-panel = "sample", "lab", "hack" or
// "advantages"). The panels that run the policy first read the exported
// checkpoints and check them against their weights hashes; the advantages
// panel needs none.

import { mountAdvantagesPanel } from "./advantages-panel.js";
import { mountHackPanel } from "./hack-panel.js";
import { mountLabPanel } from "./lab-panel.js";
import { Policy } from "./policy.js";
import { mountSamplePanel } from "./sample-panel.js";
import { decodeCheckpoint, weightsHash } from "./weights.js";

const NEEDS_POLICY = new Set(["sample", "lab", "hack"]);

export function main(bundle) {
  const start = () => mount(bundle).catch((error) => {
    for (const root of document.querySelectorAll(".rlbook-workshop")) {
      if (root.dataset.ready !== "true") root.textContent = `The live panel could not start: ${error.message}`;
    }
    throw error;
  });
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
}

/** A new task: the work before and after it are separate main-thread tasks, each short. */
const pause = () => new Promise((resolve) => setTimeout(resolve, 0));

async function mount(bundle) {
  const roots = [...document.querySelectorAll(".rlbook-workshop[data-panel]")];
  for (const root of roots.filter((r) => r.dataset.panel === "advantages")) {
    root.replaceChildren();
    mountAdvantagesPanel(root);
    root.dataset.ready = "true";
  }
  const running = roots.filter((r) => NEEDS_POLICY.has(r.dataset.panel));
  if (!running.length) return;
  const data = globalThis.RLBOOK_WORKSHOP_DATA;
  if (!data) throw new Error("its data script (workshop-data.js) did not load");
  const policies = {}, main = globalThis.RLBOOK_WORKSHOP_MAIN;  // main's checkpoint: only where a page samples it
  for (const entry of main ? [...data.checkpoints, main] : data.checkpoints) {
    await pause();
    const flat = await decodeCheckpoint(entry, policies.base?.flat);
    await pause();
    const hash = await weightsHash(flat, data.tensors);
    if (hash !== entry.weights_hash) throw new Error(`${entry.name}'s weights hash is ${hash}, not ${entry.weights_hash}`);
    policies[entry.name] = { policy: new Policy(data, flat), entry, hash, flat };
  }
  // The worker runs this very script; a page opened from file:// may not load a worker from a file.
  const source = `"use strict";\n${bundle.toString()}\nrlbookWorkshop("worker");\n`;
  const workerUrl = URL.createObjectURL(new Blob([source], { type: "text/javascript" }));
  const lab = new EventTarget();  // the lab's run, for the sample panel to offer: lab.run, events "run" and "step"
  lab.run = null;
  for (const root of running) {
    await pause();
    root.replaceChildren();
    const base = policies.base;
    if (root.dataset.panel === "sample") mountSamplePanel(root, data, policies, lab);
    else if (root.dataset.panel === "lab") mountLabPanel(root, data, base.flat, workerUrl, lab, base.policy);
    else mountHackPanel(root, data, base.flat, workerUrl, base.policy);
    root.dataset.ready = "true";
  }
}
