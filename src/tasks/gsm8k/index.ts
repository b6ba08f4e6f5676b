import type { TaskFamily } from "../task-family.js";
import { loadRecords } from "../records.js";
import type { Task } from "../task.js";
import { gsm8kPrompt } from "./prompt.js";
import { parseGsm8kRecord, type Gsm8kRecord } from "./record.js";
import { verifyGsm8k } from "./verify.js";
import { extractGsm8kAnswer } from "./extract.js";

export { extractGsm8kAnswer, type Gsm8kAnswerSource, type Gsm8kExtraction } from "./extract.js";
export { firstNumberIn, formatNumber, lastNumberIn, numbersIn, parseAnswerNumber } from "./number.js";
export { gsm8kPrompt } from "./prompt.js";
export { parseGsm8kRecord, type Gsm8kRecord } from "./record.js";
export { verifyGsm8k } from "./verify.js";

export function gsm8kTask(): Task<Gsm8kRecord> {
  return {
    name: "gsm8k",
    prompt: gsm8kPrompt,
    verify: verifyGsm8k,
    locateAnswer: (_record, output) => locateGsm8kAnswer(output),
    // The gold final answer as the source writes it after `####` (`2,125`); the worked solution stays in the record.
    reference: (record) => record.answer,
    parseRecord: parseGsm8kRecord,
  };
}

/** Where `verifyGsm8k` reads the final number (see `extractGsm8kAnswer`); null when it reads none. */
export function locateGsm8kAnswer(output: string) {
  const extracted = extractGsm8kAnswer(output);
  return extracted.found ? extracted.span : null;
}

/** GSM8K rows from any format `readRecords` reads; ids `<file name>:<line>`. */
export function loadGsm8k(file: string) {
  return loadRecords(file, parseGsm8kRecord);
}

export const gsm8kFamily: TaskFamily = {
  name: "gsm8k",
  answers: "values",
  description: "GSM8K grade-school word problems (1319 test items), final number in <answer> tags, exact numeric verifier",
  create: () => gsm8kTask() as Task<unknown>,
  defaultData: "gsm8k/test.jsonl",
  load: (file, task) => loadRecords(file, (value) => task.parseRecord(value)),
};
