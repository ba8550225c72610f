// The lab's view of one watched sum as the policy learns: its 32 fresh answers
// at each step, coloured by verdict, and its most likely answers with their
// exact probabilities before and after the step and the advantage the step
// gave each (chapter 1's one-update figure, live). Probabilities move with the
// advantages, and not always: an answer's probability also moves with what
// the update learns on every other sum.

import { answerChip, el, fixed, listing, probability, shown, verdictLabel } from "./dom.js";
import { promptOf, sumGrid, sumKind } from "./sum-grid.js";

/** The view; `pick(prompt)` is called when the reader picks another sum. Returns {node, show(record, step)}. */
export function watchView(data, pick) {
  const grid = sumGrid(data, "Sum to watch", (a, b) => { grid.select(a, b); pick(promptOf(a, b)); });
  const heading = el("p", { class: "rw-prompt" });
  const chips = el("div", { class: "rw-chips", "aria-label": "32 fresh answers to the watched sum" });
  const rows = el("div", { class: "rw-moves", role: "table",
    "aria-label": "most likely answers before and after the step" });
  const moved = el("p", { class: "rw-key", "aria-live": "polite" });
  const node = el("div", { class: "rw-watch" }, el("div", { class: "rw-controls" }, grid.node,
    el("div", { class: "rw-watch-main" }, heading, chips, rows, moved)));
  grid.select(5, 6);

  /** Draw `record` (worker.js's watch record) of step `step`; `after` false: the weights before any step. */
  function show(record, step) {
    const [a, b] = record.prompt.match(/[0-9]/g).map(Number);
    grid.select(a, b);
    const stepped = record.top.some((t) => t.after !== undefined);
    heading.textContent = `${record.prompt}  (${a} + ${b} = ${a + b}, ${sumKind(data, record.prompt)}): ` +
      `${record.answers.length} fresh answers ${stepped ? `before step ${step}` : `at step ${step}`}`;
    if (chips.children.length === record.answers.length) {  // the same chips, relabelled: less for the page to redo
      record.answers.forEach((answer, i) => {
        const chip = answerChip(answer), old = chips.children[i];
        old.className = chip.className;
        old.title = chip.title;
        old.textContent = chip.textContent;
      });
    } else {
      chips.replaceChildren(...record.answers.map(answerChip));
    }
    rows.replaceChildren(el("div", { class: "rw-move rw-move-head", role: "row" },
      ["answer", "in its group", stepped ? `probability before → after step ${step}` : "probability"]
        .map((text) => el("span", { role: "columnheader", text }))),
    ...record.top.map((t) => row(t, record, stepped)));
    moved.textContent = stepped ? movedText(record) : "";
  }

  return { node, show };
}

function groupText(t, record) {
  if (!record.trained) return "held out: in no batch";
  if (!record.groupSize) return "no step yet";
  if (!t.count) return `not drawn in its ${record.groupSize}`;
  const sign = t.advantage > 0 ? "+" : "";
  return `${t.count} of ${record.groupSize}, advantage ${sign}${fixed(t.advantage)}`;
}

function row(t, record, stepped) {
  const direction = t.advantage > 0 ? "rw-up" : t.advantage < 0 ? "rw-down" : "rw-none";
  const bar = (p, cls) => el("span", { class: `rw-pbar ${cls} ${direction}`, style: `width: ${(100 * p).toFixed(1)}%` });
  return el("div", { class: "rw-move", role: "row" },
    el("span", { role: "cell" }, el("code", { text: shown(t.completion) }), " ",
      el("span", { class: `rw-swatch rw-${t.loophole ? "loophole" : t.status}`, text: verdictLabel(t) })),
    el("span", { role: "cell", class: "rw-group", text: groupText(t, record) }),
    el("span", { role: "cell", class: "rw-prob" },
      el("span", { class: "rw-ptext",
        text: stepped ? `${probability(t.before)} → ${probability(t.after)}` : probability(t.before) }),
      el("span", { class: "rw-ptrack" }, bar(t.before, "rw-before"), stepped ? bar(t.after, "rw-after") : null)));
}

/**
 * How the listed answers moved against the advantages the step gave them, in one or two sentences. An answer
 * moved when its probability, as the table prints it, changed; counts never say "other" for all of them.
 */
export function movedText(record) {
  if (!record.trained) {
    return "This sum is held out: none of its answers was in the batch, so every change above came from " +
      "the update on the training sums.";
  }
  const n = record.top.length;
  const moves = (t) => probability(t.after) !== probability(t.before);
  const credited = record.top.filter((t) => t.advantage !== null && t.advantage !== 0);
  const rest = record.top.filter((t) => !credited.includes(t)), restMoved = rest.filter(moves).length;
  const still = credited.filter((t) => !moves(t)).length;
  const along = credited.filter((t) => moves(t) && Math.sign(t.after - t.before) === Math.sign(t.advantage)).length;
  const against = credited.length - along - still;
  const all = (k) => (k === 2 ? "both" : `all ${k}`);
  if (!credited.length) {
    const lead = `None of the ${n} answers listed had a non-zero advantage in this step's group`;
    if (!restMoved) return `${lead}, and none of them moved.`;
    const how = restMoved === n ? `${all(n)} moved all the same` : `${restMoved} of them moved all the same`;
    return `${lead}; ${how}, because the update moved other answers` +
      (restMoved === n ? "." : `, and the other ${n - restMoved === 1 ? "one" : n - restMoved} held still.`);
  }
  const verb = (k, one, many) => `${k} ${k === 1 ? one : many}`;
  const parts = [along && verb(along, "moved the way its advantage points", "moved the way their advantages point"),
    against && verb(against, "moved against its advantage", "moved against their advantages"),
    still && `${still} held still`].filter(Boolean);
  const who = credited.length === n ? `${all(n)[0].toUpperCase()}${all(n).slice(1)} answers listed`
    : `${credited.length} of the ${n} answers listed`;
  let text = `${who} had a non-zero advantage in this step's group: ${listing(parts)}.`;
  if (rest.length) {
    const other = rest.length === 1 ? "The other one" : `The other ${rest.length}`;
    text += restMoved === rest.length ? ` ${other}, with no advantage, moved only because the update moved other ` +
      "answers." : restMoved ? ` Of the other ${rest.length}, with no advantage, ${restMoved} moved because the ` +
      "update moved other answers and the rest held still." : ` ${other}, with no advantage, held still.`;
  }
  return text;
}
