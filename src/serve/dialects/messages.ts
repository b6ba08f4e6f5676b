/**
 * Anthropic Messages (`POST /v1/messages`) as a dialect: the request's `system`, content blocks (`text`, `tool_use`,
 * `tool_result`), custom `tools` and `tool_choice` become the loop's request; the answer goes back as a `Message`, a
 * stream as Anthropic's server-sent events, an error as `{ type: "error", error: { type, message } }`. Pure.
 * Structured outputs (`output_config.format`, a JSON schema) are asked of the upstream and checked, as the chat door's
 * `response_format` is; the conversation reaches the loop in the same text the chat door gives the same conversation.
 *
 * Departures from Anthropic's API, each refused with a 400 naming the field rather than silently dropped, but for what
 * no upstream can use (earlier thinking blocks, server tools: left out, the tools named in `x-reflect-dropped-tools`):
 * - only `text`, `tool_use` (assistant turns) and `tool_result` (user turns) content blocks: images, documents and
 *   server-tool blocks are refused, naming the block (`messages[2].content[1]`); assistant thinking blocks are left out;
 * - only custom tools reach the upstream: server tools (`web_search_…`, `bash_…`, …) run on Anthropic's servers;
 * - `thinking` and `output_config.effort` only carried as an effort (`ChatRequest.reasoningEffort`), `top_k` only absent (no upstream the gateway speaks takes it),
 *   `max_tokens` at least 1 (Anthropic's 0 pre-warms a prompt cache the gateway does not have), at most
 *   `maxStopSequences` stop sequences.
 * What the gateway cannot know it does not claim: `stop_reason` is `end_turn` when a stop sequence ended the reply
 * (an OpenAI-compatible upstream reports both as `stop`), with `stop_sequence` null.
 */
import { RequestFieldError } from "../../errors.js";
import type { ChatMessage, ToolCall, ToolChoice, ToolDefinition } from "../../models/language-model.js";
import { asksForReflection, droppedToolLabel, optionalBoolean, optionalInt, optionalNumber, optionalUserId, screenFields, toLoopRequest, type ChatRequest, type FieldRules, type ReasoningEffort, type RequestBounds } from "../loop-request.js";
import type { CompletionMeta, CompletionReply, ReflectExtension } from "../response.js";
import type { Dialect, DialectUsage, GatewayError } from "./dialect.js";
import { settledEvents, settledParts, type EventWriter, type ReplyPart } from "./event-writer.js";
import { refuseInheritedNames } from "../field-names.js";
import { isRecord } from "../../util/is-record.js";

/** Most `stop_sequences` a request may send: each is matched against everything an upstream writes. */
export const maxStopSequences = 16;

/** Top-level fields the gateway reads. */
const usedFields = new Set(["model", "messages", "max_tokens", "system", "stop_sequences", "temperature", "top_p", "stream", "tools", "tool_choice", "output_config", "reflect", "thinking", "metadata", "context_management"]);
/** Fields accepted and ignored: they do not change what the model writes (`cache_control` asks for prompt caching). */
const ignoredFields = new Set(["service_tier", "cache_control"]);
/** Fields with an effect the gateway cannot honour: accepted only absent, null or at their neutral value. */
const neutralFields: FieldRules["neutral"] = new Map([
  ["top_k", { neutral: () => false, why: "is not honoured by the gateway (the upstreams it speaks take no top_k); remove it" }],
  ["speed", { neutral: (v: unknown) => v === "standard", why: 'only "standard" is supported by the gateway; remove it' }],
]);
/**
 * Keys of a custom tool the gateway accepts and ignores: hints about caching and streaming, and `defer_loading`
 * (Anthropic loads such a tool's definition only once a tool search finds it; no other upstream can, so the gateway
 * offers it with the rest, and a call of it is checked like any other — Claude Code sends one on every turn).
 */
const ignoredToolFields = new Set(["cache_control", "eager_input_streaming", "defer_loading"]);

/** Parses and validates a Messages body into the loop's request; every problem names the field as the client wrote it. */
export function parseMessagesRequest(body: unknown, bounds: RequestBounds): ChatRequest {
  if (!isRecord(body)) throw new RequestFieldError("body", "must be a JSON object");
  screenFields(body, { used: usedFields, ignored: ignoredFields, neutral: neutralFields });
  if (typeof body.model !== "string" || body.model === "") throw new RequestFieldError("model", "is required: a model name string");
  if (body.max_tokens === undefined || body.max_tokens === null) throw new RequestFieldError("max_tokens", "is required by the Messages API: the most tokens the answer may have");
  const maxTokens = optionalInt(body, "max_tokens", 1) as number;
  const system = parseSystem(body.system);
  const messages = [...(system === undefined ? [] : [system]), ...parseMessages(body.messages)];
  const temperature = optionalNumber(body, "temperature", 0, 1);
  const topP = optionalNumber(body, "top_p", 0, 1);
  const stop = parseStopSequences(body.stop_sequences);
  const stream = optionalBoolean(body, "stream") ?? false;
  const { schema, effort } = parseOutputConfig(body.output_config);
  const { tools, toolChoice, droppedTools } = parseTools(body.tools, body.tool_choice);
  const format = schema === undefined ? {} : { schema: { schema }, responseFormat: { type: "json" as const, schema } };
  parseContextManagement(body.context_management);
  // Carried on the loop's request, not sent upstream: `output_config.effort` says it outright, a thinking budget by its size.
  const thinkingEffort = parseThinking(body.thinking);
  const reasoningEffort = effort ?? thinkingEffort;
  const user = parseMetadata(body.metadata);
  const carried = { ...(reasoningEffort === undefined ? {} : { reasoningEffort }), ...(user === undefined ? {} : { user }), droppedTools };
  // Anthropic's stream always carries usage (message_start and message_delta), so the client always gets it.
  return toLoopRequest({ messages, maxTokens, temperature, topP, stop, format, tools, ...(toolChoice === undefined ? {} : { toolChoice }), stream, includeUsage: true, reflect: body.reflect, ...carried }, bounds);
}

/** A thinking budget as an effort: under 4,096 tokens `low`, under 16,384 `medium`, else `high`. */
export function budgetEffort(budgetTokens: number): ReasoningEffort {
  return budgetTokens < 4096 ? "low" : budgetTokens < 16_384 ? "medium" : "high";
}

/**
 * `thinking`: `{ type: "adaptive" }` and `{ type: "disabled" }` ask no effort of their own, `{ type: "enabled",
 * budget_tokens }` the budget's (`budgetEffort`). No upstream the gateway speaks writes Anthropic's thinking blocks,
 * so the answer carries none, and `display` (`summarized` or `omitted`: how they would be shown; Claude Code sends
 * `omitted`) is accepted and changes nothing.
 */
function parseThinking(value: unknown): ReasoningEffort | undefined {
  if (value === undefined || value === null) return undefined;
  const shape = 'must be { "type": "adaptive" }, { "type": "enabled", "budget_tokens": N } or { "type": "disabled" }';
  if (!isRecord(value)) throw new RequestFieldError("thinking", shape);
  refuseInheritedNames(value, "thinking");
  for (const key of Object.keys(value)) if (key !== "type" && key !== "budget_tokens" && key !== "display") throw new RequestFieldError(`thinking.${key}`, "is not a thinking field; use type, budget_tokens or display");
  if (value.display !== undefined && value.display !== null && value.display !== "summarized" && value.display !== "omitted") throw new RequestFieldError("thinking.display", "must be summarized or omitted");
  if (value.type === "enabled") {
    const budget = optionalInt(value, "budget_tokens", 1, "thinking.");
    if (budget === undefined) throw new RequestFieldError("thinking.budget_tokens", 'is required with { "type": "enabled" }: the most tokens the model may think in');
    return budgetEffort(budget);
  }
  if (value.type !== "adaptive" && value.type !== "disabled") throw new RequestFieldError("thinking.type", "must be adaptive, enabled or disabled");
  if (value.budget_tokens !== undefined && value.budget_tokens !== null) throw new RequestFieldError("thinking.budget_tokens", 'goes only with { "type": "enabled" }');
  return undefined;
}

/** `context_management` (Anthropic's clearing of old tool results and thinking) is accepted and ignored: the gateway keeps no context between requests. */
function parseContextManagement(value: unknown): void {
  if (value === undefined || value === null) return;
  if (!isRecord(value)) throw new RequestFieldError("context_management", "must be an object { edits? }");
  if (value.edits !== undefined && value.edits !== null && !(Array.isArray(value.edits) && value.edits.every(isRecord))) throw new RequestFieldError("context_management.edits", "must be an array of edit objects");
}

/** `metadata`: its `user_id`, carried as the request's user; its other members are ignored. */
function parseMetadata(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isRecord(value)) throw new RequestFieldError("metadata", "must be an object { user_id? }");
  refuseInheritedNames(value, "metadata");
  return optionalUserId(value.user_id, "metadata.user_id");
}

function parseSystem(value: unknown): ChatMessage | undefined {
  if (value === undefined || value === null) return undefined;
  const text = typeof value === "string" ? value : Array.isArray(value) ? value.map((block, i) => textOf(block, `system[${i}]`)).join("") : undefined;
  if (text === undefined) throw new RequestFieldError("system", "must be a string or an array of text blocks");
  return text === "" ? undefined : { role: "system", content: text };
}

/** A `text` block's text; any other block is refused, naming it. */
function textOf(block: unknown, field: string): string {
  if (!isRecord(block)) throw new RequestFieldError(field, "must be a content block object");
  refuseInheritedNames(block, field);
  if (block.type !== "text") throw new RequestFieldError(field, `content blocks of type ${JSON.stringify(block.type)} are not supported here; send text blocks`);
  if (typeof block.text !== "string") throw new RequestFieldError(`${field}.text`, "must be a string");
  return block.text;
}

function parseMessages(value: unknown): ChatMessage[] {
  if (!Array.isArray(value) || value.length === 0) throw new RequestFieldError("messages", "must be a non-empty array of messages");
  return value.flatMap((message, i) => parseMessage(message, `messages[${i}]`));
}

/**
 * One Anthropic message as the loop's messages, as the Chat Completions door reads the same conversation: an assistant
 * turn's text and `tool_use` blocks as one assistant message carrying the calls (`toolCalls`); a user turn's
 * `tool_result` blocks each as its own `tool` message, as a chat `tool` message is, and its text blocks, concatenated,
 * as a user message where they stand.
 */
function parseMessage(value: unknown, field: string): ChatMessage[] {
  if (!isRecord(value)) throw new RequestFieldError(field, "must be an object with role and content");
  refuseInheritedNames(value, field);
  const role = value.role;
  if (role !== "user" && role !== "assistant" && role !== "system") throw new RequestFieldError(`${field}.role`, "must be user or assistant");
  const content = value.content;
  const at = `${field}.content`;
  if (typeof content === "string") return [{ role, content }];
  if (!Array.isArray(content) || content.length === 0) throw new RequestFieldError(at, "must be a string or a non-empty array of content blocks");
  if (role === "system") return [{ role, content: content.map((block, j) => textOf(block, `${at}[${j}]`)).join("") }];
  if (role === "assistant") {
    let text = "";
    const calls: ToolCall[] = [];
    let kept = 0;
    content.forEach((block, j) => {
      const blockAt = `${at}[${j}]`;
      // Earlier thinking is signed for the model that wrote it and cannot be replayed to another: left out.
      if (isRecord(block) && (block.type === "thinking" || block.type === "redacted_thinking")) return;
      kept += 1;
      if (isRecord(block) && block.type === "tool_use") calls.push(toolUse(block, blockAt));
      else if (isRecord(block) && block.type === "tool_result") throw new RequestFieldError(blockAt, "tool_result blocks belong in a user turn");
      else text += blockText(block, blockAt, "assistant");
    });
    // A turn of thinking alone leaves nothing for the upstream to see.
    return kept === 0 ? [] : [{ role: "assistant", content: text, ...(calls.length === 0 ? {} : { toolCalls: calls }) }];
  }
  const out: ChatMessage[] = [];
  let text: string | undefined;
  const flush = () => {
    if (text !== undefined) out.push({ role: "user", content: text });
    text = undefined;
  };
  content.forEach((block, j) => {
    const blockAt = `${at}[${j}]`;
    if (isRecord(block) && block.type === "tool_result") {
      flush();
      out.push(toolResult(block, blockAt));
    } else if (isRecord(block) && block.type === "tool_use") {
      throw new RequestFieldError(blockAt, "tool_use blocks belong in an assistant turn");
    } else {
      text = (text ?? "") + blockText(block, blockAt, "user");
    }
  });
  flush();
  return out;
}

function blockText(block: unknown, field: string, role: "user" | "assistant"): string {
  if (isRecord(block) && block.type !== "text" && typeof block.type === "string") {
    const allowed = role === "assistant" ? "text, tool_use and thinking" : "text and tool_result";
    throw new RequestFieldError(field, `content blocks of type ${JSON.stringify(block.type)} are not supported by the gateway; an ${role} turn may hold ${allowed} blocks`);
  }
  return textOf(block, field);
}

function toolUse(block: Record<string, unknown>, field: string): ToolCall {
  refuseInheritedNames(block, field);
  if (typeof block.id !== "string" || block.id === "") throw new RequestFieldError(`${field}.id`, "must be the tool use's id string");
  if (typeof block.name !== "string" || block.name === "") throw new RequestFieldError(`${field}.name`, "must be the tool's name");
  // A string is the arguments as the model wrote them, when they were not a JSON object (`toolInput`): the gateway's
  // own answer, sent back with the conversation, reads as it was written.
  if (typeof block.input === "string") return { id: block.id, name: block.name, arguments: block.input };
  if (!isRecord(block.input)) throw new RequestFieldError(`${field}.input`, "must be an object: the tool's arguments");
  return { id: block.id, name: block.name, arguments: JSON.stringify(block.input) };
}

/** A tool result as a `tool` message answering its `tool_use`; a failed one (`is_error: true`) is marked so. */
function toolResult(block: Record<string, unknown>, field: string): ChatMessage {
  refuseInheritedNames(block, field);
  if (typeof block.tool_use_id !== "string" || block.tool_use_id === "") throw new RequestFieldError(`${field}.tool_use_id`, "must be the id of the tool_use it answers");
  const isError = block.is_error ?? false;
  if (typeof isError !== "boolean") throw new RequestFieldError(`${field}.is_error`, "must be true or false");
  const content = block.content;
  let text: string;
  if (content === undefined || content === null) text = "";
  else if (typeof content === "string") text = content;
  else if (Array.isArray(content)) text = content.map((part, k) => textOf(part, `${field}.content[${k}]`)).join("");
  else throw new RequestFieldError(`${field}.content`, "must be a string or an array of text blocks");
  return { role: "tool", toolCallId: block.tool_use_id, content: text, ...(isError ? { isError } : {}) };
}

function parseStopSequences(value: unknown): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || !value.every((s) => typeof s === "string" && s !== "")) throw new RequestFieldError("stop_sequences", "must be an array of non-empty strings");
  if (value.length > maxStopSequences) throw new RequestFieldError("stop_sequences", `holds at most ${maxStopSequences} sequences on this gateway`);
  return value.length === 0 ? undefined : (value as string[]);
}

/**
 * `output_config.format` (Anthropic's structured outputs): a JSON schema the answer must match — asked of the upstream
 * and checked; `output_config.effort` (`low`, `medium`, `high`, `max`, which reads as `high`): the request's effort.
 */
function parseOutputConfig(value: unknown): { schema?: Record<string, unknown>; effort?: ReasoningEffort } {
  if (value === undefined || value === null) return {};
  if (!isRecord(value)) throw new RequestFieldError("output_config", "must be an object { format?, effort? }");
  for (const [key, v] of Object.entries(value)) {
    if (v === undefined || v === null || key === "format" || key === "effort") continue;
    throw new RequestFieldError(`output_config.${key}`, "is not supported by the gateway; remove it");
  }
  const effortOf = { low: "low", medium: "medium", high: "high", max: "high" } as const;
  const asked = value.effort;
  if (asked !== undefined && asked !== null && !(typeof asked === "string" && Object.hasOwn(effortOf, asked))) throw new RequestFieldError("output_config.effort", "must be low, medium, high or max");
  const effort = typeof asked === "string" ? { effort: effortOf[asked as keyof typeof effortOf] } : {};
  const schema = parseOutputFormat(value.format);
  return { ...(schema === undefined ? {} : { schema }), ...effort };
}

function parseOutputFormat(format: unknown): Record<string, unknown> | undefined {
  if (format === undefined || format === null) return undefined;
  if (!isRecord(format) || format.type !== "json_schema") throw new RequestFieldError("output_config.format", 'must be { "type": "json_schema", "schema": {…} }');
  refuseInheritedNames(format, "output_config.format");
  if (!isRecord(format.schema)) throw new RequestFieldError("output_config.format.schema", "must be a JSON schema object");
  return format.schema;
}

/**
 * Custom `tools` and `tool_choice`. A tool of any other `type` (a server tool: `web_search_…`, `bash_…`,
 * `text_editor_…`, `code_execution_…`, `computer_…`) runs on Anthropic's servers or needs Anthropic's model: it is
 * left out of what the upstream sees and named in `droppedTools`; a `tool_choice` that forces one is refused.
 */
function parseTools(value: unknown, choice: unknown): { tools?: ToolDefinition[]; toolChoice?: ToolChoice; droppedTools: string[] } {
  const choiceType = parseToolChoice(choice);
  if (value === undefined || value === null) {
    if (choiceType === "any" || choiceType === "tool") throw new RequestFieldError("tool_choice", "needs tools");
    return { droppedTools: [] };
  }
  if (!Array.isArray(value)) throw new RequestFieldError("tools", "must be an array of custom tools { name, description?, input_schema }");
  const seen = new Set<string>();
  const droppedTools: string[] = [];
  const droppedNames = new Set<string>();
  const tools = value.flatMap((tool, i): ToolDefinition[] => {
    const at = `tools[${i}]`;
    if (!isRecord(tool)) throw new RequestFieldError(at, "must be a custom tool { name, description?, input_schema }");
    if (tool.type !== undefined && tool.type !== null && tool.type !== "custom") {
      refuseInheritedNames(tool, at);
      droppedTools.push(droppedToolLabel(tool, at));
      if (typeof tool.name === "string") droppedNames.add(tool.name);
      return [];
    }
    for (const [key, v] of Object.entries(tool)) {
      if (v === undefined || v === null || ["type", "name", "description", "input_schema", "strict"].includes(key) || ignoredToolFields.has(key)) continue;
      throw new RequestFieldError(`${at}.${key}`, "is not supported by the gateway; remove it");
    }
    if (typeof tool.name !== "string" || !/^[A-Za-z0-9_-]{1,64}$/u.test(tool.name)) throw new RequestFieldError(`${at}.name`, "must be 1–64 letters, digits, _ or -");
    if (seen.has(tool.name)) throw new RequestFieldError(`${at}.name`, `names a tool already offered (${tool.name}); tool names must be unique`);
    seen.add(tool.name);
    if (tool.description !== undefined && tool.description !== null && typeof tool.description !== "string") throw new RequestFieldError(`${at}.description`, "must be a string");
    if (!isRecord(tool.input_schema)) throw new RequestFieldError(`${at}.input_schema`, "is required: the JSON schema of the tool's input object");
    if (tool.strict !== undefined && tool.strict !== null && typeof tool.strict !== "boolean") throw new RequestFieldError(`${at}.strict`, "must be true or false");
    const strict = typeof tool.strict === "boolean" ? { strict: tool.strict } : {};
    return [{ name: tool.name, ...(typeof tool.description === "string" ? { description: tool.description } : {}), parameters: tool.input_schema, ...strict }];
  });
  const offered = tools.length === 0 ? {} : { tools };
  if (choiceType === "auto") return { ...offered, droppedTools };
  // No tools offered: the model answers in text and no tools check applies.
  if (choiceType === "none") return { droppedTools };
  const name = (choice as Record<string, unknown>).name;
  if (choiceType === "tool" && typeof name === "string" && droppedNames.has(name)) {
    throw new RequestFieldError("tool_choice", `forces ${name}, a server tool the gateway leaves out (no upstream it speaks can run it); send { "type": "auto" } or name a custom tool`);
  }
  if (choiceType === "any" && tools.length === 0) {
    throw new RequestFieldError("tool_choice", 'forces a tool call, but every tool offered is a server tool the gateway leaves out; send { "type": "auto" } or offer a custom tool');
  }
  if (choiceType === "any") return { tools, toolChoice: { type: "required" }, droppedTools };
  const named = tools.filter((t) => t.name === name);
  if (named.length === 0) throw new RequestFieldError("tool_choice.name", "must name one of tools");
  // A forced tool: it is the only one offered, the upstream is told to call it, and the reply must.
  return { tools: named, toolChoice: { type: "tool", name: name as string }, droppedTools };
}

/**
 * `tool_choice`'s type (`auto` when absent). `disable_parallel_tool_use` is accepted and not enforced, as the chat door
 * accepts `parallel_tool_calls`: the tools check verifies every call the reply makes, however many.
 */
function parseToolChoice(choice: unknown): "auto" | "any" | "tool" | "none" {
  if (choice === undefined || choice === null) return "auto";
  if (!isRecord(choice) || !["auto", "any", "tool", "none"].includes(choice.type as string)) {
    throw new RequestFieldError("tool_choice", 'must be { "type": "auto" | "any" | "none" } or { "type": "tool", "name": … }');
  }
  for (const key of Object.keys(choice)) {
    if (key !== "type" && key !== "name" && key !== "disable_parallel_tool_use") throw new RequestFieldError(`tool_choice.${key}`, "is not a tool_choice field; use type, name or disable_parallel_tool_use");
  }
  if (choice.type === "tool" && typeof choice.name !== "string") throw new RequestFieldError("tool_choice.name", 'is required with { "type": "tool" }: the tool to call');
  if (choice.type !== "tool" && choice.name !== undefined) throw new RequestFieldError("tool_choice.name", 'goes only with { "type": "tool" }');
  const parallel = choice.disable_parallel_tool_use;
  if (parallel !== undefined && parallel !== null && typeof parallel !== "boolean") throw new RequestFieldError("tool_choice.disable_parallel_tool_use", "must be true or false");
  return choice.type as "auto" | "any" | "tool" | "none";
}

/** Anthropic's `usage` of a Message, every member its SDK declares. */
export interface AnthropicUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  cache_creation: { ephemeral_1h_input_tokens: number; ephemeral_5m_input_tokens: number };
  inference_geo: null;
  output_tokens_details: null;
  server_tool_use: null;
  service_tier: null;
  speed: null;
}

/** Anthropic's `usage`: `input_tokens` counts the prompt tokens evaluated, `cache_read_input_tokens` those a cached prefix spared (Anthropic's total input is their sum). */
export function anthropicUsage(usage: DialectUsage): AnthropicUsage {
  const evaluated = usage.evaluatedPromptTokens === undefined ? usage.promptTokens : Math.min(usage.promptTokens, usage.evaluatedPromptTokens);
  return {
    input_tokens: evaluated,
    output_tokens: usage.completionTokens,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: usage.promptTokens - evaluated,
    cache_creation: { ephemeral_1h_input_tokens: 0, ephemeral_5m_input_tokens: 0 },
    inference_geo: null,
    output_tokens_details: null,
    server_tool_use: null,
    service_tier: null,
    speed: null,
  };
}

/**
 * A call's arguments as a `tool_use` block's `input`: the JSON object the model wrote (no text at all is `{}`). Text
 * that is not a JSON object is kept as the string it is, never replaced by `{}`: a client must not run a tool with
 * arguments the model did not write, and the string shows what it wrote. A reflected request with tools has already
 * checked the arguments (`reflect.passed` says whether they passed).
 */
export function toolInput(args: string): unknown {
  if (args.trim() === "") return {};
  try {
    const parsed: unknown = JSON.parse(args);
    return isRecord(parsed) ? parsed : args;
  } catch {
    return args;
  }
}

export interface AnthropicTextBlock {
  type: "text";
  text: string;
  citations: null;
}

export interface AnthropicToolUseBlock {
  type: "tool_use";
  id: string;
  name: string;
  input: unknown;
  caller: { type: "direct" };
}

/** The Message the gateway answers, in Anthropic's shape (the unit tests assign it to the SDK's `Message` type). */
export interface AnthropicMessage {
  id: string;
  type: "message";
  role: "assistant";
  model: string;
  content: Array<AnthropicTextBlock | AnthropicToolUseBlock>;
  stop_reason: "tool_use" | "max_tokens" | "end_turn";
  stop_sequence: null;
  stop_details: null;
  container: null;
  diagnostics: null;
  usage: AnthropicUsage;
  reflect?: ReflectExtension;
}

/** The answer's content blocks: the text (left out when empty and the reply called tools), then one `tool_use` per call. */
function blocks(meta: CompletionMeta, reply: CompletionReply): Array<AnthropicTextBlock | AnthropicToolUseBlock> {
  const calls = reply.toolCalls ?? [];
  const out: Array<AnthropicTextBlock | AnthropicToolUseBlock> = reply.text !== "" || calls.length === 0 ? [{ type: "text", text: reply.text, citations: null }] : [];
  calls.forEach((call, i) => {
    const id = call.id !== "" ? call.id : `toolu_${meta.id.replace(/^msg_/u, "")}_${i}`;
    out.push({ type: "tool_use", id, name: call.name, caller: { type: "direct" }, input: toolInput(call.arguments) });
  });
  return out;
}

/** `tool_use` when the reply called tools, `max_tokens` when it was cut, else `end_turn` (a stop sequence included: see the module's note). */
export function stopReason(reply: CompletionReply): "tool_use" | "max_tokens" | "end_turn" {
  if (reply.toolCalls !== undefined && reply.toolCalls.length > 0) return "tool_use";
  return reply.finishReason === "length" ? "max_tokens" : "end_turn";
}

/** The answer as Anthropic's `Message`, with `reflect` on a reflected request. */
export function anthropicMessage(meta: CompletionMeta, reply: CompletionReply, usage: DialectUsage, reflect?: ReflectExtension): AnthropicMessage {
  return {
    id: meta.id,
    type: "message",
    role: "assistant",
    model: meta.model,
    content: blocks(meta, reply),
    stop_reason: stopReason(reply),
    stop_sequence: null,
    stop_details: null,
    container: null,
    diagnostics: null,
    usage: anthropicUsage(usage),
    ...(reflect === undefined ? {} : { reflect }),
  };
}

const event = (type: string, data: Record<string, unknown>): string => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

/**
 * A settled answer as Anthropic's stream: `messagesWriter` over the reply's parts, a tool call's input as one
 * `input_json_delta` of the JSON it is (`toolInput`), the input usage known on `message_start`.
 */
function events(meta: CompletionMeta, reply: CompletionReply, usage: DialectUsage, reflect?: ReflectExtension): string {
  return settledEvents(messagesWriter(meta, { ...(reflect === undefined ? {} : { reflect }), usage }), settledParts(reply, usage, (args) => JSON.stringify(toolInput(args))));
}

/**
 * Anthropic's stream, part by part: `message_start` (the message without content; its input usage when known before
 * the first part, else 0 until `message_delta`), `ping`; per block `content_block_start`, a `content_block_delta` per
 * part (`text_delta`, or `input_json_delta` with a piece of the call's input JSON) and `content_block_stop` once the
 * next block begins or the reply ends; then `message_delta` (stop reason, the usage) and `message_stop`. A reply with
 * neither text nor tool calls has one empty text block. `reflect` rides on `message_start`'s message — so the SDKs'
 * accumulated final message carries it — and on `message_delta`, as the chat door puts it on its last chunk.
 */
export function messagesWriter(meta: CompletionMeta, known: { reflect?: ReflectExtension; usage?: DialectUsage } = {}): EventWriter {
  const { reflect } = known;
  const tools = new Map<number, number>();
  let blocks = 0;
  let open: { index: number; kind: "text" | "tool" } | undefined;
  let started = false;
  let out: string[] = [];
  const close = (): void => {
    if (open !== undefined) out.push(event("content_block_stop", { index: open.index }));
    open = undefined;
  };
  const begin = (kind: "text" | "tool", block: Record<string, unknown>): number => {
    close();
    const index = blocks++;
    out.push(event("content_block_start", { index, content_block: block }));
    open = { index, kind };
    return index;
  };
  const start = (): void => {
    const whole = anthropicMessage(meta, { text: "", finishReason: "stop" }, known.usage ?? { promptTokens: 0, completionTokens: 0 }, reflect);
    out.push(event("message_start", { message: { ...whole, content: [], stop_reason: null, stop_sequence: null, usage: { ...whole.usage, output_tokens: 0 } } }), event("ping", {}));
  };
  const finish = (part: Extract<ReplyPart, { type: "finish" }>): void => {
    if (blocks === 0) begin("text", { type: "text", text: "", citations: null });
    close();
    const usage = anthropicUsage(part.usage);
    const deltaUsage = { input_tokens: usage.input_tokens, output_tokens: usage.output_tokens, cache_creation_input_tokens: usage.cache_creation_input_tokens, cache_read_input_tokens: usage.cache_read_input_tokens, output_tokens_details: null, server_tool_use: null };
    const stop = tools.size > 0 ? "tool_use" : part.finishReason === "length" ? "max_tokens" : "end_turn";
    out.push(event("message_delta", { delta: { stop_reason: stop, stop_sequence: null, stop_details: null, container: null }, usage: deltaUsage, ...(reflect === undefined ? {} : { reflect }) }));
    out.push(event("message_stop", {}));
  };
  return {
    write(part: ReplyPart): string {
      out = [];
      if (!started) start();
      started = true;
      if (part.type === "text-delta") {
        if (part.text === "") return out.join("");
        const index = open?.kind === "text" ? open.index : begin("text", { type: "text", text: "", citations: null });
        out.push(event("content_block_delta", { index, delta: { type: "text_delta", text: part.text } }));
      } else if (part.type === "tool-call-delta") {
        let index = tools.get(part.index);
        if (index === undefined) {
          const id = part.id !== undefined && part.id !== "" ? part.id : `toolu_${meta.id.replace(/^msg_/u, "")}_${tools.size}`;
          index = begin("tool", { type: "tool_use", id, name: part.name ?? "", caller: { type: "direct" }, input: {} });
          tools.set(part.index, index);
        }
        if (part.argumentsDelta !== "") out.push(event("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: part.argumentsDelta } }));
      } else finish(part);
      return out.join("");
    },
  };
}

/**
 * Anthropic's error type for a status (its documented table: 400, 401, 403, 404, 413, 429, 500, 529; other 4xx are
 * `invalid_request_error`). A 504 is `timeout_error`; a 503 (the gateway's queue is full) `overloaded_error`; a 422
 * (`reflect.on_failure: "error"`, the answer failed its checks) `invalid_request_error`, which Anthropic's clients
 * raise as an error of the request and never retry, with the gateway's `code` and the `reflect` object beside it.
 */
export function anthropicErrorType(status: number): string {
  switch (status) {
    case 401:
      return "authentication_error";
    case 403:
      return "permission_error";
    case 404:
      return "not_found_error";
    case 413:
      return "request_too_large";
    case 429:
      return "rate_limit_error";
    case 503:
    case 529:
      return "overloaded_error";
    case 504:
      return "timeout_error";
    default:
      return status >= 500 ? "api_error" : "invalid_request_error";
  }
}

/** A check's field in this dialect: `output_config.format` for `response_format.json_schema`, a tool's `input_schema` for its parameters. */
function checkField(field: string): string {
  return field
    .replace(/^response_format\.json_schema(?=\.|$)/u, "output_config.format")
    .replace(/^(tools\[\d+\])\.function\.parameters$/u, "$1.input_schema")
    .replace(/^(tools\[\d+\])\.function(?=\.)/u, "$1");
}

function errorBody(error: GatewayError): Record<string, unknown> {
  return {
    type: "error",
    error: { type: anthropicErrorType(error.status), message: error.message, ...(error.param === null ? {} : { param: error.param }), ...(error.code === null ? {} : { code: error.code }) },
    request_id: null,
    ...(error.reflect === undefined ? {} : { reflect: error.reflect }),
  };
}

export const messagesDialect: Dialect = {
  name: "messages",
  route: "/v1/messages",
  upstreamPath: "/messages",
  idPrefix: "msg_",
  parse: parseMessagesRequest,
  asksForReflection,
  answer: (meta, reply, usage, reflect) => ({ ...anthropicMessage(meta, reply, usage, reflect) }),
  events: (meta, reply, usage, _request, reflect) => events(meta, reply, usage, reflect),
  writer: (meta, _request, known) => messagesWriter(meta, known),
  error: errorBody,
  // Anthropic's SDKs raise an `error` event of a stream as an APIError.
  errorEvent: (error) => `event: error\ndata: ${JSON.stringify(errorBody(error))}\n\n`,
  keepAlive: 'event: ping\ndata: {"type": "ping"}\n\n',
  checkField,
};
