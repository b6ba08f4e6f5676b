import type { ErrorObject } from "ajv";
import { RequestFieldError } from "../../errors.js";
import { SchemaCache } from "../../tasks/json/schema-cache.js";
import { describeViolations, jsonPath } from "../../tasks/json/violations.js";
import { runWithin } from "./time-limit.js";

/**
 * The compiled schemas of requests (`response_format` schemas and tool parameter schemas), shared by every request
 * of the thread (each check worker has its own): an application sends the same few schemas with every call, so each
 * compiles once. The json task's SchemaCache (ajv, `allErrors`, draft-07/2019-09/2020-12 by `$schema`, formats),
 * bounded to the 256 most recent and to {@link REQUEST_SCHEMA_CACHE_BYTES} of estimated size.
 */
export const REQUEST_SCHEMA_CACHE_BYTES = 32 * 1024 * 1024;
export const requestSchemas = new SchemaCache({ maxEntries: 256, maxBytes: REQUEST_SCHEMA_CACHE_BYTES });

/** Wall time one validation may take before it is stopped: a client's schema may carry a catastrophic `pattern`. */
export const VALIDATION_TIMEOUT_MS = 100;

/** How many violations a request check's feedback lists before "… and N more". */
export const MAX_REQUEST_VIOLATIONS = 5;

export type Validator = (value: unknown) => ValidationOutcome;

export type ValidationOutcome = { valid: true } | { valid: false; count: number; violations: string } | { valid: null; reason: string };

/**
 * The validator of a request's schema, or a RequestFieldError naming `field` when the schema does not compile (or is
 * no JSON Schema at all). A schema with a `pattern` validates under a {@link VALIDATION_TIMEOUT_MS} watchdog
 * (time-limit.ts). Violations are listed with JSONPath locations (`$.items[2].price: must be >= 0 (minimum)`).
 */
export function compileRequestSchema(schema: unknown, field: string, schemas: Pick<SchemaCache, "get"> = requestSchemas): Validator {
  const compiled = schemas.get(schema);
  if (!compiled.ok) throw new RequestFieldError(field, compiled.problem);
  // Only a client's own regexes (`pattern`, `patternProperties`) can make ajv take exponential time; everything else
  // it checks is polynomial in a body the server has already bounded. The watchdog costs about 0.1 ms a run, so a
  // schema without them validates directly. (A property merely named "pattern…" only costs the watchdog.)
  const guarded = (JSON.stringify(schema) ?? "").includes('"pattern');
  const check = (value: unknown): readonly ErrorObject[] => compiled.validate(value);
  return (value) => {
    let run;
    try {
      run = guarded ? runWithin(() => check(value), VALIDATION_TIMEOUT_MS) : { done: true as const, value: check(value) };
    } catch (error) {
      return { valid: null, reason: `the validator failed on this value (${(error as Error)?.message ?? String(error)})` };
    }
    if (!run.done) return { valid: null, reason: `validating took longer than ${run.timeoutMs} ms and was stopped (a "pattern" in the schema backtracks too much)` };
    const errors: readonly ErrorObject[] = run.value;
    if (errors.length === 0) return { valid: true };
    return { valid: false, count: errors.length, violations: describeViolations(errors, MAX_REQUEST_VIOLATIONS, jsonPath) };
  };
}
