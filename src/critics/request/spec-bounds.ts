import { RequestFieldError } from "../../errors.js";
import type { RequestCheckSpec } from "./request-task.js";

/**
 * How large the checks a request carries may be. Checked on the caller's thread before anything is compiled or any
 * model is called, by a walk whose cost is linear in what was already parsed: what compiling or running the checks
 * costs grows with these, so a request over one is refused with the field named, never run slowly.
 *
 * The schema limits follow OpenAI's own for structured outputs (5,000 properties in all), so a schema a hosted API
 * accepts is accepted here; measured on 2 cores, ajv compiles such a schema in about 1.6 s (in a check worker, off the
 * event loop) and keeps about 17 bytes of heap per byte of schema.
 */
export interface RequestCheckBounds {
  /** JSON characters of every schema of a request together: the `response_format` schema and the tools' parameters. */
  schemaBytes: number;
  /** Deepest nesting of objects and arrays within one schema. */
  schemaDepth: number;
  /** Property definitions (`properties`, `patternProperties`, `$defs`/`definitions` entries) across every schema. */
  schemaProperties: number;
  /** Functions offered in `tools`. */
  tools: number;
  /** Tool calls of one reply the tools check reads; a reply with more cannot be judged. */
  toolCallsChecked: number;
  /** JSON characters of `reflect.item`. */
  itemBytes: number;
  /** Deepest nesting of objects and arrays in `reflect.item`. */
  itemDepth: number;
}

export const defaultRequestCheckBounds: Readonly<RequestCheckBounds> = Object.freeze({
  schemaBytes: 256 * 1024,
  schemaDepth: 32,
  schemaProperties: 5000,
  tools: 128,
  toolCallsChecked: 64,
  itemBytes: 64 * 1024,
  itemDepth: 16,
});

/** Keywords whose object values name properties, each entry a schema of its own. */
const PROPERTY_KEYWORDS = new Set(["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"]);

/**
 * Throws RequestFieldError naming the field when `spec` is over a bound: `response_format.json_schema.schema`,
 * `tools`, `tools[i].function.parameters` or `reflect.item`. Nothing is compiled or run here.
 */
export function boundRequestSpec(spec: RequestCheckSpec, bounds: RequestCheckBounds = defaultRequestCheckBounds): void {
  const budget = { bytes: bounds.schemaBytes, properties: bounds.schemaProperties };
  if (spec.schema !== undefined && typeof spec.schema === "object" && spec.schema !== null) {
    boundSchema(spec.schema.schema, "response_format.json_schema.schema", bounds, budget);
  }
  if (Array.isArray(spec.tools)) {
    if (spec.tools.length > bounds.tools) throw new RequestFieldError("tools", `${spec.tools.length} functions; at most ${bounds.tools} are accepted`);
    for (const [i, tool] of spec.tools.entries()) {
      const parameters = (tool as { parameters?: unknown } | null)?.parameters;
      if (parameters !== undefined) boundSchema(parameters, `tools[${i}].function.parameters`, bounds, budget);
    }
  }
  if (spec.task !== undefined && typeof spec.task === "object" && spec.task !== null && spec.task.item !== undefined) {
    const { depth } = measure(spec.task.item, bounds.itemDepth);
    if (depth > bounds.itemDepth) throw new RequestFieldError("reflect.item", `is nested deeper than ${bounds.itemDepth} levels`);
    const bytes = JSON.stringify(spec.task.item)?.length ?? 0;
    if (bytes > bounds.itemBytes) throw new RequestFieldError("reflect.item", `has ${bytes} characters of JSON; at most ${bounds.itemBytes} are accepted`);
  }
}

/** Counts one schema against the request's running totals; throws naming `field` at the first bound crossed. */
function boundSchema(schema: unknown, field: string, bounds: RequestCheckBounds, budget: { bytes: number; properties: number }): void {
  const { depth, properties } = measure(schema, bounds.schemaDepth);
  if (depth > bounds.schemaDepth) throw new RequestFieldError(field, `is nested deeper than ${bounds.schemaDepth} levels`);
  budget.properties -= properties;
  if (budget.properties < 0) throw new RequestFieldError(field, `brings the request's schemas to more than ${bounds.schemaProperties} property definitions (this schema has ${properties})`);
  // Stringified only once its depth is known to be small: JSON.stringify recurses.
  const bytes = JSON.stringify(schema)?.length ?? 0;
  budget.bytes -= bytes;
  if (budget.bytes < 0) throw new RequestFieldError(field, `brings the request's schemas to more than ${bounds.schemaBytes} characters of JSON (this schema has ${bytes})`);
}

/**
 * The nesting depth of a parsed JSON value (a scalar is 0, `{}` is 1), the count of its values (every array element
 * and object member), and the count of property definitions in it; stops once past `maxDepth` or `maxNodes`.
 * Iterative, so a value nested a million deep costs no stack; three parallel arrays and `for…in` rather than an object
 * per node, as it runs on the event loop over bodies of megabytes.
 */
export function measure(value: unknown, maxDepth: number, maxNodes = Number.POSITIVE_INFINITY): { depth: number; nodes: number; properties: number } {
  let deepest = 0;
  let nodes = 0;
  let properties = 0;
  const values: unknown[] = [value];
  const depths: number[] = [0];
  const named: boolean[] = [false];
  while (values.length > 0) {
    const node = values.pop();
    const depth = depths.pop() as number;
    const counts = named.pop() as boolean;
    if (typeof node !== "object" || node === null) continue;
    const level = depth + 1;
    if (level > deepest) {
      deepest = level;
      if (level > maxDepth) return { depth: level, nodes, properties };
    }
    if (Array.isArray(node)) {
      nodes += node.length;
      if (nodes > maxNodes) return { depth: deepest, nodes, properties };
      for (let i = 0; i < node.length; i++) {
        const child: unknown = node[i];
        if (typeof child !== "object" || child === null) continue;
        values.push(child);
        depths.push(level);
        named.push(false);
      }
      continue;
    }
    const record = node as Record<string, unknown>;
    for (const key in record) {
      nodes++;
      if (counts) properties++;
      const child = record[key];
      if (typeof child !== "object" || child === null) continue;
      values.push(child);
      depths.push(level);
      named.push(PROPERTY_KEYWORDS.has(key));
    }
    if (nodes > maxNodes) return { depth: deepest, nodes, properties };
  }
  return { depth: deepest, nodes, properties };
}
