import type { Verdict } from "../task.js";
import { clip, extractGsm8kAnswer, SOURCE_NAMES } from "./extract.js";
import { formatNumber, parseAnswerNumber } from "./number.js";
import type { Gsm8kRecord } from "./record.js";

const ASK = "End with the final answer, a single number, inside <answer></answer> tags.";

/**
 * Exact comparison of the reply's final number with the gold (thousands commas, `$`, units and `72.0` vs `72`
 * do not matter; see `extractGsm8kAnswer` for where the number is read). The feedback says where the answer was
 * read and what it was, never the gold answer nor whether the answer is too large or too small, so that a loop
 * passing feedback back to the model cannot leak the solution into the next attempt.
 */
export function verifyGsm8k(record: Gsm8kRecord, output: string): Verdict {
  const gold = parseAnswerNumber(record.answer);
  if (gold === null) return { correct: null, answer: null, feedback: "Cannot judge: the record's gold answer is not a number." };
  const extracted = extractGsm8kAnswer(output);
  if (!extracted.found) {
    switch (extracted.reason) {
      case "not-a-number":
        return { correct: false, score: 0, answer: extracted.shown ?? null, feedback: `The answer block holds "${extracted.shown ?? ""}", which is not a number. ${ASK}` };
      case "unclosed-boxed":
        return { correct: false, score: 0, answer: null, feedback: `The answer block has a \\boxed{ that is never closed. ${ASK}` };
      case "no-number":
        return { correct: false, score: 0, answer: null, feedback: `No final answer found: the reply has no answer block and no number. ${ASK}` };
    }
  }
  const shown = clip(formatNumber(extracted.value));
  const where = SOURCE_NAMES[extracted.source];
  if (extracted.value.equals(gold)) return { correct: true, score: 1, answer: shown, feedback: `Correct: the final answer read from ${where} is ${shown}.` };
  const hint = extracted.source === "answer-block" ? "" : ` ${ASK}`;
  return { correct: false, score: 0, answer: shown, feedback: `The final answer read from ${where} is ${shown}, but it is wrong.${hint}` };
}
