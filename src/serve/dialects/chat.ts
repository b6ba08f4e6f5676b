/**
 * OpenAI Chat Completions (`POST /v1/chat/completions`): the gateway's first dialect. `messages` (roles system,
 * developer, user, assistant with `tool_calls`, and tool) become the loop's text conversation; `response_format`,
 * function `tools` and `tool_choice` its sampling and checks; the answer is a chat completion, streamed as
 * `chat.completion.chunk` events. The checks name their fields in this dialect's words.
 */
import { RequestFieldError } from "../../errors.js";
import type { CallSampling } from "../../loops/episode-run.js";
import type { ChatMessage, ToolCall, ToolChoice, ToolDefinition } from "../../models/language-model.js";
import type { RequestCheckSpec } from "../../critics/request/request-task.js";
import { asksForReflection, openAiEffort, optionalBoolean, optionalInt, optionalNumber, optionalUserId, screenFields, textOfParts, toLoopRequest, type ChatRequest, type FieldRules, type RequestBounds } from "../loop-request.js";
import { chatCompletion, openAiUsage } from "../response.js";
import { completionWriter } from "../sse.js";
import { settledEvents, settledParts } from "./event-writer.js";
import type { Dialect, GatewayError } from "./dialect.js";
import { refuseInheritedNames } from "../field-names.js";
import { isRecord } from "../../util/is-record.js";

/** Top-level fields the gateway reads. */
const usedFields = new Set(["model", "messages", "max_tokens", "max_completion_tokens", "temperature", "top_p", "seed", "stop", "n", "stream", "stream_options", "response_format", "tools", "tool_choice", "reflect", "reasoning_effort", "user"]);
/** Fields accepted and ignored: they do not change what the model writes. */
const ignoredFields = new Set(["metadata", "store", "parallel_tool_calls", "service_tier", "safety_identifier", "prompt_cache_key"]);
/** Fields with an effect the gateway cannot honour: accepted only at their neutral value. */
const neutralFields: FieldRules["neutral"] = new Map([
  ["frequency_penalty", { neutral: (v: unknown) => v === 0 }],
  ["presence_penalty", { neutral: (v: unknown) => v === 0 }],
  ["logprobs", { neutral: (v: unknown) => v === false }],
  ["logit_bias", { neutral: (v: unknown) => isRecord(v) && Object.keys(v).length === 0 }],
]);

/**
 * Parses and validates a chat-completion body. Every problem is a `RequestFieldError` naming the field as the caller
 * wrote it (`messages[2].content[0]`, `reflect.budget.calls`), which the server answers with 400.
 */
export function parseChatRequest(body: unknown, bounds: RequestBounds): ChatRequest {
  if (!isRecord(body)) throw new RequestFieldError("body", "must be a JSON object");
  screenFields(body, { used: usedFields, ignored: ignoredFields, neutral: neutralFields });
  const messages = parseMessages(body.messages);
  const maxTokens = optionalInt(body, "max_completion_tokens", 1) ?? optionalInt(body, "max_tokens", 1);
  const temperature = optionalNumber(body, "temperature", 0, 2);
  const topP = optionalNumber(body, "top_p", 0, 1);
  const seed = optionalInt(body, "seed", Number.MIN_SAFE_INTEGER);
  const stop = parseStop(body.stop);
  const n = optionalInt(body, "n", 1);
  if (n !== undefined && n !== 1) throw new RequestFieldError("n", "only n = 1 is supported by the gateway");
  const stream = optionalBoolean(body, "stream") ?? false;
  const includeUsage = parseStreamOptions(body.stream_options);
  const format = parseResponseFormat(body.response_format);
  const { tools, toolChoice } = parseTools(body.tools, body.tool_choice);
  // Carried on the loop's request, not sent upstream (`ChatRequest.reasoningEffort`, `ChatRequest.user`).
  const reasoningEffort = openAiEffort(body.reasoning_effort, "reasoning_effort");
  const user = optionalUserId(body.user, "user");
  const carried = { ...(reasoningEffort === undefined ? {} : { reasoningEffort }), ...(user === undefined ? {} : { user }) };
  return toLoopRequest({ messages, maxTokens, temperature, topP, stop, seed, format, tools, ...(toolChoice === undefined ? {} : { toolChoice }), stream, includeUsage, reflect: body.reflect, ...carried }, bounds);
}

function parseMessages(value: unknown): ChatMessage[] {
  if (!Array.isArray(value) || value.length === 0) throw new RequestFieldError("messages", "must be a non-empty array of messages");
  return value.map((message, i) => parseMessage(message, `messages[${i}]`));
}

function parseMessage(value: unknown, field: string): ChatMessage {
  if (!isRecord(value)) throw new RequestFieldError(field, "must be an object with role and content");
  refuseInheritedNames(value, field);
  const role = value.role;
  const content = () => messageText(value.content, `${field}.content`);
  switch (role) {
    case "system":
    case "developer":
      return { role: "system", content: content() };
    case "user":
      return { role: "user", content: content() };
    case "assistant": {
      const calls = parseToolCalls(value.tool_calls, `${field}.tool_calls`);
      const text = value.content === null || value.content === undefined ? "" : content();
      return { role: "assistant", content: text, ...(calls === undefined || calls.length === 0 ? {} : { toolCalls: calls }) };
    }
    case "tool": {
      if (typeof value.tool_call_id !== "string" || value.tool_call_id === "") throw new RequestFieldError(`${field}.tool_call_id`, "must be the id of the assistant tool call this message answers");
      return { role: "tool", toolCallId: value.tool_call_id, content: content() };
    }
    default:
      throw new RequestFieldError(`${field}.role`, "must be system, developer, user, assistant or tool");
  }
}

/** A message's content as text: a string, or an array of text parts. Images, audio and files are refused. */
function messageText(value: unknown, field: string): string {
  return textOfParts(value, field, ["text"], "; send text parts only");
}

function parseToolCalls(value: unknown, field: string): ToolCall[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) throw new RequestFieldError(field, "must be an array");
  return value.map((call, i) => {
    const fn = isRecord(call) ? call.function : undefined;
    if (!isRecord(call) || !isRecord(fn) || typeof fn.name !== "string" || typeof fn.arguments !== "string") {
      throw new RequestFieldError(`${field}[${i}]`, "must be { id, type: \"function\", function: { name, arguments } }");
    }
    refuseInheritedNames(call, `${field}[${i}]`);
    refuseInheritedNames(fn, `${field}[${i}].function`);
    return { id: typeof call.id === "string" ? call.id : `call_${i}`, name: fn.name, arguments: fn.arguments };
  });
}

function parseStop(value: unknown): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  const list = typeof value === "string" ? [value] : value;
  if (!Array.isArray(list) || list.length > 4 || !list.every((s) => typeof s === "string" && s !== "")) {
    throw new RequestFieldError("stop", "must be a non-empty string or an array of up to 4 non-empty strings");
  }
  return list as string[];
}

function parseStreamOptions(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  if (!isRecord(value)) throw new RequestFieldError("stream_options", "must be an object");
  refuseInheritedNames(value, "stream_options");
  const include = value.include_usage;
  if (include !== undefined && typeof include !== "boolean") throw new RequestFieldError("stream_options.include_usage", "must be a boolean");
  return include === true;
}

function parseResponseFormat(value: unknown): { schema?: RequestCheckSpec["schema"]; responseFormat?: CallSampling["responseFormat"] } {
  if (value === undefined || value === null) return {};
  if (!isRecord(value)) throw new RequestFieldError("response_format", "must be an object with a type");
  refuseInheritedNames(value, "response_format");
  if (value.type === "text") return {};
  // JSON mode: any JSON object; the upstream is asked for it, and no schema check applies.
  if (value.type === "json_object") return { responseFormat: { type: "json", schema: { type: "object" } } };
  if (value.type !== "json_schema") throw new RequestFieldError("response_format.type", "must be text, json_object or json_schema");
  const spec = value.json_schema;
  if (!isRecord(spec)) throw new RequestFieldError("response_format.json_schema", "must be an object { name, schema }");
  // The schema itself is free-form: a property may be called `constructor`.
  refuseInheritedNames(spec, "response_format.json_schema");
  if (!isRecord(spec.schema)) throw new RequestFieldError("response_format.json_schema.schema", "must be a JSON schema object");
  if (spec.name !== undefined && typeof spec.name !== "string") throw new RequestFieldError("response_format.json_schema.name", "must be a string");
  const schema = spec.schema;
  return { schema: { ...(spec.name === undefined ? {} : { name: spec.name as string }), schema }, responseFormat: { type: "json", schema } };
}

function parseTools(value: unknown, choice: unknown): { tools?: ToolDefinition[]; toolChoice?: ToolChoice } {
  if (value === undefined || value === null) {
    if (choice !== undefined && choice !== null && choice !== "none" && choice !== "auto") throw new RequestFieldError("tool_choice", "needs tools");
    return {};
  }
  if (!Array.isArray(value)) throw new RequestFieldError("tools", "must be an array of { type: \"function\", function: { name, parameters } }");
  const tools = value.map((tool, i): ToolDefinition => {
    const at = `tools[${i}]`;
    if (!isRecord(tool) || tool.type !== "function" || !isRecord(tool.function)) throw new RequestFieldError(at, "must be { type: \"function\", function: { name, description?, parameters? } }");
    const fn = tool.function;
    refuseInheritedNames(tool, at);
    refuseInheritedNames(fn, `${at}.function`);
    if (typeof fn.name !== "string" || !/^[A-Za-z0-9_-]{1,64}$/u.test(fn.name)) throw new RequestFieldError(`${at}.function.name`, "must be 1–64 letters, digits, _ or -");
    if (fn.description !== undefined && typeof fn.description !== "string") throw new RequestFieldError(`${at}.function.description`, "must be a string");
    if (fn.parameters !== undefined && !isRecord(fn.parameters)) throw new RequestFieldError(`${at}.function.parameters`, "must be a JSON schema object");
    const strict = fn.strict === null ? undefined : fn.strict;
    if (strict !== undefined && typeof strict !== "boolean") throw new RequestFieldError(`${at}.function.strict`, "must be true or false");
    return {
      name: fn.name,
      ...(fn.description === undefined ? {} : { description: fn.description as string }),
      ...(fn.parameters === undefined ? {} : { parameters: fn.parameters as Record<string, unknown> }),
      ...(strict === undefined ? {} : { strict }),
    };
  });
  if (choice === undefined || choice === null || choice === "auto") return { tools };
  // No tools offered: the model answers in text and no tools check applies.
  if (choice === "none") return {};
  if (choice === "required") return { tools, toolChoice: { type: "required" } };
  if (isRecord(choice)) refuseInheritedNames(choice, "tool_choice");
  if (isRecord(choice) && isRecord(choice.function)) refuseInheritedNames(choice.function, "tool_choice.function");
  const name = isRecord(choice) && choice.type === "function" && isRecord(choice.function) ? choice.function.name : undefined;
  const named = tools.filter((t) => t.name === name);
  if (named.length === 0) throw new RequestFieldError("tool_choice", "must be none, auto, required or { type: \"function\", function: { name } } naming one of tools");
  // A forced function: it is the only one offered, the upstream is told to call it, and the reply must.
  return { tools: named, toolChoice: { type: "tool", name: name as string } };
}

/** An error in OpenAI's shape, `{ error: { message, type, param, code } }`, with `reflect` on a 422 of failed checks. */
export function errorBody(error: GatewayError): Record<string, unknown> {
  return { error: { message: error.message, type: error.type, param: error.param, code: error.code }, ...(error.reflect === undefined ? {} : { reflect: error.reflect }) };
}

export const chatDialect: Dialect = {
  name: "chat",
  route: "/v1/chat/completions",
  upstreamPath: "/chat/completions",
  idPrefix: "chatcmpl-",
  parse: parseChatRequest,
  asksForReflection,
  answer: (meta, reply, usage, reflect) => chatCompletion(meta, reply, openAiUsage(usage), reflect),
  events: (meta, reply, usage, request, reflect) => settledEvents(completionWriter(meta, request.includeUsage, reflect), settledParts(reply, usage)),
  writer: (meta, request, known) => completionWriter(meta, request.includeUsage, known?.reflect),
  error: errorBody,
  // OpenAI's clients raise an `error` member in a streamed chunk as an APIError.
  errorEvent: (error) => `data: ${JSON.stringify(errorBody(error))}\n\n`,
  keepAlive: ": keep-alive\n\n",
  checkField: (field) => field,
};
