/** Whether `value` is a plain JSON object: not null, not an array (a parsed body's or a record line's fields). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
