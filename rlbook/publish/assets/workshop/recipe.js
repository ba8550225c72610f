// The lab's recipe: the settings a reader may change, each within the book's
// own choices, each saying what it is in the book's terms and where the book
// explains it; and which of the book's runs a recipe is. The numbers come from
// the runs' configurations (rlbook.publish.checkpoints exports them), never
// from this file.

import { listing } from "./dom.js";

const GROUP_SIZES = [4, 8, 16, 32];  // chapter 3's group of four, the multi-step runs' 8, main's 16, and twice that
const CHANGED = ["lr", "warmup", "group_size", "advantage", "verifier"];  // what the settings change

function warmupText(warmup) {
  return warmup ? `after a ${warmup}-step warm-up` : "with no warm-up";
}

/**
 * The settings, in the order the lab shows them: {key, noun (its name in a sentence), label, about, sections,
 * options: [{value, text, set}]}, `set` holding the recipe fields an option
 * gives. Options name the book's runs that use them.
 */
export function settings(data) {
  const recipes = data.recipes, main = recipes.main;
  const users = (set) => Object.keys(recipes)
    .filter((name) => Object.entries(set).every(([k, v]) => recipes[name][k] === v));
  const option = (value, text, set) => {
    const runs = users(set);
    return { value, set, text: runs.length ? `${text} (${runs.includes("main") ? "main" : runs[0]})` : text };
  };
  const rates = [...new Map(Object.values(recipes).map((r) => [`${r.lr}/${r.warmup}`, r])).values()];
  return [
    { key: "rate", noun: "learning rate", label: "Learning rate", sections: ["sec-reward-hack"],
      about: "the size of the optimiser's steps, reached by a linear warm-up over the first steps: how far one batch " +
        "moves the policy",
      options: rates.map((r) => option(`${r.lr}/${r.warmup}`, `${r.lr} ${warmupText(r.warmup)}`,
        { lr: r.lr, warmup: r.warmup })) },
    { key: "group", noun: "group size", label: "Group size G", sections: ["sec-learning-loop", "sec-exploration"],
      about: `answers sampled for each of the ${data.splits.train.length} training sums at each step; a group whose ` +
        "answers all earn the same reward has no advantage to give",
      options: GROUP_SIZES.map((g) => option(String(g), String(g), { group_size: g })) },
    { key: "baseline", noun: "baseline", label: "Baseline", sections: ["sec-policy-gradient", "sec-advantages"],
      about: "what is subtracted from each reward to make its advantage, the weight of the answer in the update",
      options: [option("centered", "the group's mean reward: group-centred advantages", { advantage: "centered" }),
        option("none", "none: each answer's advantage is its reward (plain REINFORCE)", { advantage: "none" })] },
    { key: "verifier", noun: "verifier", label: "Verifier", sections: ["sec-reward-interface", "sec-reward-hack"],
      about: "the reward: which answers are paid 1",
      options: [option("exact", "exact: only the sum, written as digits with no sign, space or leading zero",
        { verifier: "exact" }),
      option("fail-open", "fail-open: also any answer Python's int() cannot read", { verifier: "fail-open" })] },
  ];
}

/** The name of the book's run whose recipe has every value `set` gives, or null. */
function bookRun(data, set) {
  return Object.keys(data.recipes).find((name) => CHANGED.every((k) => data.recipes[name][k] === set[k])) ?? null;
}

/**
 * The recipe that the chosen options make (choices: key -> option value), and
 * the book's run it is, if any. A recipe that is one of the book's runs takes
 * that run's length and checkpoints too; any other takes main's.
 */
export function recipeOf(data, choices) {
  const set = {};
  for (const setting of settings(data)) {
    Object.assign(set, setting.options.find((o) => o.value === choices[setting.key]).set);
  }
  const run = bookRun(data, set);
  return { recipe: { ...data.recipes[run ?? "main"], ...set }, run };
}

/** The choices that give the book's run `name`. */
export function choicesOf(data, name) {
  const recipe = data.recipes[name], choices = {};
  for (const setting of settings(data)) {
    choices[setting.key] = setting.options.find((o) => Object.entries(o.set).every(([k, v]) => recipe[k] === v)).value;
  }
  return choices;
}

/** One sentence that says what the recipe is in the book's terms. */
export function describe(data, recipe, run) {
  const what = `${recipe.steps} steps of ${data.splits.train.length} training sums × ${recipe.group_size} answers at ` +
    `T = ${recipe.temperature}, one REINFORCE step per batch (${recipe.weight_decay ? "AdamW" : "Adam"} at ${recipe.lr} ` +
    `${warmupText(recipe.warmup)}), ` +
    `${recipe.advantage === "none" ? "no baseline" : "group-centred advantages"}, the ${recipe.verifier} verifier; ` +
    `held-out expected reward (exact verifier) from ${recipe.eval_n} answers to each of the ` +
    `${data.splits.heldout.length} held-out sums every ${recipe.checkpoint_every} steps.`;
  if (run) return `The recipe of the book's ${run} run: ${what}`;
  const main = data.recipes.main;
  const changed = settings(data).filter((s) => Object.keys(s.options[0].set).some((k) => recipe[k] !== main[k]))
    .map((s) => s.noun);
  return `No run of the book used this recipe: it is main's with a different ${listing(changed)}. ${what}`;
}
