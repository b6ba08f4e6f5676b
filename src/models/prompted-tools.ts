import { parseJson } from "../util/parse-json.js";
import type { ChatMessage, TextMessage, ToolCall, ToolChoice, ToolDefinition } from "./language-model.js";
import { isRecord } from "../util/is-record.js";

/**
 * Tool calling for a model with no tool API (the embedded GGUF models): the offered functions go into a system
 * message, and the model writes its calls as `<tool_call>…</tool_call>` blocks, which are read back out of the reply.
 *
 * The format is the one SmolLM2-Instruct was tuned on (its function-calling data, Argilla's Synth-APIGen, as its model
 * card and chat template give it): the functions as JSON inside `<tools></tools>`, and the calls as a JSON list of
 * `{"name", "arguments"}` objects inside one `<tool_call></tool_call>`. The reader also takes the Hermes/Qwen form —
 * one object per block, several blocks — which is how `replyText` in loops/conversation.ts writes calls back into a
 * conversation (with `arguments` as a JSON string). A reply with no tagged block that is nothing but such calls is
 * read as them too (`readUntaggedCalls`): Qwen2.5-Coder 0.5B, shown BFCL's multi-turn functions, writes its calls as a
 * fenced JSON list and never the tags.
 */
export function toolsSystemPrompt(tools: readonly ToolDefinition[], choice?: ToolChoice): string {
  const listed = tools.map((tool) => JSON.stringify({ name: tool.name, description: tool.description ?? "", parameters: tool.parameters ?? { type: "object", properties: {} } }));
  return [
    "You can call functions. These are the functions you may call:",
    `<tools>[${listed.join(", ")}]</tools>`,
    "To call functions, reply with a JSON list of calls inside <tool_call></tool_call>, each call with the function's name and an object of arguments that fits its parameters, for example:",
    '<tool_call>[{"name": "function_name", "arguments": {"argument_name": "value"}}]</tool_call>',
    // One sentence for either forced choice: a named tool is the only one listed, and a record keeps only that a call
    // was required, so a training prompt rebuilt from it (`reflect distill`) reads as the served one did.
    choice === undefined ? "If no function fits the request, answer in plain text instead." : "You must call at least one of these functions; do not answer in plain text.",
  ].join("\n");
}

/**
 * The conversation as a model without a tool API reads it: tool turns as text (`toolTurnsAsText`), then the tools
 * prompt as its system message, ahead of the caller's own system message if any. A forced `choice` is asked for in
 * the prompt, the only way such a model can be told.
 */
export function withToolsPrompt(messages: readonly ChatMessage[], tools: readonly ToolDefinition[], choice?: ToolChoice): TextMessage[] {
  const prompt = toolsSystemPrompt(tools, choice);
  const [first, ...rest] = toolTurnsAsText(messages);
  if (first === undefined) return [{ role: "system", content: prompt }];
  if (first.role === "system") return [{ role: "system", content: `${prompt}\n\n${first.content}` }, ...rest];
  return [{ role: "system", content: prompt }, first, ...rest];
}

/**
 * A conversation with its tool turns written as text, for a backend without a tool API (the embedded model) and for
 * text-only consumers (records, training rows): an assistant turn's calls after its text as `<tool_call>` blocks
 * (`callsAsText`), a tool result as a user turn holding a `<tool_response id="…">` block (`is_error="true"` on a
 * failed one). The one place this framing is made.
 */
export function toolTurnsAsText(messages: readonly ChatMessage[]): TextMessage[] {
  return messages.map(messageAsText);
}

/** One turn as text (see `toolTurnsAsText`). */
export function messageAsText(message: ChatMessage): TextMessage {
  switch (message.role) {
    case "tool":
      return { role: "user", content: `<tool_response id="${message.toolCallId}"${message.isError === true ? ' is_error="true"' : ""}>\n${message.content}\n</tool_response>` };
    case "assistant":
      return { role: "assistant", content: callsAsText(message.content, message.toolCalls) };
    default:
      return { role: message.role, content: message.content };
  }
}

/**
 * A reply's text with its tool calls written after it, one `<tool_call>{"name", "arguments"}</tool_call>` block per
 * call (Hermes/Qwen form, `arguments` the JSON string the model wrote); `readToolCallBlocks` reads them back.
 */
export function callsAsText(text: string, toolCalls: readonly ToolCall[] | undefined): string {
  if (toolCalls === undefined || toolCalls.length === 0) return text;
  const calls = toolCalls.map((c) => `${OPEN}${JSON.stringify({ name: c.name, arguments: c.arguments })}${CLOSE}`).join("\n");
  return text === "" ? calls : `${text}\n${calls}`;
}

/**
 * A reply with tool calls as the tools prompt asks a prompted model to write it: the text, then one `<tool_call>` block
 * holding the calls as a JSON list of `{"name", "arguments"}` with the arguments as an object (kept as the string where
 * they are not a JSON object). `readToolCallBlocks` reads it back to the same calls. A training target for the
 * embedded engine (`reflect distill`), where `replyText` (loops/conversation.ts) is how an attempt is shown again.
 */
export function promptedReplyText(text: string, toolCalls: readonly ToolCall[] | undefined): string {
  if (toolCalls === undefined || toolCalls.length === 0) return text;
  const calls = toolCalls.map((call) => {
    const parsed = parseJson(call.arguments);
    return { name: call.name, arguments: parsed.ok && isRecord(parsed.value) ? parsed.value : call.arguments };
  });
  const block = `${OPEN}${JSON.stringify(calls)}${CLOSE}`;
  return text.trim() === "" ? block : `${text}\n${block}`;
}

/** A reply split into its tool calls and the rest of its text; `problems` says why a block was not read as calls. */
export interface PromptedReply {
  text: string;
  toolCalls: ToolCall[];
  problems: string[];
}

const OPEN = "<tool_call>";
const CLOSE = "</tool_call>";
/** Most calls read from one reply; the rest are left in the text with a problem. */
export const MAX_PROMPTED_CALLS = 64;

/**
 * Reads every well-formed `<tool_call>` block out of `reply`: its content (a ```` ```json ```` fence around it
 * allowed) is one call object or a list of them, each `{"name": string, "arguments": object | JSON string}`
 * (`parameters` accepted for `arguments`; absent means `{}`). Read blocks leave the text; a block that does not read
 * — bad JSON, no name, never closed — stays in the text and is described in `problems`, so a check can say what was
 * wrong. Calls get ids `call_0`, `call_1`, … in order. Plain index scans; strict JSON parsing (parse-json.ts).
 */
export function readToolCallBlocks(reply: string): PromptedReply {
  const toolCalls: ToolCall[] = [];
  const problems: string[] = [];
  let text = "";
  let at = 0;
  for (;;) {
    const open = reply.indexOf(OPEN, at);
    if (open === -1) break;
    const close = reply.indexOf(CLOSE, open + OPEN.length);
    if (close === -1) {
      problems.push(`a ${OPEN} block is never closed with ${CLOSE}`);
      break;
    }
    const read = readBlock(reply.slice(open + OPEN.length, close));
    const end = close + CLOSE.length;
    if ("problem" in read || toolCalls.length + read.calls.length > MAX_PROMPTED_CALLS) {
      problems.push("problem" in read ? read.problem : `more than ${MAX_PROMPTED_CALLS} tool calls in one reply`);
      text += reply.slice(at, end);
    } else {
      for (const call of read.calls) toolCalls.push({ id: `call_${toolCalls.length}`, ...call });
      text += reply.slice(at, open);
    }
    at = end;
  }
  text += reply.slice(at);
  return { text: toolCalls.length === 0 ? text : text.trim(), toolCalls, problems };
}

/**
 * A reply that is nothing but calls written without the `<tool_call>` tags — one call object or a list of them, bare or
 * in a ```` ```json ```` fence, as small instruction-tuned models (Qwen2.5-Coder 0.5B) write them — read as those
 * calls when every call names one of `offered`, or when every item is exactly the prompt's call form (the keys `name`
 * and `arguments`, nothing else) — then a misremembered name is a call the caller answers with an error, as a native
 * tool API returns it, rather than a final answer. Anything else (text around it, another name in another shape,
 * bad JSON) is no call, and the reply stays text.
 */
export function readUntaggedCalls(reply: string, offered: readonly string[]): PromptedReply | undefined {
  const read = readBlock(reply);
  if ("problem" in read || read.calls.length === 0 || read.calls.length > MAX_PROMPTED_CALLS) return undefined;
  if (!read.calls.every((call) => offered.includes(call.name)) && !read.exactShape) return undefined;
  return { text: "", toolCalls: read.calls.map((call, i) => ({ id: `call_${i}`, ...call })), problems: [] };
}

/** `exactShape`: every item has the two keys `name` and `arguments` and no other, the prompt's own call form. */
function readBlock(raw: string): { calls: Array<Omit<ToolCall, "id">>; exactShape: boolean } | { problem: string } {
  let body = raw.trim();
  const fence = /^```[A-Za-z]*\s*\n?([^]*?)\n?```$/u.exec(body);
  if (fence !== null) body = (fence[1] as string).trim();
  const parsed = parseJson(body);
  if (!parsed.ok) return { problem: `a ${OPEN} block is not JSON: line ${parsed.problem.line}, column ${parsed.problem.column}: ${parsed.problem.message}` };
  const items = Array.isArray(parsed.value) ? parsed.value : [parsed.value];
  const calls: Array<Omit<ToolCall, "id">> = [];
  let exactShape = true;
  for (const [i, item] of items.entries()) {
    const which = Array.isArray(parsed.value) ? `call ${i} of a ${OPEN} list` : `a ${OPEN} block`;
    if (!isRecord(item)) return { problem: `${which} is not an object with "name" and "arguments"` };
    if (typeof item.name !== "string" || item.name === "") return { problem: `${which} has no "name" string` };
    const keys = Object.keys(item);
    exactShape &&= keys.length === 2 && keys.includes("name") && keys.includes("arguments");
    const args = Object.hasOwn(item, "arguments") ? item.arguments : Object.hasOwn(item, "parameters") ? item.parameters : {};
    if (typeof args === "string") calls.push({ name: item.name, arguments: args });
    else if (isRecord(args)) calls.push({ name: item.name, arguments: JSON.stringify(args) });
    else return { problem: `the "arguments" of ${which} must be an object, not ${args === null ? "null" : Array.isArray(args) ? "an array" : typeof args}` };
  }
  return { calls, exactShape };
}
