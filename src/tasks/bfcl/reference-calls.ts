import { isRecord } from "../../util/is-record.js";
import { expectedCalls } from "./match-calls.js";
import { schemaType } from "./schema-type.js";
import type { BfclRecord, BfclSchema } from "./types.js";

/** A call as plain JSON, the shape the prompt asks for. */
export interface JsonCall {
  name: string;
  arguments: Record<string, unknown>;
}

/**
 * One correct answer for a record: each expected call with the first acceptable value of every parameter; a
 * parameter whose first value is `""` (optional) takes the next one, and one with `""` alone is left out. Expected
 * parameters the function doc lacks (BFCL has a few: `parallel_multiple_12`'s `permeability`) are left out too, as
 * no call could give them; `skipped` lists them. Dict positions give one value per key, the same way. Null when an
 * expected call names a function the record does not offer. A demonstration for prompts or training data, and the
 * gold answer tests check the verifier with.
 */
export function referenceCalls(record: BfclRecord): { calls: JsonCall[]; skipped: string[] } | null {
  const resolved = expectedCalls(record);
  if (!resolved.ok) return null;
  const skipped: string[] = [];
  const calls = resolved.calls.map(({ fn, params }) => {
    const properties = fn.parameters.properties ?? {};
    const args: Record<string, unknown> = {};
    for (const [name, values] of Object.entries(params)) {
      if (!Object.hasOwn(properties, name)) {
        if (values.some((value) => value !== "")) skipped.push(`${fn.name}.${name}`);
        continue;
      }
      const value = firstValue(values, properties[name]);
      if (value !== undefined) args[name] = value;
    }
    return { name: fn.name, arguments: args };
  });
  return { calls, skipped };
}

function firstValue(values: readonly unknown[], schema: BfclSchema | undefined): unknown {
  const value = values.find((v) => v !== "");
  return value === undefined ? undefined : concrete(value, schema);
}

/** An acceptable value made concrete: a dict pattern `{key: [values…]}` becomes `{key: first value}`. */
function concrete(value: unknown, schema: BfclSchema | undefined): unknown {
  const type = schemaType(schema);
  if (type === "dict" && isRecord(value)) {
    const out: Record<string, unknown> = {};
    for (const [key, values] of Object.entries(value)) {
      const item = firstValue(Array.isArray(values) ? values : [values], schema?.properties?.[key]);
      if (item !== undefined) out[key] = item;
    }
    return out;
  }
  if ((type === "array" || type === "tuple") && Array.isArray(value) && schemaType(schema?.items) === "dict") return value.map((item) => concrete(item, schema?.items));
  return value;
}
