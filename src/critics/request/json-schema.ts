import type { Check } from "../../core/types.js";
import { lastJsonFence } from "../../tasks/json/extract-json.js";
import { parseJson, type JsonProblem } from "../../util/parse-json.js";
import type { RequestCheck } from "./request-check.js";
import { compileRequestSchema } from "./request-schemas.js";

const FIELD = "response_format.json_schema.schema";

/**
 * `response_format: { type: "json_schema", json_schema: { name, schema } }`: the reply must be JSON valid against
 * `schema`. The JSON is the whole reply (trimmed) when that parses; else the last ```` ```json ```` block; nothing else
 * (no JSON fished out of prose: a structured-output client parses the whole content). The feedback says where the
 * JSON was read, a syntax error's line and column, or up to five violations with their JSONPath and rule, e.g.
 * `$.items[2].price: must be >= 0 (minimum)`. A validation stopped by its time limit is "cannot judge".
 *
 * Throws RequestFieldError (field `response_format.json_schema.schema`) when the schema does not compile.
 */
export function jsonSchemaCheck(schema: unknown, name?: string): RequestCheck {
  const validate = compileRequestSchema(schema, FIELD);
  const named = typeof name !== "string" || name === "" ? "the schema" : `the schema ${JSON.stringify(name.slice(0, 64))}`;
  const result = (pass: boolean | null, feedback: string): Check => ({ source: "schema", pass, score: pass === true ? 1 : 0, feedback });
  const vacuous = acceptsEverything(schema) ? `${named} constrains nothing (${JSON.stringify(schema).slice(0, 80)}), so any JSON passes it` : undefined;
  return {
    source: "schema",
    name: "schema",
    ...(vacuous === undefined ? {} : { vacuous }),
    run(reply): Check {
      let where = "the reply";
      let parsed = parseJson(reply.text.trim());
      if (!parsed.ok) {
        const fenced = lastJsonFence(reply.text);
        if (fenced === null) return result(false, `The reply is not JSON: ${describeProblem(parsed.problem)} Reply with the JSON value only, valid against ${named}.`);
        where = "the ```json block";
        parsed = parseJson(fenced.trim());
        if (!parsed.ok) return result(false, `The JSON in ${where} does not parse: ${describeProblem(parsed.problem)} Reply with the JSON value only, valid against ${named}.`);
      }
      const outcome = validate(parsed.value);
      if (outcome.valid === null) return result(null, `Cannot judge: ${outcome.reason}.`);
      if (outcome.valid) return result(true, `The JSON in ${where} is valid against ${named}.`);
      const count = outcome.count === 1 ? "1 violation" : `${outcome.count} violations`;
      return result(false, `The JSON in ${where} does not match ${named} (${count}):\n${outcome.violations}`);
    },
  };
}

/**
 * Keywords that describe a schema without constraining a value (JSON Schema's annotations, identifiers and
 * containers of definitions): a schema made only of these accepts every value.
 */
const ANNOTATIONS = new Set(["$schema", "$id", "id", "$comment", "$anchor", "$dynamicAnchor", "$vocabulary", "$defs", "definitions", "title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly", "contentMediaType", "contentEncoding"]);

/**
 * Whether a (compiled, so well-formed) schema accepts every value: `true`, `{}`, or an object of annotation keywords
 * only. Decided on the keywords, not by probing values: a schema with any other keyword (`type`, `properties`,
 * `format`, `not`, `$ref`, …) is taken as one that can fail.
 */
export function acceptsEverything(schema: unknown): boolean {
  if (schema === true) return true;
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return false;
  return Object.keys(schema).every((keyword) => ANNOTATIONS.has(keyword));
}

function describeProblem(problem: JsonProblem): string {
  return `line ${problem.line}, column ${problem.column}: ${problem.message} (near ${JSON.stringify(problem.excerpt)}).`;
}
