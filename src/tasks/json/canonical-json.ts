/**
 * The canonical text of a parsed JSON value: object keys sorted by UTF-16 code units (as RFC 8785, JCS, sorts
 * them), no whitespace, strings and numbers as JSON.stringify writes them. Two replies that differ only in key
 * order or spacing get the same text, so the answer-change rate of a loop measures changes of content. Recursive:
 * callers pass values whose depth is bounded (parseJson refuses deeper than MAX_JSON_DEPTH).
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const object = value as Record<string, unknown>;
  const keys = Object.keys(object).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(object[key])}`).join(",")}}`;
}
