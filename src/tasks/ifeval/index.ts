import type { TaskFamily } from "../task-family.js";
import { loadRecords } from "../records.js";
import type { Judgement, Task } from "../task.js";
import { languageDetectorLoaded, loadLanguageDetector } from "./language.js";
import { ifevalPrompt } from "./prompt.js";
import { parseIfevalRecord, type IfevalRecord } from "./record.js";
import { verifyIfeval } from "./verify.js";

export { evaluateIfeval, looseVariants, LOOSE_VARIANTS, type InstructionOutcome, type LooseVariant } from "./evaluate.js";
export type { Check, IfevalInstruction, InstructionId, InstructionOf, InstructionSpec } from "./instruction.js";
export { checkInstruction, INSTRUCTION_IDS, INSTRUCTION_SPECS, isInstructionId, parseInstruction } from "./instructions.js";
export { detectLanguage, languageDetectorLoaded, languageName, LANGUAGE_NAMES, loadLanguageDetector, type LanguageGuess } from "./language.js";
export { ifevalMetrics, type IfevalMetrics, type InstructionTally } from "./metrics.js";
export { ifevalPrompt } from "./prompt.js";
export { instructionsOf, parseIfevalRecord, type IfevalRecord } from "./record.js";
export type { Relation } from "./relation.js";
export { countSentences, splitSentences } from "./sentences.js";
export { verifyIfeval } from "./verify.js";
export { countWords, wordTokens } from "./words.js";

/** IFEval's task; its `verify` is synchronous once the language identifier is loaded (the first call loads it). */
export function ifevalTask(): Task<IfevalRecord, Judgement> {
  return {
    name: "ifeval",
    prompt: ifevalPrompt,
    verify: (record, output) => (languageDetectorLoaded() ? verifyIfeval(record, output) : loadLanguageDetector().then(() => verifyIfeval(record, output))),
    // None: IFEval ships no gold responses, and its instructions are checks on a reply, already in the prompt and the
    // record (`instruction_id_list`, `kwargs`); lm-eval's IFEval target is empty too.
    reference: () => null,
    parseRecord: parseIfevalRecord,
  };
}

/** IFEval rows from any format `readRecords` reads; ids `<file name>:<line>`. */
export function loadIfeval(file: string) {
  return loadRecords(file, parseIfevalRecord);
}

export const ifevalFamily: TaskFamily = {
  name: "ifeval",
  description: "IFEval verifiable instructions (541 prompts, 25 instruction types): strict prompt-level correctness, strict instruction-level score, loose results alongside",
  create: () => ifevalTask() as Task<unknown>,
  defaultData: "ifeval/input_data.jsonl",
  load: (file, task) => loadRecords(file, (value) => task.parseRecord(value)),
};
