import type { Verdict } from "../task.js";
import { extractMathAnswer, SOURCE_NAMES } from "./extract.js";
import { normalizeMathAnswer } from "./normalize.js";
import type { MathRecord } from "./record.js";

const ASK = "Put the final answer in \\boxed{}.";

/**
 * Equivalence of the reply's final answer with the gold, decided by `normalizeMathAnswer` on both sides and exact
 * comparison of the results. Where the normaliser cannot read an answer it compares cleaned-up text, and a mismatch
 * is `correct: false` with feedback saying so. Digits split by spacing (`\boxed{4 2}`) are refused as ambiguous, as
 * Math-Verify refuses them, whatever the gold. The feedback shows the model's own (normalised) answer and where it
 * was read, never the gold answer, so a feedback loop cannot leak it.
 */
export function verifyMath(record: MathRecord, output: string): Verdict {
  const gold = normalizeMathAnswer(record.answer);
  if (gold.key === "") return { correct: null, answer: null, feedback: "Cannot judge: the record's gold answer is empty." };
  if (gold.splitDigits !== null) return { correct: null, answer: null, feedback: "Cannot judge: the record's gold answer has digits split by a space, which is ambiguous (one number, or a product?)." };
  const extracted = extractMathAnswer(output);
  if (!extracted.found) {
    const feedback =
      extracted.reason === "unclosed-boxed"
        ? `The last \\boxed{ is never closed, so there is no final answer. ${ASK}`
        : `No final answer found: the reply has no \\boxed{}, no answer block and no "the answer is". ${ASK}`;
    return { correct: false, score: 0, answer: null, feedback };
  }
  const where = SOURCE_NAMES[extracted.source];
  const predicted = normalizeMathAnswer(extracted.text);
  if (predicted.key === "") return { correct: false, score: 0, answer: null, feedback: `The answer read from ${where} is empty. ${ASK}` };
  if (predicted.splitDigits !== null) {
    const feedback = `The answer read from ${where} has digits split by a space ("${clip(predicted.splitDigits, 40)}"), which is ambiguous: one number, or a product? Write a number without spaces (thousands as 1,234 or 1{,}234) and a product with \\cdot.`;
    return { correct: false, score: 0, answer: clip(predicted.key, 200), feedback };
  }
  const shown = clip(predicted.key, 80);
  if (predicted.key === gold.key) return { correct: true, score: 1, answer: predicted.key, feedback: `Correct: the answer read from ${where} is ${shown}.` };
  const feedback = predicted.parsed
    ? `The answer read from ${where} is ${shown}, which does not match the expected answer.`
    : `The answer read from ${where}, "${clip(extracted.text.trim(), 80)}", could not be fully read as mathematics; as written it does not match the expected answer.`;
  return { correct: false, score: 0, answer: clip(predicted.key, 200), feedback };
}

function clip(text: string, limit: number): string {
  return text.length > limit ? `${text.slice(0, limit)}…` : text;
}
