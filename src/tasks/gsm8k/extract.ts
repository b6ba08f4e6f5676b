import type { Rational } from "../countdown/rational.js";
import { extractAnswer } from "../extract-answer.js";
import { firstNumberIn, lastNumberIn, parseAnswerNumber } from "./number.js";

/** Where the final answer was read, in order of preference. */
export type Gsm8kAnswerSource = "answer-block" | "hashes" | "answer-is" | "last-number";

export const SOURCE_NAMES: Record<Gsm8kAnswerSource, string> = {
  "answer-block": "the answer block",
  hashes: "the text after the last ####",
  "answer-is": 'the sentence "the answer is …"',
  "last-number": "the last number in the reply",
};

export type Gsm8kExtraction =
  | { found: true; source: Gsm8kAnswerSource; value: Rational }
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
    if (value !== undefined) return { found: true, source: "answer-block", value };
    return { found: false, reason: "not-a-number", shown: clip(block.text.trim()) };
  }
  if (block.reason === "unclosed-boxed") return { found: false, reason: "unclosed-boxed" };
  const hashes = output.lastIndexOf("####");
  if (hashes !== -1) {
    const value = numberAt(lineAfter(output, hashes + 4));
    if (value !== null) return { found: true, source: "hashes", value };
  }
  const lower = output.toLowerCase();
  const phrase = Math.max(after(lower, "answer is"), after(lower, "answer:"));
  if (phrase !== -1) {
    const value = numberAt(lineAfter(output, phrase));
    if (value !== null) return { found: true, source: "answer-is", value };
  }
  const last = lastNumberIn(output);
  if (last !== null) return { found: true, source: "last-number", value: last.value };
  return { found: false, reason: "no-number" };
}

function numberAt(text: string): Rational | null {
  const rest = text.replace(/^[\s:*]+/u, "");
  return parseAnswerNumber(rest.trim()) ?? firstNumberIn(rest)?.value ?? null;
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
