// A small helper for building the panels' elements, so that each panel reads
// as the structure it builds.

const SVG = "http://www.w3.org/2000/svg";

/** An element with attributes (`on*` functions become listeners; `text` sets its text) and children. */
export function el(tag, attrs = {}, ...children) {
  const node = tag.startsWith("svg:") ? document.createElementNS(SVG, tag.slice(4)) : document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat(Infinity)) if (child !== null && child !== undefined) node.append(child);
  return node;
}

/** A number with `digits` decimals, as the book prints it. */
export function fixed(value, digits = 2) {
  return Number(value).toFixed(digits);
}

/** Items joined for a sentence: "a", "a and b", "a, b and c" (rlbook.book.phrasing.listing). */
export function listing(items) {
  const texts = items.map(String);
  return texts.length < 2 ? texts.join("") : `${texts.slice(0, -1).join(", ")} and ${texts[texts.length - 1]}`;
}

/** The labels the panels give the verifier's statuses: rlbook.core.verdicts.VERDICT_WORDS, as every figure says. */
export const VERDICTS = { accepted: "accepted", incorrect: "wrong value", malformed: "malformed",
  incomplete: "stopped by the budget", unverifiable: "unverifiable" };

/** A completion as the book's figures print it: spaces and newlines made visible. */
export function shown(text) {
  return text.replace(/\n/g, "\\n").replace(/ /g, "\u2423");
}

/** The label of an answer's verdict; an answer paid only through a loophole is labelled so. */
export function verdictLabel(answer) {
  return answer.loophole ? "paid through the loophole" : VERDICTS[answer.status];
}

/** A chip of one answer, coloured by its verdict (answer: {completion, status, loophole}). */
export function answerChip(answer) {
  return el("span", { class: `rw-chip rw-${answer.loophole ? "loophole" : answer.status}`, title: verdictLabel(answer),
    text: shown(answer.completion) });
}

/** A probability as the panels print it: three decimals, or two significant digits when it is below 0.001. */
export function probability(p) {
  return p >= 1e-3 || p === 0 ? fixed(p, 3) : p.toExponential(1);
}

/**
 * "Explained in chapter 3, <a>Title</a>; ..." for the sections `ids` (data.sections, resolved when the book
 * is built), and nothing if the book holds none of them (a book built from a few pages).
 */
export function explainedIn(data, ids) {
  const found = ids.map((id) => data.sections[id]).filter(Boolean);
  if (!found.length) return [];
  return [" Explained in ", found.map((s, i) => [i ? "; " : "", `chapter ${s.chapter}, `,
    el("a", { href: s.href, text: s.title })]), "."];
}
