import { extractAnswer, locateAnswerBlock, trimmedSpan } from "../extract-answer.js";
import type { AnswerSpan } from "../task.js";
import { lastBoxed } from "./boxed.js";

/** Where the final answer was read. */
export type MathAnswerSource = "boxed" | "answer-block" | "answer-is";

export const SOURCE_NAMES: Record<MathAnswerSource, string> = {
  boxed: "the last \\boxed{}",
  "answer-block": "the answer block",
  "answer-is": 'the sentence "the answer is …"',
};

export type MathExtraction =
  | { found: true; source: MathAnswerSource; text: string }
  | { found: false; reason: "unclosed-boxed" | "none" };

/** How much of a line after "the answer is" is read. */
const PHRASE_LIMIT = 1000;

/**
 * The final answer of a MATH reply: the last `\boxed{…}` (balanced braces), else the last `<answer>` block,
 * else what follows the last "the answer is" / "answer:" on its line (the `$…$` span there when it has one, as
 * Minerva's "The final answer is $5$. I hope it is correct." does). Linear in the length of the reply.
 */
export function extractMathAnswer(output: string): MathExtraction {
  const read = readMathAnswer(output);
  return read.found ? { found: true, source: read.source, text: read.text } : read;
}

/** Where `extractMathAnswer` reads the answer in `output` (the box's content, the block's, the `$…$` after the phrase). */
export function locateMathAnswer(output: string): AnswerSpan | null {
  const read = readMathAnswer(output);
  return read.found ? read.span : null;
}

function readMathAnswer(output: string): Exclude<MathExtraction, { found: true }> | { found: true; source: MathAnswerSource; text: string; span: AnswerSpan | null } {
  const boxed = lastBoxed(output);
  if (boxed.found) return { found: true, source: "boxed", text: boxed.content, span: trimmedSpan(output, boxed.start, boxed.start + boxed.content.length) };
  if (boxed.reason === "unclosed") return { found: false, reason: "unclosed-boxed" };
  const block = extractAnswer(output);
  if (block.found) return { found: true, source: "answer-block", text: block.text, span: locateAnswerBlock(output) };
  const lower = output.toLowerCase();
  const phrase = Math.max(after(lower, "answer is"), after(lower, "answer:"));
  if (phrase === -1) return { found: false, reason: "none" };
  const newline = output.indexOf("\n", phrase);
  const line = output.slice(phrase, Math.min(newline === -1 ? output.length : newline, phrase + PHRASE_LIMIT));
  const rest = line.replace(/^[\s:*]+/u, "");
  const restStart = phrase + line.length - rest.length;
  const math = /\$\$?([^$]+)\$/u.exec(rest) ?? /\\\((.+?)\\\)/u.exec(rest) ?? /\\\[(.+?)\\\]/u.exec(rest);
  const text = math !== null ? (math[1] as string) : rest.replace(/\*\*/g, "").replace(/[.\s]+$/u, "");
  if (text.trim() === "") return { found: false, reason: "none" };
  const start = math !== null ? restStart + math.index + math[0].indexOf(math[1] as string) : restStart;
  const end = math !== null ? start + text.length : restStart + rest.replace(/[.\s]+$/u, "").length;
  return { found: true, source: "answer-is", text, span: trimmedSpan(output, start, end) };
}

function after(text: string, needle: string): number {
  const index = text.lastIndexOf(needle);
  return index === -1 ? -1 : index + needle.length;
}
