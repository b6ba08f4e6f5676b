import type { AttributeValue, Attributes } from "./tracer.js";

/** Attribute keys that name a credential; such attributes never reach a span. */
export const secretKeyPattern = /(api[_-]?key|authorization|token|secret|password)/i;

/** Prompt and completion attributes, recorded only when the tracer's `recordContent` is on. */
export const contentKeys: ReadonlySet<string> = new Set(["gen_ai.input.messages", "gen_ai.output.messages"]);

/** What replaces a credential found inside a value. */
export const redacted = "[REDACTED]";

// Bearer tokens (`Authorization: Bearer …`) and OpenAI-style keys (`sk-…`, `sk-proj-…`).
const secretValuePatterns: readonly RegExp[] = [/\bBearer\s+[A-Za-z0-9\-._~+/]+=*/gi, /\bsk-[A-Za-z0-9_-]{8,}/g];

/**
 * Whether `key` names a credential. Token *counts* are not credentials: a key whose only match is the
 * plural `tokens` (`gen_ai.usage.input_tokens`, `gen_ai.request.max_tokens`) is kept when its value is a
 * number, so the GenAI usage attributes survive while `github_tokens: "ghp_…"` is still dropped.
 */
export function isSecretKey(key: string, value?: AttributeValue): boolean {
  if (!secretKeyPattern.test(key)) return false;
  const isCount = typeof value === "number" || (Array.isArray(value) && value.every((v) => typeof v === "number"));
  return !(isCount && !secretKeyPattern.test(key.replace(/tokens(?![a-z0-9])/gi, "")));
}

/** `text` with every bearer token and `sk-…` key replaced by `[REDACTED]`. */
export function redactSecrets(text: string): string {
  return secretValuePatterns.reduce((out, pattern) => out.replace(pattern, (match) => (/^bearer/i.test(match) ? `Bearer ${redacted}` : redacted)), text);
}

/** An attribute value as a span stores it (arrays copied, so later changes by the caller do not leak in). */
export type SpanAttributeValue = string | number | boolean | string[] | number[];

function sanitizeValue(value: AttributeValue): SpanAttributeValue {
  if (typeof value === "string") return redactSecrets(value);
  if (typeof value === "number" || typeof value === "boolean") return value;
  if (value.every((v): v is number => typeof v === "number")) return [...value];
  return (value as readonly string[]).map(redactSecrets);
}

/**
 * The attributes that may be put on a span: undefined values and credential-named keys dropped, bearer
 * tokens and `sk-…` keys inside values redacted, and `gen_ai.input.messages` / `gen_ai.output.messages`
 * dropped unless `recordContent`.
 */
export function sanitizeAttributes(attributes: Attributes, options: { recordContent: boolean }): Record<string, SpanAttributeValue> {
  const clean: Record<string, SpanAttributeValue> = {};
  for (const [key, value] of Object.entries(attributes)) {
    if (value === undefined || isSecretKey(key, value)) continue;
    if (contentKeys.has(key) && !options.recordContent) continue;
    clean[key] = sanitizeValue(value);
  }
  return clean;
}
