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

/** The labels the panels give the verifier's statuses. */
export const VERDICTS = { accepted: "right", incorrect: "wrong", malformed: "malformed",
  incomplete: "stopped by the budget", unverifiable: "unverifiable" };

/** A completion as the book's figures print it: spaces and newlines made visible. */
export function shown(text) {
  return text.replace(/\n/g, "\\n").replace(/ /g, "\u2423");
}
