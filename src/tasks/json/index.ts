import type { TaskFamily } from "../task-family.js";
import { trimmedSpan } from "../extract-answer.js";
import type { AnswerSpan, Task } from "../task.js";
import { extractJson } from "./extract-json.js";
import { generateJson } from "./generate.js";
import { loadJsonTask } from "./load.js";
import { jsonPrompt } from "./prompt.js";
import { parseJsonRecord, type JsonRecord } from "./record.js";
import { SchemaCache } from "./schema-cache.js";
import { expectedKind, verifyJson } from "./verify.js";

export { canonicalJson } from "./canonical-json.js";
export { extractJson, lastAnswerBlock, lastBalancedValue, lastJsonFence, type ExtractedJson, type JsonSource } from "./extract-json.js";
export { generateJson, generateJsonCases, JSON_CASE_KINDS, type JsonCase, type JsonCaseKind } from "./generate.js";
export { loadJsonTask } from "./load.js";
export { checkJsonSyntax, MAX_JSON_DEPTH, parseJson, type JsonProblem, type ParsedJson } from "../../util/parse-json.js";
export { jsonPrompt } from "./prompt.js";
export { parseJsonRecord, type JsonRecord, type JsonSchema } from "./record.js";
export { SchemaCache, schemaDialect, type CompiledSchema, type SchemaDialect } from "./schema-cache.js";
export { verifyJson } from "./verify.js";
export { describeViolations, MAX_LISTED_VIOLATIONS } from "./violations.js";

/**
 * Structured output as a Task: the reply's JSON must validate against the item's schema. Each task holds its own
 * validator cache (pass one to share it), so items sharing a schema compile it once.
 */
export function jsonTask(options: { schemas?: SchemaCache } = {}): Task<JsonRecord> {
  const schemas = options.schemas ?? new SchemaCache();
  return {
    name: "json",
    prompt: jsonPrompt,
    verify: (record, output) => verifyJson(record, output, schemas),
    locateAnswer: locateJsonAnswer,
    // None: an item is a schema, which any of many values satisfies, and records carry no gold value (a generated case's
    // value stays with the generator). The schema is the check, in the record, not an answer.
    reference: () => null,
    parseRecord: parseJsonRecord,
  };
}

/**
 * Where `verifyJson` reads the JSON: the text `extractJson` returns is a verbatim slice of the reply (the block's
 * content unfenced, the fence's content, the bracketed value), and the last one of its kind, so its last occurrence.
 */
export function locateJsonAnswer(record: JsonRecord, output: string): AnswerSpan | null {
  const extracted = extractJson(output, { expect: expectedKind(record) });
  if (!extracted.found) return null;
  const start = output.lastIndexOf(extracted.text);
  return start === -1 ? null : trimmedSpan(output, start, start + extracted.text.length);
}

export const jsonFamily: TaskFamily = {
  name: "json",
  description: "structured output: JSON in <answer> tags validated against the item's JSON Schema (ajv, draft-07/2020-12); seeded person/task/address/tag/reading records, or --data with {prompt, schema} rows",
  create: () => jsonTask() as Task<unknown>,
  generate: (seed, count) => generateJson({ seed, count }),
  load: (file) => loadJsonTask(file),
};
