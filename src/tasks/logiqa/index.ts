import type { TaskFamily } from "../task-family.js";
import { locateChoice } from "../choice/extract-choice.js";
import type { Task } from "../task.js";
import { LOGIQA_LETTERS } from "./record.js";
import { loadLogiqa } from "./load.js";
import { logiqaPrompt } from "./prompt.js";
import { parseLogiqaRecord, type LogiqaRecord } from "./record.js";
import { verifyLogiqa } from "./verify.js";

export { loadLogiqa } from "./load.js";
export { normaliseOptions } from "./options.js";
export { logiqaPrompt } from "./prompt.js";
export { goldLetter, LOGIQA_LETTERS, logiqaFromLines, parseLogiqaRecord, type LogiqaRecord } from "./record.js";
export { verifyLogiqa } from "./verify.js";

/** LogiQA (English) as a Task: four-way multiple choice, the final letter read from the reply. */
export function logiqaTask(): Task<LogiqaRecord> {
  return {
    name: "logiqa",
    prompt: logiqaPrompt,
    verify: verifyLogiqa,
    locateAnswer: (record, output) => locateChoice(output, { letters: LOGIQA_LETTERS, options: record.options }),
    // The gold letter, "A"–"D", as LogiQA's graders compare it (the option texts are in the record).
    reference: (record) => record.gold,
    parseRecord: parseLogiqaRecord,
  };
}

export const logiqaFamily: TaskFamily = {
  name: "logiqa",
  answers: "values",
  description: "LogiQA logical reasoning, four options (ReflectEvo's 500-item test sample, or LogiQA's Test.txt/Eval.txt), letter in <answer> tags",
  create: () => logiqaTask() as Task<unknown>,
  defaultData: "reflectevo/logiqa_test.jsonl",
  load: (file) => loadLogiqa(file),
};
