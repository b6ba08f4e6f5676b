import { extractChoice } from "../choice/extract-choice.js";
import type { Verdict } from "../task.js";
import { LOGIQA_LETTERS, type LogiqaRecord } from "./record.js";

/**
 * Reads the final choice (see extractChoice: answer block, then answer phrase, then a bare letter at the end; an
 * option's exact text in the block also counts) and compares it with the gold letter. The feedback names the
 * chosen letter and never the gold one. Always judges: a reply with no readable choice is wrong, not unjudgeable.
 */
export function verifyLogiqa(record: LogiqaRecord, output: string): Verdict {
  const choice = extractChoice(output, { letters: LOGIQA_LETTERS, options: record.options });
  if (choice.letter === null) {
    return {
      correct: false,
      score: 0,
      answer: null,
      feedback: `No choice found: ${choice.reason}. Give one letter, A, B, C or D, inside <answer></answer>.`,
    };
  }
  const correct = choice.letter === record.gold;
  return {
    correct,
    score: correct ? 1 : 0,
    answer: choice.letter,
    feedback: `You chose (${choice.letter}), which is ${correct ? "correct" : "wrong"}.`,
  };
}
