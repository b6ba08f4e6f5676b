import type { ErrorObject } from "ajv";
import { clip } from "./schema-cache.js";

/** How many violations the feedback lists before "… and N more". */
export const MAX_LISTED_VIOLATIONS = 10;

/**
 * Ajv's errors as lines a model can act on: the JSON pointer of the offending value (`/` for the whole value), what
 * is wrong, and the schema keyword in parentheses, e.g. `/address/zip: must match pattern "^[0-9]{5}$" (pattern)`.
 * Ajv's vaguer messages are made concrete: which additional property, which allowed values, which constant.
 * The first {@link MAX_LISTED_VIOLATIONS} are listed, then a count of the rest.
 */
export function describeViolations(errors: readonly ErrorObject[], max = MAX_LISTED_VIOLATIONS): string {
  const lines = errors.slice(0, max).map(describeViolation);
  if (errors.length > max) lines.push(`… and ${errors.length - max} more`);
  return lines.join("\n");
}

export function describeViolation(error: ErrorObject): string {
  const pointer = error.instancePath === "" ? "/" : clip(error.instancePath, 120);
  return `${pointer}: ${violationMessage(error)} (${error.keyword})`;
}

function violationMessage(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case "additionalProperties":
      return `must NOT have additional property ${quote(params.additionalProperty)}`;
    case "unevaluatedProperties":
      return `must NOT have unevaluated property ${quote(params.unevaluatedProperty)}`;
    case "enum": {
      const allowed = Array.isArray(params.allowedValues) ? params.allowedValues : [];
      const shown = allowed.slice(0, 10).map((value) => clip(JSON.stringify(value) ?? String(value), 60));
      return `must be one of ${shown.join(", ")}${allowed.length > 10 ? `, … (${allowed.length} values)` : ""}`;
    }
    case "const":
      return `must be equal to ${clip(JSON.stringify(params.allowedValue) ?? String(params.allowedValue), 80)}`;
    default:
      return clip(error.message ?? `fails "${error.keyword}"`, 200);
  }
}

function quote(value: unknown): string {
  return `'${clip(String(value), 60)}'`;
}
