import { Rational } from "../countdown/rational.js";

/**
 * Numbers as GSM8K answers write them: thousands commas (`1,450,000`), decimals (`72.0` is 72), a leading `.`,
 * a minus sign (ASCII or U+2212), `$` and `%` and unit words around them, and in a final answer also a fraction
 * (`3/4`, `\frac{3}{4}`). Values are exact rationals, so `18.00` equals `18` and `0.5` equals `1/2`.
 */

/** Longer digit strings are not read as numbers: no GSM8K answer comes close, and bigint parsing of 1 MB is slow. */
const MAX_DIGITS = 40;
/** A final answer longer than this is not parsed as a whole (the caller falls back to its last number). */
const MAX_ANSWER_LENGTH = 200;

const NUMBER = String.raw`\d{1,3}(?:,\d{3})+(?!\d)(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+`;
const WHOLE = new RegExp(String.raw`^([-−+])?\s*(${NUMBER})(?:\s*/\s*(${NUMBER}))?(?:\s*[A-Za-z][A-Za-z\s./]*)?$`, "u");
const IN_TEXT = new RegExp(String.raw`(?<![\w.])([-−])?\$?(${NUMBER})`, "gu");
const FRAC = /\\[dt]?frac\s*\{\s*([-−]?)\s*([\d.,]+)\s*\}\s*\{\s*([\d.,]+)\s*\}/gu;
const TEXT = /\\(?:text|mathrm|textbf|mbox)\s*\{([^{}]*)\}/gu;

/** One number token: "1,234.50" → 123450/100. Null when it has too many digits. */
export function parseDecimal(digits: string): Rational | null {
  const plain = digits.replace(/,/g, "");
  if (plain.length > MAX_DIGITS) return null;
  const point = plain.indexOf(".");
  if (point === -1) return Rational.of(BigInt(plain));
  const fraction = plain.slice(point + 1);
  return Rational.of(BigInt(plain.slice(0, point) + fraction), 10n ** BigInt(fraction.length));
}

/**
 * A whole final answer as one number, or null when it is not one: `18`, `$18.00`, `-3`, `2,125`, `18 dollars`,
 * `50%`, `x = 18`, `3/4`, `\frac{3}{4}`, `\$1{,}000`, `18.` (a sentence's period).
 */
export function parseAnswerNumber(raw: string): Rational | null {
  if (raw.length > MAX_ANSWER_LENGTH) return null;
  const text = raw
    .replace(TEXT, " $1 ")
    .replace(FRAC, "$1$2/$3")
    .replace(/\{,\}/g, ",")
    .replace(/\\[,!;: ]|~|\*\*|`|\\left|\\right/g, "")
    .replace(/\\?\$|\\?%/g, "")
    .trim()
    .replace(/^[A-Za-z][\w ]{0,20}=\s*|^=\s*/u, "")
    .replace(/\.+$/u, "")
    .trim();
  const match = WHOLE.exec(text);
  if (match === null) return null;
  const numerator = parseDecimal(match[2] as string);
  if (numerator === null) return null;
  let value: Rational | null = numerator;
  if (match[3] !== undefined) {
    const denominator = parseDecimal(match[3]);
    value = denominator === null ? null : numerator.div(denominator);
  }
  if (value === null) return null;
  return match[1] === "-" || match[1] === "−" ? value.neg() : value;
}

export interface NumberInText {
  value: Rational;
  /** As written, e.g. "-1,234.5". */
  text: string;
  /** Offset of the match in the scanned text. */
  index: number;
}

/**
 * The numbers of a free text, in order, in one linear pass. A minus counts as a sign only where it cannot be a
 * binary minus (not after a letter, digit or closing bracket), so `12-5 = 7` holds 12, 5, 7 and `it is -3` holds -3.
 */
export function* numbersIn(text: string): Generator<NumberInText> {
  for (const match of text.matchAll(IN_TEXT)) {
    const value = parseDecimal(match[2] as string);
    if (value === null) continue;
    const sign = match[1];
    const before = match.index > 0 ? text[match.index - 1] : undefined;
    const negative = sign !== undefined && before !== ")" && before !== "]";
    yield { value: negative ? value.neg() : value, text: `${negative ? "-" : ""}${match[2]}`, index: match.index };
  }
}

export function lastNumberIn(text: string): NumberInText | null {
  let last: NumberInText | null = null;
  for (const number of numbersIn(text)) last = number;
  return last;
}

export function firstNumberIn(text: string): NumberInText | null {
  for (const number of numbersIn(text)) return number;
  return null;
}

/** `18`, `-3`, `18.5`, `1/3`: a decimal when it terminates within 12 places, else a fraction. */
export function formatNumber(value: Rational): string {
  if (value.isInteger()) return value.numerator.toString();
  let rest = value.denominator;
  let twos = 0;
  let fives = 0;
  while (rest % 2n === 0n) {
    rest /= 2n;
    twos++;
  }
  while (rest % 5n === 0n) {
    rest /= 5n;
    fives++;
  }
  const places = Math.max(twos, fives);
  if (rest !== 1n || places > 12) return value.toString();
  const scaled = (value.numerator * 10n ** BigInt(places)) / value.denominator;
  const negative = scaled < 0n;
  const digits = (negative ? -scaled : scaled).toString().padStart(places + 1, "0");
  return `${negative ? "-" : ""}${digits.slice(0, -places)}.${digits.slice(-places)}`;
}
