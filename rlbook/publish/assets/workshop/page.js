// The page's entry: read the exported checkpoints, check them against their
// weights hashes, and mount the panels wherever chapter 1's page asks for
// them (elements with class rlbook-workshop and data-panel="sample" or "train").

import { Policy } from "./policy.js";
import { mountSamplePanel } from "./sample-panel.js";
import { mountTrainPanel } from "./train-panel.js";
import { decodeCheckpoint, weightsHash } from "./weights.js";

export function main(bundle) {
  const start = () => mount(bundle).catch((error) => {
    for (const root of document.querySelectorAll(".rlbook-workshop")) {
      root.textContent = `The live workshop could not start: ${error.message}`;
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
  if (!roots.length) return;
  const data = globalThis.RLBOOK_WORKSHOP_DATA;
  if (!data) throw new Error("its data script (workshop-data.js) did not load");
  const policies = {};
  for (const entry of data.checkpoints) {
    await pause();
    const flat = await decodeCheckpoint(entry, policies.base?.flat);
    await pause();
    const hash = await weightsHash(flat, data.tensors);
    if (hash !== entry.weights_hash) throw new Error(`${entry.name}'s weights hash is ${hash}, not ${entry.weights_hash}`);
    policies[entry.name] = { policy: new Policy(data, flat), entry, hash, flat };
  }
  for (const root of roots) {
    await pause();
    root.replaceChildren();
    if (root.dataset.panel === "sample") mountSamplePanel(root, data, policies);
    else if (root.dataset.panel === "train") mountTrainPanel(root, data, policies.base.flat, bundle);
    root.dataset.ready = "true";
  }
}
