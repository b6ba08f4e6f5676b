import type { Verdict } from "../task.js";
import { canonicalJson } from "./canonical-json.js";
import { extractJson, type JsonSource } from "./extract-json.js";
import { parseJson } from "../../util/parse-json.js";
import type { JsonRecord } from "./record.js";
import { clip, type SchemaCache } from "./schema-cache.js";
import { describeViolations } from "./violations.js";

const WHERE: Record<JsonSource, string> = {
  "answer-block": "the answer block",
  "fenced-block": "the ```json block",
  prose: "the reply",
};

/**
 * Judges a reply against the item's schema: the JSON is found (see extractJson), parsed strictly (a syntax error is
 * reported with its line and column within the extracted text) and validated; score 1 when valid, else 0. `answer`
 * is the canonical JSON of the parsed value (sorted keys, no spaces), or null when nothing parsed.
 *
 * A schema that does not compile, or a validator that fails, gives `correct: null` ("cannot judge"): the item is at
 * fault, and a run must go on. Never throws; linear in the reply apart from the schema's own keywords (a `pattern`
 * that backtracks catastrophically is the item author's to fix).
 */
export function verifyJson(record: JsonRecord, output: string, schemas: Pick<SchemaCache, "get">): Verdict {
  const extracted = extractJson(output, { expect: expectedKind(record) });
  const compiled = schemas.get(record.schema);
  if (!extracted.found) {
    if (!compiled.ok) return cannotJudge(compiled.problem, null);
    const feedback =
      extracted.reason === "unterminated-block"
        ? "The last <answer> block is never closed: write the JSON, then </answer>."
        : "No JSON found in the reply: write the JSON value, and nothing else, inside <answer></answer>.";
    return { correct: false, score: 0, answer: null, feedback };
  }
  const where = WHERE[extracted.source];
  const parsed = parseJson(extracted.text);
  if (!parsed.ok) {
    if (!compiled.ok) return cannotJudge(compiled.problem, null);
    const { line, column, message, excerpt } = parsed.problem;
    return {
      correct: false,
      score: 0,
      answer: null,
      feedback: `The JSON in ${where} does not parse: line ${line}, column ${column}: ${message}.\nThe line there: ${JSON.stringify(excerpt)}`,
    };
  }
  const answer = canonicalJson(parsed.value);
  if (!compiled.ok) return cannotJudge(compiled.problem, answer);
  let errors;
  try {
    errors = compiled.validate(parsed.value);
  } catch (error) {
    return cannotJudge(`the validator failed on this value (${clip((error as Error)?.message ?? String(error), 200)})`, answer);
  }
  if (errors.length === 0) return { correct: true, score: 1, answer, feedback: `The JSON in ${where} is valid against the schema.` };
  const count = errors.length === 1 ? "1 violation" : `${errors.length} violations`;
  return { correct: false, score: 0, answer, feedback: `The JSON in ${where} does not match the schema (${count}):\n${describeViolations(errors)}` };
}

/** "object" or "array" when the schema's top-level `type` says so: which prose candidate to prefer. */
export function expectedKind(record: JsonRecord): "object" | "array" | undefined {
  const type = typeof record.schema === "object" ? record.schema.type : undefined;
  return type === "object" || type === "array" ? type : undefined;
}

function cannotJudge(problem: string, answer: string | null): Verdict {
  return { correct: null, answer, feedback: `Cannot judge: ${problem}. The item's schema is at fault, not the reply.` };
}
