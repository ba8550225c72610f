// A training run as the page drives it: the Web Worker that trains (worker.js),
// the pace at which the page asks it for steps, and everything the run has
// produced so far (each step's measurements and weights, each checkpoint's
// evaluation).
//
// The page asks for one step at a time, and for the next only once the last
// has come back and the pace allows it. So a pause takes effect within one
// step (only a step already under way still arrives), a speed change takes
// effect at the next step, and at every speed the page draws each step as it
// arrives. The worker is made when the panel comes into view (prepare()) or
// at the first step asked for, whichever comes first, so a reader who never
// scrolls to a panel costs nothing; the first step's time runs from the later
// of the worker's making and the reader's asking, so whatever part of the
// worker's start the reader waits for is counted in it.

/** Steps a second the reader can choose; Infinity is "as fast as it goes". */
export const SPEEDS = [1, 5, 20, Infinity];

export class Run {
  /**
   * A run of `recipe` from the weights `base` (a Float32Array) with random
   * stream `seed`, trained by a worker started from `workerUrl`. `on` holds
   * the callbacks step(record), eval(record), watched(record), state(name)
   * and error(text).
   */
  constructor({ workerUrl, data, base, recipe, seed, watch, speed = 5, on }) {
    Object.assign(this, { workerUrl, data, recipe, seed, watching: watch, speed, on });
    this.state = "ready";  // ready, running, paused, done or failed
    this.steps = [];
    this.evals = [];
    this.snapshots = [base];  // the weights after each step; step 0 is where the run starts
    this.worker = null;
    this.timer = null;
    this.inFlight = false;
    this.lastAsked = -Infinity;
    this.timing = { created: null, firstStep: null, paused: null, stepsAtPause: 0, asked: [] };
  }

  get done() {
    return this.steps.length >= this.recipe.steps;
  }

  /** Train at the chosen pace until paused or done. */
  play() {
    if (this.done || this.state === "failed") return;
    this.setState("running");
    this.schedule();
  }

  /** Stop asking for steps: a step under way still arrives, no other. */
  pause() {
    if (this.state !== "running") return;
    clearTimeout(this.timer);
    this.timer = null;
    this.timing.paused = performance.now();
    this.timing.stepsAtPause = this.steps.length;
    this.setState("paused");
  }

  /** One step, then wait (from ready or paused). */
  stepOnce() {
    if (this.state === "running" || this.done || this.state === "failed" || this.inFlight) return;
    this.setState("paused");
    this.ask();
  }

  /** Train at `speed` steps a second from the next step on. */
  setSpeed(speed) {
    this.speed = speed;
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
      this.schedule();
    }
  }

  /** Watch the sum `prompt` from the next step on; a started worker also answers with its answers now. */
  watch(prompt) {
    this.watching = prompt;
    if (this.worker) this.worker.postMessage({ type: "watch", prompt });
  }

  /** End the run: its worker is stopped and nothing more arrives. */
  stop() {
    clearTimeout(this.timer);
    if (this.worker) this.worker.terminate();
    this.worker = null;
    this.on = {};
  }

  setState(state) {
    this.state = state;
    this.on.state?.(state);
  }

  schedule() {
    if (this.state !== "running" || this.inFlight || this.done || this.timer !== null) return;
    const wait = this.lastAsked + 1000 / this.speed - performance.now();
    if (wait <= 0) this.ask();
    else this.timer = setTimeout(() => { this.timer = null; this.schedule(); }, wait);
  }

  /** Make and start the worker now, if it is not made yet (it compiles the model while the reader reads). */
  prepare() {
    if (this.worker || !this.on.step) return;  // made already, or the run was stopped
    this.timing.created = performance.now();
    this.worker = new Worker(this.workerUrl);
    this.worker.onmessage = (event) => this.receive(event.data);
    this.worker.onerror = (event) => this.fail(event.message);
    const { checkpoints, ...plain } = this.data;  // the worker needs the weights, not their encoded text
    this.worker.postMessage({ type: "start", data: plain, flat: Float32Array.from(this.snapshots[0]),
      seed: this.seed, recipe: this.recipe, watch: this.watching });
  }

  ask() {
    this.prepare();
    this.inFlight = true;
    this.lastAsked = performance.now();
    this.timing.asked.push(this.lastAsked);
    this.worker.postMessage({ type: "step" });
  }

  receive(message) {
    if (message.type === "step") {
      const { weights, ...record } = message;
      record.arrived = performance.now();  // when the page had it: the pace the reader sees
      this.inFlight = false;
      this.steps.push(record);
      this.snapshots.push(weights);
      if (record.step === 1) {
        this.timing.firstStep = performance.now() - Math.max(this.timing.created, this.timing.asked[0]);
      }
      this.schedule();  // the worker starts on the next step while the page draws this one
      this.on.step?.(record);
      if (this.done) this.setState("done");
    } else if (message.type === "eval") {
      this.evals.push(message);
      this.evals.sort((a, b) => a.step - b.step);
      this.on.eval?.(message);
    } else if (message.type === "watched") {
      this.on.watched?.(message);
    } else if (message.type === "error") {
      this.fail(message.message);
    }
  }

  fail(text) {
    this.error = text;
    this.setState("failed");
    this.on.error?.(text);
  }
}
