/**
 * The few Python `str` and `re` behaviours that IFEval's checks (google-research `instruction_following_eval`) rest
 * on, reproduced in linear time: `str.strip()` and `\s` use Python's whitespace set (which differs from JavaScript's
 * `trim()` and `\s`: Python counts U+001C–U+001F and U+0085, not U+FEFF), `\w` is Unicode letters, numbers and `_`
 * (Python's `str` patterns, where combining marks are not word characters), and `isupper()`/`islower()` follow
 * CPython's loop over the derived Uppercase/Lowercase properties and titlecase letters.
 */

/** The characters of Python's `str.isspace()`, as a regex character-class body. */
export const PY_SPACE_CLASS = "\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
/** Python's `\s` and `\S` for `str` patterns. */
export const PY_S = `[${PY_SPACE_CLASS}]`;
export const PY_NS = `[^${PY_SPACE_CLASS}]`;
/** Python's `\w` for `str` patterns: `str.isalnum()` characters and `_` (a `u`-flag class). */
export const PY_WORD = "[\\p{L}\\p{N}_]";

const SPACE_CODES = new Set<number>([
  0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x85, 0xa0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005,
  0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000,
]);

export function isPySpace(code: number): boolean {
  return SPACE_CODES.has(code);
}

/** Python's `str.strip()` with no argument. */
export function pyStrip(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && SPACE_CODES.has(text.charCodeAt(start))) start++;
  while (end > start && SPACE_CODES.has(text.charCodeAt(end - 1))) end--;
  return start === 0 && end === text.length ? text : text.slice(start, end);
}

/** Python's `str.rstrip()` length: the index just past the last non-whitespace character. */
export function pyRstripEnd(text: string, end = text.length): number {
  while (end > 0 && SPACE_CODES.has(text.charCodeAt(end - 1))) end--;
  return end;
}

/** Python's `str.strip(chars)` for a set of BMP characters. */
export function pyStripChars(text: string, chars: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && chars.includes(text.charAt(start))) start++;
  while (end > start && chars.includes(text.charAt(end - 1))) end--;
  return text.slice(start, end);
}

/** Python's `str.split()` first field: the first whitespace-delimited word, or "" when there is none. */
export function firstPyWord(text: string): string {
  let start = 0;
  while (start < text.length && SPACE_CODES.has(text.charCodeAt(start))) start++;
  let end = start;
  while (end < text.length && !SPACE_CODES.has(text.charCodeAt(end))) end++;
  return text.slice(start, end);
}

const LOWER_OR_TITLE = /[\p{Lowercase}\p{Lt}]/u;
const UPPER_OR_TITLE = /[\p{Uppercase}\p{Lt}]/u;
const UPPER = /\p{Uppercase}/u;
const LOWER = /\p{Lowercase}/u;

/** Python's `str.isupper()`: no lowercase or titlecase letter, and at least one uppercase one. */
export function isPyUpper(text: string): boolean {
  return !LOWER_OR_TITLE.test(text) && UPPER.test(text);
}

/** Python's `str.islower()`: no uppercase or titlecase letter, and at least one lowercase one. */
export function isPyLower(text: string): boolean {
  return !UPPER_OR_TITLE.test(text) && LOWER.test(text);
}

/** `re.escape` for building a JavaScript `u`-flag pattern from a literal. */
export function escapeRegExp(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/]/g, "\\$&");
}

/**
 * A short, quotable excerpt: at most `max` UTF-16 units, never splitting a surrogate pair, with `…` where cut,
 * JSON-quoted so that newlines and control characters show.
 */
export function quote(text: string, max = 60, from: "start" | "end" = "start"): string {
  if (text.length <= max) return JSON.stringify(text);
  if (from === "start") {
    let end = max;
    if (isHighSurrogate(text.charCodeAt(end - 1))) end--;
    return JSON.stringify(`${text.slice(0, end)}…`);
  }
  let start = text.length - max;
  if (isLowSurrogate(text.charCodeAt(start))) start++;
  return JSON.stringify(`…${text.slice(start)}`);
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** "1 word", "2 words". */
export function plural(count: number, singular: string, pluralForm = `${singular}s`): string {
  return `${count} ${count === 1 ? singular : pluralForm}`;
}
