import { extractChoice } from "../choice/extract-choice.js";
import type { Verdict } from "../task.js";
import { readFreeAnswer } from "./read-answer.js";
import { bigbenchOptions, type ReflectevoBigbenchRecord } from "./record.js";
import { bestScores } from "./squad.js";

/**
 * Free-text items: SQuAD exact match (after normalisation) against any reference is `correct`, the best token F1
 * is `score`; the feedback reports the F1 and never the reference. Choice items (see bigbenchOptions) are judged
 * by letter, score 1 or 0. ReflectEvo itself scores this file by case-insensitive exact match of `Finish[…]`
 * with no normalisation; SQuAD normalisation is reflectkit's choice, as ReflectEvo's free-text variant uses.
 */
export function verifyReflectevoBigbench(record: ReflectevoBigbenchRecord, output: string): Verdict {
  const options = bigbenchOptions(record);
  if (options !== null) {
    const choice = extractChoice(output, { letters: options.letters, options: options.texts });
    if (choice.letter === null) {
      return { correct: false, score: 0, answer: null, feedback: `No choice found: ${choice.reason}. Give one letter inside <answer></answer>.` };
    }
    const correct = record.answers.some((answer) => answer.trim().toUpperCase() === choice.letter);
    return { correct, score: correct ? 1 : 0, answer: choice.letter, feedback: `You chose (${choice.letter}), which is ${correct ? "correct" : "wrong"}.` };
  }
  const answer = readFreeAnswer(output);
  if (answer === null) {
    return { correct: false, score: 0, answer: null, feedback: "No answer found: the reply is empty. Give a short answer inside <answer></answer>." };
  }
  const { exact, f1 } = bestScores(answer, record.answers);
  const shown = answer.length > 80 ? `${answer.slice(0, 80)}…` : answer;
  const feedback = exact
    ? `Your answer "${shown}" matches the reference exactly (after normalisation).`
    : `Your answer "${shown}" is not an exact match for the reference; token F1 ${f1.toFixed(2)}.${f1 > 0 ? " Part of it overlaps: keep the answer short and precise." : ""}`;
  return { correct: exact, score: exact ? 1 : f1, answer, feedback };
}
