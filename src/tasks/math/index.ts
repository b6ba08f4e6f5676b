import type { TaskFamily } from "../task-family.js";
import { loadRecords } from "../records.js";
import type { Task } from "../task.js";
import { mathPrompt } from "./prompt.js";
import { parseMathRecord, type MathRecord } from "./record.js";
import { verifyMath } from "./verify.js";
import { locateMathAnswer } from "./extract.js";

export { lastBoxed, type Boxed } from "./boxed.js";
export { extractMathAnswer, locateMathAnswer, type MathAnswerSource, type MathExtraction } from "./extract.js";
export { MAX_ANSWER_LENGTH, normalizeMathAnswer, type NormalizedAnswer } from "./normalize.js";
export { mathPrompt } from "./prompt.js";
export { parseMathRecord, type MathRecord } from "./record.js";
export { verifyMath } from "./verify.js";

export function mathTask(): Task<MathRecord> {
  return {
    name: "math",
    prompt: mathPrompt,
    verify: verifyMath,
    locateAnswer: (_record, output) => locateMathAnswer(output),
    // The gold final answer in LaTeX, without `\boxed{}` (MATH-500's `answer`, or the last `\boxed{}` of the solution).
    reference: (record) => record.answer,
    parseRecord: parseMathRecord,
  };
}

/** MATH-500 rows (`answer` field) or MATH rows (answer = last `\boxed{}` of `solution`), any `readRecords` format. */
export function loadMath(file: string) {
  return loadRecords(file, parseMathRecord);
}

export const mathFamily: TaskFamily = {
  name: "math",
  answers: "values",
  description:
    "MATH competition problems (MATH-500 by default; MATH/ReflectEvo rows with the answer boxed in the solution also load), final answer in \\boxed{}, equivalence by exact normalisation",
  create: () => mathTask() as Task<unknown>,
  defaultData: "math500/test.jsonl",
  load: (file, task) => loadRecords(file, (value) => task.parseRecord(value)),
};
