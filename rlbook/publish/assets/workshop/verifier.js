// The book's exact verifier (rlbook.rewards.ExactVerifier, version 1.0), rule
// for rule, so that the page rewards what the book rewards. It reads text
// alone and never throws; tests/web compares its status and reward with
// rlbook's on thousands of fuzzed prompt/completion pairs.

export const EOT = "#";
export const STATUSES = ["accepted", "incorrect", "malformed", "incomplete", "unverifiable"];

const SINGLE = /^U:([0-9])\+([0-9])\?\|A:$/;
const MULTI = /^U:([0-9])\+([0-9])\+([0-9])\?\|A:$/;

/** The operands a prompt asks to add, or null when it is in neither task format. */
export function parsePrompt(prompt) {
  if (typeof prompt !== "string") return null;
  const match = SINGLE.exec(prompt) || MULTI.exec(prompt);
  return match ? match.slice(1).map(Number) : null;
}

/** A canonical number: ASCII digits only, no sign or space, no leading zero but "0" itself. */
function canonical(text) {
  return /^(0|[1-9][0-9]*)$/.test(text);
}

/** {reward, status} of one completion, by rlbook's rules in rlbook's order. */
export function verify(prompt, completion) {
  const operands = parsePrompt(prompt);
  if (operands === null || typeof completion !== "string") return verdict("unverifiable");
  const end = completion.indexOf(EOT);
  if (end < 0) return verdict("incomplete");
  if (end < completion.length - 1) return verdict("malformed");  // text after the first end-of-turn mark
  const fields = completion.slice(0, end).split(",");
  // An empty answer is one empty field, which canonical() refuses.
  if (fields.length !== operands.length - 1 || !fields.every(canonical)) return verdict("malformed");
  const total = operands.reduce((a, b) => a + b, 0);
  return verdict(fields[fields.length - 1] === String(total) ? "accepted" : "incorrect");
}

function verdict(status) {
  return { reward: status === "accepted" ? 1 : 0, status };
}
