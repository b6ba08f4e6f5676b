import type { TaskFamily } from "../task-family.js";
import type { Task } from "../task.js";
import { loadBfcl } from "./load.js";
import { bfclPrompt } from "./prompt.js";
import { parseBfclRecord } from "./record.js";
import { referenceCalls } from "./reference-calls.js";
import type { BfclRecord } from "./types.js";
import { verifyBfcl } from "./verify.js";

export { loadBfcl } from "./load.js";
export { callProblems, checkCalls, expectedCalls, findFunction, type CallsCheck, type ExpectedCall } from "./match-calls.js";
export { equalsAnswer, normalizeString, valueProblems } from "./match-value.js";
export { parseCallList, readCalls, type CallReading, type CallSource, type ParsedCall } from "./parse-calls.js";
export { bfclPrompt } from "./prompt.js";
export { formatPython, fromJson, LiteralSyntaxError, parsePythonLiteral, type PyValue } from "./python-literal.js";
export { parseBfclRecord } from "./record.js";
export type { BfclExpectedCall, BfclFunction, BfclMessage, BfclRecord, BfclSchema } from "./types.js";
export { referenceCalls, type JsonCall } from "./reference-calls.js";
export { schemaType, type SchemaType } from "./schema-type.js";
export { formatCalls, verifyBfcl } from "./verify.js";
export { parseXlamRecord, pythonType } from "./xlam.js";

export function bfclTask(): Task<BfclRecord> {
  return { name: "bfcl", prompt: bfclPrompt, verify: verifyBfcl, reference: bfclReference, parseRecord: parseBfclRecord };
}

/**
 * The ground truth as one call list in the JSON the prompt asks for (`[{"name", "arguments"}]`, `[]` for irrelevance):
 * each expected call with the first acceptable value of every parameter (`referenceCalls`). BFCL's own ground truth
 * lists every acceptable value per parameter; that map stays in the record's `ground_truth`, as a target is one answer.
 * Null when an expected call names a function the record does not offer, so no call list could be right.
 */
export function bfclReference(record: BfclRecord): string | null {
  const reference = referenceCalls(record);
  return reference === null ? null : JSON.stringify(reference.calls);
}

export const bfclFamily: TaskFamily = {
  name: "bfcl",
  description:
    "BFCL function calling (simple, multiple, parallel, parallel_multiple; v3/v4 files with possible_answer/, or APIGen/xLAM records), calls as JSON in <answer> tags, BFCL AST-checker rules",
  create: () => bfclTask() as Task<unknown>,
  defaultData: "bfcl/v4/BFCL_v4_simple_python.json",
  load: (file) => loadBfcl(file),
};
