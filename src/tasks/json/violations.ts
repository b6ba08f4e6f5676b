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
export function describeViolations(errors: readonly ErrorObject[], max = MAX_LISTED_VIOLATIONS, path: (instancePath: string) => string = pointerPath): string {
  const lines = errors.slice(0, max).map((error) => describeViolation(error, path));
  if (errors.length > max) lines.push(`… and ${errors.length - max} more`);
  return lines.join("\n");
}

export function describeViolation(error: ErrorObject, path: (instancePath: string) => string = pointerPath): string {
  return `${clip(path(error.instancePath), 120)}: ${violationMessage(error)} (${error.keyword})`;
}

/** Ajv's JSON pointer as written in the feedback: `/` for the whole value. */
export function pointerPath(instancePath: string): string {
  return instancePath === "" ? "/" : instancePath;
}

/**
 * Ajv's JSON pointer as a JSONPath, the form OpenAI's structured-output errors use: `/items/2/price` →
 * `$.items[2].price`, `` → `$`; a key that is not an identifier is bracketed and quoted (`$["a b"]`). A pointer does
 * not say whether a digit segment is an array index or an object key; both read as `[2]`.
 */
export function jsonPath(instancePath: string): string {
  if (instancePath === "") return "$";
  let path = "$";
  for (const raw of instancePath.slice(1).split("/")) {
    const key = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    path += /^(?:0|[1-9][0-9]*)$/u.test(key) ? `[${key}]` : /^[A-Za-z_$][A-Za-z0-9_$]*$/u.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
  }
  return path;
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
