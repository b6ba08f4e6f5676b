import { parseAnswerNumber } from "./number.js";

/**
 * A GSM8K problem. `answer` is the gold final answer as written after `####` (e.g. `18`, `2,125`); `solution` is the
 * worked solution before it, with the calculator annotations `<<48/2=24>>` left in, when the source had one.
 */
export interface Gsm8kRecord {
  question: string;
  answer: string;
  solution?: string;
}

/**
 * Validates a GSM8K row `{question, answer}` where `answer` is the worked solution ending `#### <final answer>`
 * (the text after the last `####` is the gold), or already just the final answer (a string or a number), as this
 * function's own output and some Hugging Face copies have it.
 */
export function parseGsm8kRecord(value: unknown): Gsm8kRecord {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Error("a GSM8K record must be an object {question, answer}");
  const v = value as { question?: unknown; answer?: unknown; solution?: unknown };
  if (typeof v.question !== "string" || v.question.trim() === "") throw new Error('field "question" must be a non-empty string');
  if (typeof v.answer === "number" && Number.isFinite(v.answer)) return { question: v.question, answer: String(v.answer) };
  if (typeof v.answer !== "string") throw new Error('field "answer" must be a string ("… #### 18") or a number');
  const marker = v.answer.lastIndexOf("####");
  const answer = (marker === -1 ? v.answer : v.answer.slice(marker + 4)).trim();
  if (answer === "") throw new Error(marker === -1 ? 'field "answer" is empty' : 'nothing follows "####" in field "answer"');
  if (parseAnswerNumber(answer) === null) throw new Error(`the gold answer "${answer.slice(0, 60)}" is not a number`);
  const solution = marker === -1 ? v.solution : v.answer.slice(0, marker).trim();
  return typeof solution === "string" && solution !== "" ? { question: v.question, answer, solution } : { question: v.question, answer };
}
