// The trainer's Web Worker. The page asks for one step at a time and asks for
// the next only when it wants it (run.js paces the run), so that a pause never
// waits for steps queued ahead of it and the page never waits on training.
//
// Messages in: {type: "start", data, flat, seed, recipe, watch}, {type: "step"},
// {type: "watch", prompt}. Out: every step's measurements with the weights it
// left (a Float32Array, transferred), every checkpoint's evaluation, and the
// watched sum's answers when the reader picks another sum.

import { Trainer } from "./train.js";

/**
 * A few steps of a tiny run (2 prompts, groups of 2), thrown away: the engine compiles the model's loops on
 * them, so that the reader's first step runs compiled code instead of the interpreter's. Measured under Node
 * on this book's machines, the tiny steps and a compiled first step take about three quarters of the time of
 * a cold first step alone.
 */
function warmUp(data, flat, recipe) {
  const tiny = { ...data, splits: { ...data.splits, train: data.splits.train.slice(0, 2) } };
  const trainer = new Trainer(tiny, flat, 1, { ...recipe, group_size: 2 });
  for (let i = 0; i < 6; i++) trainer.next();
}

export function main() {
  let trainer = null, watch = null, initial = null;

  self.onmessage = (event) => {
    const message = event.data;
    try {
      if (message.type === "start") {
        warmUp(message.data, message.flat, message.recipe);
        trainer = new Trainer(message.data, message.flat, message.seed, message.recipe);
        initial = message.flat;
        watch = message.watch;
      } else if (message.type === "step" && !trainer.done) {
        const record = trainer.next(watch);
        const weights = Float32Array.from(trainer.policy.flat);
        postMessage({ type: "step", ...record, weights }, [weights.buffer]);
        // The starting weights are evaluated after the first step rather than before it, so that the first
        // step comes as soon as it can; the evaluation reads the starting weights, kept for it.
        if (record.step === 1) postMessage({ type: "eval", ...trainer.evaluate(initial, 0) });
        if (trainer.isCheckpoint(record.step)) postMessage({ type: "eval", ...trainer.evaluate() });
      } else if (message.type === "watch") {
        watch = message.prompt;
        postMessage({ type: "watched", step: trainer.step, ...trainer.look(watch) });
      }
    } catch (error) {
      postMessage({ type: "error", message: String(error && error.stack || error) });
    }
  };
}
