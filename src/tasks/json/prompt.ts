import type { ChatMessage } from "../../models/language-model.js";
import type { JsonRecord } from "./record.js";

/**
 * The item's instruction, then the schema (pretty-printed in a fenced block), then the answer format: only the JSON,
 * inside `<answer></answer>` tags or a ```` ```json ```` block.
 */
export function jsonPrompt(record: JsonRecord): ChatMessage[] {
  const content = [
    record.prompt.trim(),
    "",
    "The JSON must be valid against this JSON Schema:",
    "```json",
    JSON.stringify(record.schema, null, 2),
    "```",
    "",
    "Reply with only the JSON value inside <answer></answer> tags (or a ```json fenced block): no comments, no trailing commas, double-quoted keys and strings.",
  ].join("\n");
  return [{ role: "user", content }];
}
