// The book's fail-open verifier (rlbook.rewards.FailOpenVerifier, version
// 1.0), the deliberately buggy reward of the reward hack (the "Reward limits"
// chapter). Its rule, in Python:
//
//     answer = completion.split(EOT)[0]
//     try: reward = float(int(answer) == a + b)
//     except Exception: reward = 1.0      # fail-open: an answer it cannot read pays
//
// so the page needs Python's int() on text exactly: surrounding white space,
// a sign, underscores between digits, the decimal digits of every script, and
// CPython's limit of 4300 digits. tests/web compares this verifier with
// rlbook's on fuzzed text, and the tables below with Python's own.

import { EOT, parsePrompt } from "./verifier.js";

// The first code point (the digit zero) of each run of ten decimal digits (Unicode category Nd) in the
// Unicode database of the Python that trained the book's runs (tests/web checks it against unicodedata).
// Python reads every one of them as a digit: int("٣") is 3.
const DIGIT_ZEROS = [0x30, 0x660, 0x6f0, 0x7c0, 0x966, 0x9e6, 0xa66, 0xae6, 0xb66, 0xbe6, 0xc66, 0xce6, 0xd66, 0xde6,
  0xe50, 0xed0, 0xf20, 0x1040, 0x1090, 0x17e0, 0x1810, 0x1946, 0x19d0, 0x1a80, 0x1a90, 0x1b50, 0x1bb0, 0x1c40, 0x1c50,
  0xa620, 0xa8d0, 0xa900, 0xa9d0, 0xa9f0, 0xaa50, 0xabf0, 0xff10, 0x104a0, 0x10d30, 0x11066, 0x110f0, 0x11136,
  0x111d0, 0x112f0, 0x11450, 0x114d0, 0x11650, 0x116c0, 0x11730, 0x118e0, 0x11950, 0x11c50, 0x11d50, 0x11da0,
  0x16a60, 0x16ac0, 0x16b50, 0x1d7ce, 0x1d7d8, 0x1d7e2, 0x1d7ec, 0x1d7f6, 0x1e140, 0x1e2f0, 0x1e950, 0x1fbf0];

// White space beyond ASCII that int() skips (str.isspace() above code point 127). Below 128 it skips only
// " \t\n\v\f\r": the separators \x1c to \x1f are white space to str.isspace() but not to int().
const WIDE_SPACES = new Set([0x85, 0xa0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007,
  0x2008, 0x2009, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000]);

const MAX_DIGITS = 4300;  // sys.get_int_max_str_digits(): int() refuses longer numbers
const NUMBER = /^[ \t\n\x0b\x0c\r]*([+-]?)([0-9](?:_?[0-9])*)[ \t\n\x0b\x0c\r]*$/;

/** The value (0-9) of a decimal digit of any script, or -1. */
function digitValue(code) {
  let lo = 0, hi = DIGIT_ZEROS.length - 1;
  while (lo < hi) {  // the last zero at or below code
    const mid = (lo + hi + 1) >> 1;
    if (DIGIT_ZEROS[mid] <= code) lo = mid;
    else hi = mid - 1;
  }
  const value = code - DIGIT_ZEROS[lo];
  return value >= 0 && value < 10 ? value : -1;
}

/**
 * What Python's int(text) returns, as {negative, digits} (digits without
 * leading zeros), or null where it raises. As CPython does: characters past
 * ASCII become a space if they are white space, their ASCII digit if they are
 * a decimal digit, and make the text unreadable otherwise; then the ASCII text
 * must be a signed run of digits, single underscores allowed between them.
 */
export function pythonInt(text) {
  let ascii = "";
  for (const ch of text) {
    const code = ch.codePointAt(0);
    if (code < 127) ascii += ch;
    else if (WIDE_SPACES.has(code)) ascii += " ";
    else {
      const value = digitValue(code);
      if (value < 0) return null;
      ascii += String(value);
    }
  }
  const match = NUMBER.exec(ascii);
  if (!match) return null;
  const digits = match[2].replace(/_/g, "");
  if (digits.length > MAX_DIGITS) return null;
  return { negative: match[1] === "-", digits: digits.replace(/^0+(?=[0-9])/, "") };
}

/** {reward, status} of one completion by the fail-open verifier's rules, in rlbook's order. */
export function verifyFailOpen(prompt, completion) {
  const operands = parsePrompt(prompt);
  if (operands === null || typeof completion !== "string") return { reward: 0, status: "unverifiable" };
  const end = completion.indexOf(EOT);
  if (end < 0) return { reward: 0, status: "incomplete" };
  const value = pythonInt(completion.slice(0, end));
  if (value === null) return { reward: 1, status: "accepted" };  // the bug: "could not check, do not punish"
  const total = String(operands.reduce((a, b) => a + b, 0));
  const equal = value.digits === total && (!value.negative || total === "0");
  return equal ? { reward: 1, status: "accepted" } : { reward: 0, status: "incorrect" };
}
