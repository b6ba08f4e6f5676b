import type { Rational } from "../countdown/rational.js";
import { extractAnswer, locateAnswerBlock, trimmedSpan } from "../extract-answer.js";
import type { AnswerSpan } from "../task.js";
import { firstNumberIn, lastNumberIn, parseAnswerNumber, type NumberInText } from "./number.js";

/** Where the final answer was read, in order of preference. */
export type Gsm8kAnswerSource = "answer-block" | "hashes" | "answer-is" | "last-number";

export const SOURCE_NAMES: Record<Gsm8kAnswerSource, string> = {
  "answer-block": "the answer block",
  hashes: "the text after the last ####",
  "answer-is": 'the sentence "the answer is …"',
  "last-number": "the last number in the reply",
};

export type Gsm8kExtraction =
  | { found: true; source: Gsm8kAnswerSource; value: Rational; /** Where it was read: the answer block's content, or the number. */ span: AnswerSpan | null }
  | { found: false; reason: "not-a-number" | "unclosed-boxed" | "no-number"; shown?: string };

/** How much of the reply after a marker is read as its answer. */
const LINE_LIMIT = 300;

/**
 * The reply's final number: the last `<answer>` block (the whole block as one number, e.g. `$1,234.50`, `3/4`,
 * `18 dollars`, else its last number); else the number after the last `####` (GSM8K's own format); else the
 * number after the last "the answer is" / "answer:"; else the last number anywhere. An unterminated final block
 * (a reply cut off) falls through to the later rules. Linear in the length of the reply.
 */
export function extractGsm8kAnswer(output: string): Gsm8kExtraction {
  const block = extractAnswer(output);
  if (block.found) {
    const value = parseAnswerNumber(block.text.trim()) ?? lastNumberIn(block.text)?.value;
    if (value !== undefined) return { found: true, source: "answer-block", value, span: locateAnswerBlock(output) };
    return { found: false, reason: "not-a-number", shown: clip(block.text.trim()) };
  }
  if (block.reason === "unclosed-boxed") return { found: false, reason: "unclosed-boxed" };
  const hashes = output.lastIndexOf("####");
  if (hashes !== -1) {
    const read = numberAt(output, hashes + 4);
    if (read !== null) return { found: true, source: "hashes", ...read };
  }
  const lower = output.toLowerCase();
  const phrase = Math.max(after(lower, "answer is"), after(lower, "answer:"));
  if (phrase !== -1) {
    const read = numberAt(output, phrase);
    if (read !== null) return { found: true, source: "answer-is", ...read };
  }
  const last = lastNumberIn(output);
  if (last !== null) return { found: true, source: "last-number", value: last.value, span: numberSpan(output, 0, last) };
  return { found: false, reason: "no-number" };
}

/** The number on the line of `output` from `start`: the whole rest of the line as one number, else its first number. */
function numberAt(output: string, start: number): { value: Rational; span: AnswerSpan | null } | null {
  const line = lineAfter(output, start);
  const lead = line.length - line.replace(/^[\s:*]+/u, "").length;
  const rest = line.slice(lead);
  const whole = parseAnswerNumber(rest.trim());
  const first = firstNumberIn(rest);
  // "18 dollars." reads as one number: its span is the number's digits when they hold the same value.
  if (whole !== null) return { value: whole, span: first !== null && first.value.equals(whole) ? numberSpan(output, start + lead, first) : trimmedSpan(output, start + lead, start + line.length) };
  return first === null ? null : { value: first.value, span: numberSpan(output, start + lead, first) };
}

/** The characters of a number found in `output` from `offset`: its digits as written, with a minus sign read as one. */
function numberSpan(output: string, offset: number, number: NumberInText): AnswerSpan | null {
  const negative = number.text.startsWith("-");
  const digits = negative ? number.text.slice(1) : number.text;
  const at = output.indexOf(digits, offset + number.index);
  return at === -1 ? null : { start: negative ? offset + number.index : at, end: at + digits.length };
}

/** The index just past the last occurrence of `needle`, or -1. */
function after(text: string, needle: string): number {
  const index = text.lastIndexOf(needle);
  return index === -1 ? -1 : index + needle.length;
}

function lineAfter(text: string, start: number): string {
  const end = text.indexOf("\n", start);
  return text.slice(start, Math.min(end === -1 ? text.length : end, start + LINE_LIMIT));
}

export function clip(text: string, limit = 40): string {
  return text.length > limit ? `${text.slice(0, limit)}…` : text;
}
