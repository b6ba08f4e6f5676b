import type { CodeJudgeOptions } from "../code/judge.js";
import type { TaskFamily } from "../task-family.js";
import { loadRecords } from "../records.js";
import type { Task, Verdict } from "../task.js";
import { humanevalPrompt } from "./prompt.js";
import { parseHumanevalRecord, type HumanevalRecord } from "./record.js";
import { shownHumanevalCheck, verifyHumaneval } from "./verify.js";

export { definesEntryPoint, humanevalProgram, type CompletionMode, type HumanevalProgram } from "./program.js";
export { humanevalPrompt } from "./prompt.js";
export { parseHumanevalRecord, type HumanevalRecord } from "./record.js";
export { humanevalExamples } from "./examples.js";
export { humanevalSpec, shownHumanevalCheck, verifyHumaneval } from "./verify.js";

/** HumanEval as a Task: complete a function; graded by its `check` in the sandbox. */
export function humanevalTask(options: CodeJudgeOptions = {}): Task<HumanevalRecord, Promise<Verdict>> {
  return {
    name: "humaneval",
    prompt: humanevalPrompt,
    verify: (record, output) => verifyHumaneval(record, output, options),
    // The docstring's examples, the only tests the prompt shows; the hidden `check` only scores.
    shownCheck: (record, output) => shownHumanevalCheck(record, output, options),
    // The canonical solution (the body that continues `prompt`, as Inspect's HumanEval target), when the record has it;
    // else null. Not the `check` code: it judges an answer rather than gives one, and it is in the record.
    reference: (record) => record.canonicalSolution ?? null,
    parseRecord: parseHumanevalRecord,
  };
}

/** HumanEval rows (`HumanEval.jsonl.gz` or any format `readRecords` reads); ids `<file name>:<line>`. */
export function loadHumaneval(file: string) {
  return loadRecords(file, parseHumanevalRecord);
}

export const humanevalFamily: TaskFamily = {
  verifier: "sandbox",
  scorer: "the hidden tests (check(entry_point))",
  name: "humaneval",
  answers: "programs",
  description: "HumanEval (164 Python functions to complete from a signature and docstring), graded by the hidden check() in a bubblewrap sandbox",
  create: () => humanevalTask() as Task<unknown, Promise<Verdict>>,
  defaultData: "humaneval/HumanEval.jsonl.gz",
  load: (file, task) => loadRecords(file, (value) => task.parseRecord(value)),
};
