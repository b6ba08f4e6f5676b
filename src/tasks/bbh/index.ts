import type { TaskFamily } from "../task-family.js";
import type { Task } from "../task.js";
import { loadBbh } from "./load.js";
import { bbhPrompt } from "./prompt.js";
import { parseBbhRecord, type BbhRecord } from "./record.js";
import { verifyBbh } from "./verify.js";
import { bbhKind } from "./kind.js";
import { locateBbhAnswer } from "./read-answer.js";

export { BBH_LABEL_ANOMALIES, bbhKind, canonical, normaliseText, type BbhKind } from "./kind.js";
export { loadBbh } from "./load.js";
export { JsonSyntaxError, parseLocatedJson, type LocatedJson } from "./located-json.js";
export { bbhFormat, bbhPrompt } from "./prompt.js";
export { readBbhAnswer, type BbhAnswer } from "./read-answer.js";
export { parseBbhExample, parseBbhRecord, type BbhRecord } from "./record.js";
export { verifyBbh } from "./verify.js";

/** BIG-Bench Hard as a Task: one example per item, the answer read and compared per target kind. */
export function bbhTask(): Task<BbhRecord> {
  return {
    name: "bbh",
    prompt: bbhPrompt,
    verify: verifyBbh,
    locateAnswer: (record, output) => locateBbhAnswer(bbhKind(record.task, record.target), output, record.input),
    // The example's target as BBH writes it ("(B)", "True", "valid", "] ] )"): the exact-match label of its graders.
    reference: (record) => record.target,
    parseRecord: parseBbhRecord,
  };
}

export const bbhFamily: TaskFamily = {
  name: "bbh",
  answers: "values",
  description: "BIG-Bench Hard, 27 tasks (a task file or the folder of all), exact match per target kind: letters, True/False, Yes/No, numbers, brackets, sorted words",
  create: () => bbhTask() as Task<unknown>,
  defaultData: "bbh",
  load: (file) => loadBbh(file),
};
