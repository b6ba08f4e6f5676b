import type { ChatMessage } from "../../models/language-model.js";
import type { BfclRecord } from "./types.js";

const INSTRUCTIONS =
  'Answer with the function call(s) that fulfil the request: a JSON list of {"name": …, "arguments": {…}} objects ' +
  'inside <answer></answer> tags, for example <answer>[{"name": "get_weather", "arguments": {"city": "Paris"}}]</answer>. ' +
  "Use only the functions above, give every argument by its parameter name, and make one call per action the request " +
  "asks for. If no function fits the request, answer <answer>[]</answer>.";

/**
 * The question's messages, the last user message carrying the function docs (as BFCL gives them, one JSON object
 * per line; types are BFCL's Python names such as `dict`, `float`, `tuple`), the request itself, and how to answer.
 * A system message of the question stays a system message.
 */
export function bfclPrompt(record: BfclRecord): ChatMessage[] {
  const messages: ChatMessage[] = record.question.flat().map((message) => ({ role: message.role, content: message.content }));
  let last = -1;
  messages.forEach((message, i) => {
    if (message.role === "user") last = i;
  });
  const functions = record.function.map((fn) => JSON.stringify(fn)).join("\n");
  const request = last === -1 ? "" : (messages[last] as ChatMessage).content.trim();
  const content = `You can call these functions (JSON schemas, one per line):\n${functions}\n\nRequest: ${request}\n\n${INSTRUCTIONS}`;
  if (last === -1) return [...messages, { role: "user", content }];
  messages[last] = { role: "user", content };
  return messages;
}
