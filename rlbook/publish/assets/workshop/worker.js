// The train panel's Web Worker: main's recipe from base, one step per task,
// so that a pause message is read between any two steps and the page never
// waits on training. It reports every step and every checkpoint evaluation.

import { Trainer } from "./train.js";

export function main() {
  let trainer = null, paused = false, timer = null;
  const schedule = () => { if (timer === null && !paused && !trainer.done) timer = setTimeout(run, 0); };

  function run() {
    timer = null;
    if (paused || trainer.done) return;
    const step = trainer.next();
    postMessage({ type: "step", ...step });
    if (trainer.isCheckpoint(trainer.step)) postMessage({ type: "eval", ...trainer.evaluate() });
    if (trainer.done) postMessage({ type: "done" });
    schedule();
  }

  self.onmessage = (event) => {
    const message = event.data;
    try {
      if (message.type === "start") {
        trainer = new Trainer(message.data, message.flat, message.seed);
        postMessage({ type: "eval", ...trainer.evaluate() });
        schedule();
      } else if (message.type === "pause") {
        paused = true;
      } else if (message.type === "resume") {
        paused = false;
        schedule();
      }
    } catch (error) {
      postMessage({ type: "error", message: String(error && error.stack || error) });
    }
  };
}
