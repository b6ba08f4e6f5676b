import type { TaskFamily } from "../task-family.js";
import { locateChoice } from "../choice/extract-choice.js";
import type { AnswerSpan, Task } from "../task.js";
import { locateFreeAnswer } from "./read-answer.js";
import { bigbenchOptions } from "./record.js";
import { loadReflectevoBigbench } from "./load.js";
import { reflectevoBigbenchPrompt } from "./prompt.js";
import { parseReflectevoBigbenchRecord, type ReflectevoBigbenchRecord } from "./record.js";
import { verifyReflectevoBigbench } from "./verify.js";

export { loadReflectevoBigbench } from "./load.js";
export { reflectevoBigbenchPrompt } from "./prompt.js";
export { readFreeAnswer } from "./read-answer.js";
export { bigbenchOptions, parseReflectevoBigbenchRecord, type ReflectevoBigbenchRecord } from "./record.js";
export { bestScores, exactMatch, squadNormalise, tokenF1 } from "./squad.js";
export { verifyReflectevoBigbench } from "./verify.js";

/** ReflectEvo's 500-item BIG-bench test sample as a Task: SQuAD exact match and F1, or the letter for choice items. */
export function reflectevoBigbenchTask(): Task<ReflectevoBigbenchRecord> {
  return {
    name: "reflectevo-bigbench",
    prompt: reflectevoBigbenchPrompt,
    verify: verifyReflectevoBigbench,
    locateAnswer: locateReflectevoAnswer,
    // The first acceptable answer (the source's one `answer`; the gold letter of a choice item). Any other accepted
    // answers stay in the record's `answers`: a target is one string.
    reference: (record) => record.answers[0] ?? null,
    parseRecord: parseReflectevoBigbenchRecord,
  };
}

/** As `verifyReflectevoBigbench` reads it: the choice for lettered items, else the free answer. */
function locateReflectevoAnswer(record: ReflectevoBigbenchRecord, output: string): AnswerSpan | null {
  const options = bigbenchOptions(record);
  return options === null ? locateFreeAnswer(output) : locateChoice(output, { letters: options.letters, options: options.texts });
}

export const reflectevoBigbenchFamily: TaskFamily = {
  name: "reflectevo-bigbench",
  answers: "values",
  description: "ReflectEvo's BIG-bench test sample (500 items): free-text answers by SQuAD exact match with token F1 as score; lettered items by choice",
  create: () => reflectevoBigbenchTask() as Task<unknown>,
  defaultData: "reflectevo/bigbench_test.jsonl",
  load: (file) => loadReflectevoBigbench(file),
};
