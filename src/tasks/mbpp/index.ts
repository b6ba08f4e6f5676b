import type { TaskFamily } from "../task-family.js";
import { loadRecords } from "../records.js";
import type { Task, Verdict } from "../task.js";
import { mbppPrompt } from "./prompt.js";
import { parseMbppRecord, type MbppRecord } from "./record.js";
import { verifyMbpp, type MbppVerifyOptions } from "./verify.js";

export { mbppPrompt } from "./prompt.js";
export { parseMbppRecord, type MbppRecord } from "./record.js";
export { mbppSpec, verifyMbpp, type MbppVerifyOptions } from "./verify.js";

/** MBPP as a Task: write a Python function; graded by running the asserts in the sandbox. */
export function mbppTask(options: MbppVerifyOptions = {}): Task<MbppRecord, Promise<Verdict>> {
  return {
    name: "mbpp",
    prompt: mbppPrompt,
    verify: (record, output) => verifyMbpp(record, output, options),
    // The first test, the one the prompt shows; the others stay hidden, for scoring.
    shownCheck: (record, output) => (record.tests.length === 0 ? null : verifyMbpp(record, output, { ...options, shownOnly: true })),
    // The reference solution (`code`), which passes the asserts, when the release has it; else null. Not the asserts
    // themselves (lm-eval's target for MBPP): they judge an answer rather than give one, and they are in the record.
    reference: (record) => record.code ?? null,
    parseRecord: parseMbppRecord,
  };
}

/** MBPP rows from `mbpp.jsonl`, `sanitized-mbpp.json` or ReflectEvo's `mbpp_test.jsonl`; ids `<file name>:<line or record>`. */
export function loadMbpp(file: string) {
  return loadRecords(file, parseMbppRecord);
}

export const mbppFamily: TaskFamily = {
  verifier: "sandbox",
  scorer: "every test of the item, the hidden ones included",
  name: "mbpp",
  answers: "programs",
  description: "MBPP Python problems (ReflectEvo's 500-item test split, task ids 11–510, by default); the prompt shows one test, grading runs every assert in a bubblewrap sandbox",
  create: () => mbppTask() as Task<unknown, Promise<Verdict>>,
  defaultData: "reflectevo/mbpp_test.jsonl",
  load: (file, task) => loadRecords(file, (value) => task.parseRecord(value)),
};
