import { Rational } from "../countdown/rational.js";
import { add, MathError, neg, print, scale, sub } from "./algebra.js";
import { parseExpression } from "./parse.js";
import { isSym, printTokens, tokenize, type Token } from "./tokens.js";

/**
 * A final answer in canonical form. Two answers are equivalent exactly when their keys are equal: the normaliser
 * does the mathematics, the comparison is string equality. `parsed` is false when some part could not be read as
 * mathematics and was compared as cleaned-up text instead.
 */
export interface NormalizedAnswer {
  key: string;
  parsed: boolean;
  /**
   * Two numbers with only spacing between them, as written (`4 2` for `4 2`, `4\,200`, `4~200`, `1 000`): one number
   * in groups, or a product? Such an answer is never read as a number and its key is the text with the spacing kept,
   * so it equals no number (Math-Verify refuses these as well). Null when there is none. Not split: thousands written
   * `4,200`, `4{,}200`, `4,\!200` or `4\!200`, and a number after an exponent (`\sin^2 20`).
   */
  splitDigits: string | null;
}

/** Answers longer than this are not parsed (no MATH answer comes near; a hostile one costs nothing). */
export const MAX_ANSWER_LENGTH = 1000;
const MAX_NESTING = 8;

/**
 * What the normaliser does, in order (Hendrycks' `_strip_string` and PRM800K's grader are the references; unlike
 * both, it decides numeric and algebraic equality exactly instead of by string or by sympy):
 * 1. text: drop `$`, `\left`/`\right`, spacing commands (`\!`, `\,`), `\%`, degrees (`^\circ`, `°`), `\displaystyle`;
 *    `\dfrac`/`\tfrac` → `\frac`; thousands separators `10,\!080` and `1{,}000`; `\!` between digits (a negative
 *    space: `4\!200` is 4200); a final period. Digits split by any other spacing (`4 2`, `4\,200`) stop here: see
 *    `splitDigits`.
 * 2. words: `\text{ cm}`-like units after a value (and `^2` after them) and plain unit words (`5 cm`, `18 square
 *    feet`) are dropped; `\text{ and }`/`\text{ or }` separate answers; an answer that is only words (`\text{Evelyn}`,
 *    `East`) compares case-insensitively; `(C)`, `\text{(C)}`, `C` are choice C.
 * 3. structure: `A \cup B` (order-free); `a, b` (order-free, a list of solutions) unless it is one number with
 *    thousands commas (`58,500`); `\{a, b\}` (order-free, duplicates dropped); `(a, b]`, `[a, b)`, `(a, b)` (ordered,
 *    brackets kept); `pmatrix`/`bmatrix` (element-wise); `x = 5` and `x \in [1, 2]` keep the right side when the left
 *    is a variable; other equations compare as `lhs − rhs = 0` up to a constant factor; `a \pm b` is the set
 *    {a + b, a − b}.
 * 4. values: the exact algebra of `algebra.ts` (`\frac{3}{4}` = `0.75` = `3/4`, `\sqrt{12}` = `2\sqrt3`, `6-5i` =
 *    `-5i+6`); what it cannot read is compared as canonically printed tokens (`\frac12` → `\frac{1}{2}`).
 */
export function normalizeMathAnswer(raw: string): NormalizedAnswer {
  if (raw.length > MAX_ANSWER_LENGTH) return { key: raw.replace(/\s+/g, ""), parsed: false, splitDigits: null };
  const text = clean(raw);
  const tokens = tokenize(text);
  const split = splitDigits(tokens);
  if (split !== null) return { key: text.replace(/\s+/g, " "), parsed: false, splitDigits: split };
  const state = { parsed: true };
  const key = structure(tokens, state, 0);
  return { key, parsed: state.parsed, splitDigits: null };
}

/** `4 2` where a number follows a number with only spacing between (after `clean`, every spacing is a space). */
function splitDigits(tokens: readonly Token[]): string | null {
  for (let i = 1; i < tokens.length; i++) {
    const token = tokens[i] as Token;
    const previous = tokens[i - 1] as Token;
    const before = tokens[i - 2];
    if (token.kind === "num" && token.space && previous.kind === "num" && !isSym(before, "^") && !isSym(before, "_")) return `${previous.text} ${token.text}`;
  }
  return null;
}

/** Text-level clean-up before tokenising. Every pattern is linear. */
export function clean(raw: string): string {
  return raw
    .replace(/\\\$/g, "")
    .replace(/\$/g, "")
    .replace(/(\d)\s*,(?<!\\)\\!\s*(?=\d{3}(?!\d))/g, "$1")
    .replace(/(\d)\{,\}(?=\d{3}(?!\d))/g, "$1")
    .replace(/(\d)\\!(?=\d)/g, "$1")
    .replace(/\\(?:left|right|bigl|bigr|Bigl|Bigr|big|Big)(?![A-Za-z])\s*\.?/g, "")
    .replace(/\^\s*\{\s*\\circ\s*\}|\^\s*\\circ|\\circ|°|\\degree(?![A-Za-z])/g, "")
    .replace(/\^\s*\{\s*\\text\s*\{\s*o\s*\}\s*\}/g, "")
    .replace(/\\?%/g, "")
    .replace(/\\[dtc]frac(?![A-Za-z])/g, "\\frac")
    .replace(/\\[dt]binom(?![A-Za-z])/g, "\\binom")
    .replace(/\\(?:qquad|quad)(?![A-Za-z])|(?<!\\)\\[,;:! ]|~/g, " ")
    .replace(/\\(?:leq|leqslant)(?![A-Za-z])/g, "\\le")
    .replace(/\\(?:geq|geqslant)(?![A-Za-z])/g, "\\ge")
    .replace(/\\(?:neq)(?![A-Za-z])/g, "\\ne")
    .replace(/\\(?:varnothing)(?![A-Za-z])/g, "\\emptyset")
    .replace(/\\(?:lbrace)(?![A-Za-z])/g, "\\{")
    .replace(/\\(?:rbrace)(?![A-Za-z])/g, "\\}")
    .replace(/\\(?:langle)(?![A-Za-z])/g, "(")
    .replace(/\\(?:rangle)(?![A-Za-z])/g, ")")
    .trim()
    .replace(/\s*\.$/, "");
}

type State = { parsed: boolean };

/** The key of a whole answer (or of a part of one, at `depth`). */
function structure(input: readonly Token[], state: State, depth: number): string {
  if (depth > MAX_NESTING) return fallback(input, state);
  const tokens = stripUnits(readText(trimPeriods(input)));
  if (tokens.length === 0) {
    state.parsed = false;
    return "";
  }
  const choice = choiceLetter(tokens);
  if (choice !== null) return `(${choice})`;
  const words = wordsOnly(tokens);
  if (words !== null) return `\\text{${words}}`;

  const unionParts = splitTop(tokens, (t) => t.kind === "cmd" && t.text === "\\cup");
  if (unionParts.length > 1) return sortedUnique(unionParts.map((part) => structure(part, state, depth + 1))).join("\\cup");

  const merged = thousands(tokens);
  if (merged !== null) return element(merged, state, depth).join(",");
  const items = splitTop(tokens, (t) => isSym(t, ",") || isSym(t, ";"));
  if (items.length > 1) return `\\{${sortedUnique(items.flatMap((item) => element(item, state, depth + 1))).join(",")}\\}`;
  const keys = element(tokens, state, depth);
  return keys.length === 1 ? (keys[0] as string) : `\\{${sortedUnique(keys).join(",")}\\}`;
}

/** One item of an answer: usually one key, two for `a \pm b`. */
function element(tokens: readonly Token[], state: State, depth: number): string[] {
  if (tokens.length === 0) {
    state.parsed = false;
    return [""];
  }
  if (depth > MAX_NESTING) return [fallback(tokens, state)];
  const first = tokens[0] as Token;
  const last = tokens[tokens.length - 1] as Token;

  // \{…\}: a set.
  if (first.kind === "cmd" && first.text === "\\{" && last.kind === "cmd" && last.text === "\\}" && enclosesAll(tokens)) {
    const inner = tokens.slice(1, -1);
    if (inner.length === 0) return ["\\emptyset"];
    const members = splitTop(inner, (t) => isSym(t, ","));
    return [`\\{${sortedUnique(members.flatMap((member) => element(member, state, depth + 1))).join(",")}\\}`];
  }
  if (tokens.length === 1 && first.kind === "cmd" && first.text === "\\emptyset") return ["\\emptyset"];

  // (a, b], [a, b): tuples and intervals, ordered, brackets kept.
  if ((isSym(first, "(") || isSym(first, "[")) && (isSym(last, ")") || isSym(last, "]")) && enclosesAll(tokens)) {
    const members = splitTop(tokens.slice(1, -1), (t) => isSym(t, ","));
    if (members.length > 1) return [`${first.text}${members.map((member) => single(member, state, depth + 1)).join(",")}${last.text}`];
  }

  // Matrices, element-wise.
  if (first.kind === "begin" && last.kind === "end" && /^[pbB]?matrix$|^smallmatrix$/u.test(first.text)) {
    const rows = splitTop(tokens.slice(1, -1), (t) => t.kind === "cmd" && t.text === "\\\\").filter((row) => row.length > 0);
    const cells = rows.map((row) => splitTop(row, (t) => isSym(t, "&")).map((cell) => single(cell, state, depth + 1)).join("&"));
    return [`\\begin{pmatrix}${cells.join("\\\\")}\\end{pmatrix}`];
  }

  // Relations: `x = 5` and `x \in [1, 2]` keep the right side; other equations become lhs − rhs = 0.
  const sides = splitTop(tokens, (t) => isSym(t, "=") || (t.kind === "cmd" && t.text === "\\in"));
  if (sides.length === 2) {
    const [left, right] = sides as [Token[], Token[]];
    if (isVariable(left)) return [structure(right, state, depth + 1)];
    if (splitTop(tokens, (t) => isSym(t, "=")).length === 2) return [equation(left, right, tokens, state)];
  }
  if (sides.length > 2 || splitTop(tokens, isRelation).length > 1) return [fallback(tokens, state)];

  // a ± b: two answers.
  const plusMinus = splitTop(tokens, (t) => t.kind === "cmd" && (t.text === "\\pm" || t.text === "\\mp"));
  if (plusMinus.length === 2) {
    const [left, right] = plusMinus as [Token[], Token[]];
    try {
      const a = left.length === 0 ? [] : parseExpression(left);
      const b = parseExpression(right);
      return [print(add(a, b)), print(sub(a, b))];
    } catch (error) {
      if (!(error instanceof MathError)) throw error;
      return [fallback(tokens, state)];
    }
  }
  return [value(tokens, state)];
}

/** An element that must be a single value (inside a tuple or matrix): `a \pm b` there is read as text. */
function single(tokens: readonly Token[], state: State, depth: number): string {
  const keys = element(tokens, state, depth);
  return keys.length === 1 ? (keys[0] as string) : fallback(tokens, state);
}

function value(tokens: readonly Token[], state: State): string {
  try {
    return print(parseExpression(tokens));
  } catch (error) {
    if (!(error instanceof MathError)) throw error;
    return fallback(tokens, state);
  }
}

/** lhs = rhs as (lhs − rhs) = 0, scaled to integer coefficients with gcd 1 and a positive leading coefficient. */
function equation(left: readonly Token[], right: readonly Token[], all: readonly Token[], state: State): string {
  try {
    let difference = sub(parseExpression(left), parseExpression(right));
    if (difference.length === 0) return "0=0";
    const coefficients = difference.map((t) => t.coefficient);
    const lcm = coefficients.reduce((acc, c) => (acc * c.denominator) / gcd(acc, c.denominator), 1n);
    const common = coefficients.reduce((acc, c) => gcd(acc, abs(c.numerator)), 0n);
    difference = scale(difference, Rational.of(lcm, common));
    if ((difference[0]?.coefficient.numerator ?? 0n) < 0n) difference = neg(difference);
    return `${print(difference)}=0`;
  } catch (error) {
    if (!(error instanceof MathError)) throw error;
    return fallback(all, state);
  }
}

function fallback(tokens: readonly Token[], state: State): string {
  state.parsed = false;
  return printTokens(tokens);
}

/** Splits at top-level tokens (outside (), [], {}, \{\}, \begin…\end) for which `at` holds. */
function splitTop(tokens: readonly Token[], at: (token: Token) => boolean): Token[][] {
  const parts: Token[][] = [[]];
  let depth = 0;
  for (const token of tokens) {
    if (isOpener(token)) depth++;
    else if (isCloser(token)) depth = Math.max(0, depth - 1);
    else if (depth === 0 && at(token)) {
      parts.push([]);
      continue;
    }
    (parts[parts.length - 1] as Token[]).push(token);
  }
  return parts;
}

/** Whether the first token's bracket closes at the last token (so `(1,2)\cup(3,4)` is not one interval). */
function enclosesAll(tokens: readonly Token[]): boolean {
  let depth = 0;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i] as Token;
    if (isOpener(token)) depth++;
    else if (isCloser(token)) {
      depth--;
      if (depth === 0 && i < tokens.length - 1) return false;
    }
  }
  return depth === 0;
}

function isOpener(token: Token): boolean {
  return (token.kind === "sym" && (token.text === "(" || token.text === "[" || token.text === "{")) || (token.kind === "cmd" && token.text === "\\{") || token.kind === "begin";
}

function isCloser(token: Token): boolean {
  return (token.kind === "sym" && (token.text === ")" || token.text === "]" || token.text === "}")) || (token.kind === "cmd" && token.text === "\\}") || token.kind === "end";
}

function isRelation(token: Token): boolean {
  if (token.kind === "sym") return token.text === "=" || token.text === "<" || token.text === ">";
  return token.kind === "cmd" && ["\\le", "\\ge", "\\lt", "\\gt", "\\ne", "\\approx", "\\in", "\\to"].includes(token.text);
}

/** `x`, `a_1`, `\theta`, `f(x)`, or a tuple of those: the left side of `x = 5` that is dropped. */
function isVariable(tokens: readonly Token[]): boolean {
  const [a, b, c, d] = tokens;
  if (tokens.length === 1) return a?.kind === "letter" || (a?.kind === "cmd" && /^\\[a-zA-Z]+$/u.test(a.text) && !["\\pi", "\\infty"].includes(a.text));
  if (tokens.length >= 3 && a?.kind === "letter" && isSym(b, "_")) return tokens.length === 3 || (isSym(c, "{") && isSym(tokens[tokens.length - 1], "}"));
  if (tokens.length === 4 && a?.kind === "letter" && isSym(b, "(") && c?.kind === "letter" && isSym(d, ")")) return true;
  if (tokens.length >= 5 && isSym(a, "(") && isSym(tokens[tokens.length - 1], ")") && enclosesAll(tokens)) {
    return splitTop(tokens.slice(1, -1), (t) => isSym(t, ",")).every((part) => part.length > 0 && isVariable(part));
  }
  return false;
}

/** A number written with thousands commas (`58,500`, `-1,000,000.5`) as one number token, else null. */
function thousands(tokens: readonly Token[]): Token[] | null {
  let i = 0;
  const sign = isSym(tokens[0], "-") || isSym(tokens[0], "+") ? [tokens[i++] as Token] : [];
  const head = tokens[i];
  if (head === undefined || head.kind !== "num" || !/^\d{1,3}$/u.test(head.text) || tokens.length < i + 3) return null;
  let digits = head.text;
  i++;
  while (i < tokens.length) {
    const comma = tokens[i];
    const group = tokens[i + 1];
    if (!isSym(comma, ",") || comma?.space || group === undefined || group.kind !== "num" || group.space) return null;
    const last = i + 2 === tokens.length;
    if (!(last ? /^\d{3}(?:\.\d+)?$/u : /^\d{3}$/u).test(group.text)) return null;
    digits += group.text;
    i += 2;
  }
  return [...sign, { kind: "num", text: digits, space: false }];
}

/** `\text{…}` groups: units after a value are dropped (with a following `^2`), `and`/`or` become commas, and
 * math inside text (`\text{5}`) is read as math. Other text stays (and makes the value fall back to text). */
function readText(tokens: readonly Token[]): Token[] {
  if (!tokens.some((t) => t.kind === "text")) return tokens.slice();
  const out: Token[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i] as Token;
    if (token.kind !== "text") {
      out.push(token);
      continue;
    }
    const content = token.text.trim();
    if (content === "") continue;
    if (/^(?:and|or)$/iu.test(content)) out.push({ kind: "sym", text: ",", space: true });
    else if (!/[A-Za-z]/u.test(content)) out.push(...tokenize(content));
    else if (out.length > 0 && /^[A-Za-z][A-Za-z .-]*$/u.test(content)) {
      if (isSym(tokens[i + 1], "^") && tokens[i + 2]?.kind === "num") i += 2;
    } else out.push(token);
  }
  return out;
}

const SHORT_UNITS = new Set(["cm", "mm", "km", "ft", "yd", "in", "mi", "kg", "lb", "oz", "ml", "hr", "sec", "min"]);

/** Drops plain unit words after a value: `5 cm`, `18 square feet`, `10 cm^2`. */
function stripUnits(tokens: Token[]): Token[] {
  let end = tokens.length;
  if (end >= 2 && isSym(tokens[end - 2], "^") && /^[23]$/u.test(tokens[end - 1]?.text ?? "") && tokens[end - 3]?.kind === "letter") end -= 2;
  let start = end;
  let cut = -1;
  for (;;) {
    let wordStart = start;
    while (wordStart > 0 && tokens[wordStart - 1]?.kind === "letter" && (wordStart === start || !(tokens[wordStart] as Token).space)) wordStart--;
    if (wordStart === start || !(tokens[wordStart] as Token).space) break;
    const word = tokens.slice(wordStart, start).map((t) => t.text).join("");
    if (word.length < 3 && !SHORT_UNITS.has(word)) break;
    start = wordStart;
    const before = tokens[start - 1];
    if (before !== undefined && (before.kind === "num" || isSym(before, ")") || isSym(before, "}"))) cut = start;
    if (before === undefined || before.kind !== "letter") break;
  }
  return cut === -1 ? tokens : tokens.slice(0, cut);
}

function trimPeriods(tokens: readonly Token[]): readonly Token[] {
  let end = tokens.length;
  while (end > 0 && isSym(tokens[end - 1], ".")) end--;
  return end === tokens.length ? tokens : tokens.slice(0, end);
}

/** `(C)`, `C`, `\text{(C)}` (after text reading), `(c)`: the letter; else null. */
function choiceLetter(tokens: readonly Token[]): string | null {
  const [a, b, c] = tokens;
  if (tokens.length === 1 && a?.kind === "letter" && /^[A-J]$/u.test(a.text)) return a.text;
  if (tokens.length === 1 && a?.kind === "text" && /^\(?[A-Ja-j]\)?$/u.test(a.text.trim())) return a.text.replace(/[()\s]/g, "").toUpperCase();
  if (tokens.length === 3 && isSym(a, "(") && b?.kind === "letter" && /^[A-Ja-j]$/u.test(b.text) && isSym(c, ")")) return b.text.toUpperCase();
  return null;
}

/** An answer that is only words (`\text{Evelyn}`, `East`, `\text{no solution}`): lower-cased, single-spaced. */
function wordsOnly(tokens: readonly Token[]): string | null {
  if (tokens.length === 1 && tokens[0]?.kind === "text") {
    const words = tokens[0].text.trim().replace(/\s+/g, " ").toLowerCase();
    return /^[a-z][a-z .'-]*$/u.test(words) ? words.replace(/\.$/u, "") : null;
  }
  if (tokens.length < 3 || !tokens.every((t) => t.kind === "letter")) return null;
  return tokens
    .map((t, index) => (index > 0 && t.space ? " " : "") + t.text)
    .join("")
    .toLowerCase();
}

function sortedUnique(keys: readonly string[]): string[] {
  return [...new Set(keys)].sort();
}

function gcd(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
}

function abs(value: bigint): bigint {
  return value < 0n ? -value : value;
}
