/**
 * OpenAI Responses (`POST /v1/responses`) as a dialect: `input` (a string, or message, `function_call` and
 * `function_call_output` items) and `instructions` become the loop's text conversation; `text.format`, function
 * `tools` and `tool_choice` become the same sampling and checks as chat's `response_format`, `tools` and `tool_choice`;
 * the answer is a Response object (`output` items, `usage` over every call the request caused, `reflect`), streamed as
 * the Responses event sequence.
 *
 * The gateway is stateless: it stores no response, so `store` is accepted and honoured as false whatever its value
 * (the answer says `store: false`), and `previous_response_id` or `conversation` are refused with a 400 that says to
 * send the whole conversation in `input`. Hosted tools are left out and named in `x-reflect-dropped-tools`, earlier
 * reasoning items left out, `reasoning.effort` carried (`ChatRequest.reasoningEffort`); background mode, images and
 * files are refused with a 400 naming the field.
 */
import { RequestFieldError } from "../../errors.js";
import type { RequestCheckSpec } from "../../critics/request/request-task.js";
import type { CallSampling } from "../../loops/episode-run.js";
import type { ChatMessage, ToolCall, ToolChoice, ToolDefinition } from "../../models/language-model.js";
import { asksForReflection, droppedToolLabel, openAiEffort, optionalBoolean, optionalInt, optionalNumber, optionalUserId, screenFields, textOfParts, toLoopRequest, type ChatRequest, type FieldRules, type ReasoningEffort, type RequestBounds } from "../loop-request.js";
import { finishReason, openAiUsage, type CompletionMeta, type CompletionReply, type ReflectExtension } from "../response.js";
import { errorBody } from "./chat.js";
import type { Dialect, DialectUsage, GatewayError } from "./dialect.js";
import { settledEvents, settledParts, type EventWriter, type ReplyPart } from "./event-writer.js";
import { refuseInheritedNames } from "../field-names.js";
import { isRecord } from "../../util/is-record.js";

const ID_PREFIX = "resp_";

/** Top-level fields the gateway reads. */
const usedFields = new Set(["model", "stream_options", "input", "instructions", "max_output_tokens", "temperature", "top_p", "stream", "text", "tools", "tool_choice", "reflect", "store", "truncation", "include", "background", "parallel_tool_calls", "metadata", "user", "reasoning"]);
/** Fields accepted and ignored: they do not change what the model writes (`client_metadata` is a client's own tags). */
const ignoredFields = new Set(["service_tier", "safety_identifier", "prompt_cache_key", "prompt_cache_retention", "client_metadata"]);
/** Fields the gateway cannot honour, with what to do instead; accepted only when null. */
const refusedFields: ReadonlyMap<string, string> = new Map([
  ["previous_response_id", "is not supported: the gateway is stateless and stores no responses; send the whole conversation in input"],
  ["conversation", "is not supported: the gateway is stateless and keeps no conversations; send the whole conversation in input"],
  ["prompt", "is not supported: the gateway holds no stored prompts; send instructions and input"],
  ["max_tool_calls", "is not supported by the gateway; remove it"],
  ["context_management", "is not supported by the gateway; remove it"],
  ["background", "is not supported: the gateway answers in the foreground; send background: false or leave it out"],
]);
/** Fields with an effect the gateway cannot honour: accepted only at their neutral value. */
const neutralFields: FieldRules["neutral"] = new Map([["top_logprobs", { neutral: (v: unknown) => v === 0 }]]);
const toolFields = new Set(["type", "name", "description", "parameters", "strict"]);

/** The request fields a Response object repeats, as this dialect's `parse` read them (`ChatRequest.echo`). */
export type ResponsesEcho = {
  instructions: string | null;
  max_output_tokens: number | null;
  metadata: Record<string, string> | null;
  parallel_tool_calls: boolean;
  temperature: number | null;
  top_p: number | null;
  tool_choice: ResponsesToolChoice;
  tools: ResponsesFunctionTool[];
  text: { format: ResponsesTextFormat };
  user?: string;
};

export type ResponsesToolChoice = "none" | "auto" | "required" | { type: "function"; name: string };
export interface ResponsesFunctionTool {
  type: "function";
  name: string;
  description: string | null;
  parameters: Record<string, unknown> | null;
  strict: boolean | null;
}
export type ResponsesTextFormat = { type: "text" } | { type: "json_object" } | { type: "json_schema"; name: string; schema: Record<string, unknown>; strict?: boolean | null; description?: string };

/** What a Response object says of a request whose fields were not echoed: the API's defaults. */
const defaultEcho: ResponsesEcho = {
  instructions: null,
  max_output_tokens: null,
  metadata: null,
  parallel_tool_calls: true,
  temperature: null,
  top_p: null,
  tool_choice: "auto",
  tools: [],
  text: { format: { type: "text" } },
};

/**
 * Parses and validates a Responses body into the loop's request. Every problem is a `RequestFieldError` naming the
 * field as the client wrote it (`input[2].content[0]`, `tools[1].type`, `text.format.schema`).
 */
export function parseResponsesRequest(body: unknown, bounds: RequestBounds): ChatRequest {
  if (!isRecord(body)) throw new RequestFieldError("body", "must be a JSON object");
  screenFields(body, { used: usedFields, ignored: ignoredFields, refused: refusedFields, neutral: neutralFields });
  if (body.model !== undefined && body.model !== null && typeof body.model !== "string") throw new RequestFieldError("model", "must be a string");
  if (optionalBoolean(body, "background") === true) throw new RequestFieldError("background", refusedFields.get("background") as string);
  optionalBoolean(body, "store");
  const parallel = optionalBoolean(body, "parallel_tool_calls");
  if (body.truncation !== undefined && body.truncation !== null && body.truncation !== "disabled") {
    throw new RequestFieldError("truncation", "must be disabled: the gateway never drops input to fit the context");
  }
  const encrypted = parseInclude(body.include);
  const metadata = parseMetadata(body.metadata);
  const user = optionalUserId(body.user, "user");
  const reasoningEffort = parseReasoning(body.reasoning);
  const instructions = body.instructions ?? undefined;
  if (instructions !== undefined && typeof instructions !== "string") throw new RequestFieldError("instructions", "must be a string");
  const messages = [...(instructions === undefined ? [] : [{ role: "system" as const, content: instructions }]), ...parseInput(body.input)];
  const maxOutputTokens = optionalInt(body, "max_output_tokens", 1);
  const temperature = optionalNumber(body, "temperature", 0, 2);
  const topP = optionalNumber(body, "top_p", 0, 1);
  const stream = optionalBoolean(body, "stream") ?? false;
  parseStreamOptions(body.stream_options);
  const format = parseText(body.text);
  const { tools, offered, choice, toolChoice, droppedTools } = parseTools(body.tools, body.tool_choice);
  const echo: ResponsesEcho = {
    instructions: instructions ?? null,
    max_output_tokens: maxOutputTokens ?? null,
    metadata,
    parallel_tool_calls: parallel ?? true,
    temperature: temperature ?? null,
    top_p: topP ?? null,
    tool_choice: choice,
    tools,
    text: { format: format.echo },
    ...(user === undefined ? {} : { user }),
  };
  const asked = body.reasoning !== undefined && body.reasoning !== null;
  const shape: ResponsesAnswerShape = asked || encrypted ? { reasoningItem: { encrypted } } : {};
  // Carried on the loop's request, not sent upstream (`ChatRequest.reasoningEffort`, `ChatRequest.user`).
  const carried = { ...(reasoningEffort === undefined ? {} : { reasoningEffort }), ...(user === undefined ? {} : { user }), droppedTools };
  return toLoopRequest({ messages, maxTokens: maxOutputTokens, temperature, topP, format, tools: offered, ...(toolChoice === undefined ? {} : { toolChoice }), stream, includeUsage: true, reflect: body.reflect, echo: { ...echo, ...shape }, ...carried }, bounds);
}

/**
 * `reasoning`: its `effort` on the loop's scale (`openAiEffort`); `summary` (and the older `generate_summary`) is
 * accepted and ignored. Asking for reasoning gets an empty reasoning item (`ResponsesReasoningItem`), never a
 * summary: the upstream's thinking is not OpenAI's, and the gateway writes none of its own.
 */
function parseReasoning(value: unknown): ReasoningEffort | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isRecord(value)) throw new RequestFieldError("reasoning", "must be an object { effort?, summary? }");
  refuseInheritedNames(value, "reasoning");
  for (const key of Object.keys(value)) if (key !== "effort" && key !== "summary" && key !== "generate_summary") throw new RequestFieldError(`reasoning.${key}`, "is not a reasoning field; use effort or summary");
  for (const key of ["summary", "generate_summary"]) {
    const summary = value[key];
    if (summary !== undefined && summary !== null && summary !== "auto" && summary !== "concise" && summary !== "detailed") throw new RequestFieldError(`reasoning.${key}`, "must be auto, concise or detailed");
  }
  return openAiEffort(value.effort, "reasoning.effort");
}

/** What `include` may name: data the gateway has none of, answered empty (`reasoningItemOf`). */
const includable = new Set(["reasoning.encrypted_content"]);

/** Whether `include` names `reasoning.encrypted_content`. */
function parseInclude(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  if (!Array.isArray(value)) throw new RequestFieldError("include", "must be an array of strings");
  value.forEach((entry, i) => {
    if (typeof entry !== "string" || !includable.has(entry)) throw new RequestFieldError(`include[${i}]`, `is not supported by the gateway: it has no such output data; remove it (accepted: ${[...includable].join(", ")})`);
  });
  return value.includes("reasoning.encrypted_content");
}

/** `stream_options.include_obfuscation` is accepted either way: the gateway streams a settled answer and pads no delta. */
function parseStreamOptions(value: unknown): void {
  if (value === undefined || value === null) return;
  if (!isRecord(value)) throw new RequestFieldError("stream_options", "must be an object");
  for (const [key, v] of Object.entries(value)) {
    if (key !== "include_obfuscation") throw new RequestFieldError(`stream_options.${key}`, "is not supported by the gateway; remove it");
    if (v !== undefined && v !== null && typeof v !== "boolean") throw new RequestFieldError("stream_options.include_obfuscation", "must be true or false");
  }
}

function parseMetadata(value: unknown): Record<string, string> | null {
  if (value === undefined || value === null) return null;
  if (!isRecord(value)) throw new RequestFieldError("metadata", "must be an object of up to 16 string values");
  const entries = Object.entries(value);
  if (entries.length > 16) throw new RequestFieldError("metadata", "has at most 16 keys");
  for (const [key, v] of entries) {
    if (key.length > 64) throw new RequestFieldError("metadata", "keys are at most 64 characters");
    if (typeof v !== "string" || v.length > 512) throw new RequestFieldError(`metadata.${key}`, "must be a string of at most 512 characters");
  }
  return value as Record<string, string>;
}

/**
 * `input` as the loop's messages. Consecutive `function_call` items, and an assistant message just before them, are
 * one assistant turn carrying the calls (`toolCalls`); a `function_call_output` is a `tool` message answering its
 * `call_id`, as chat's role `tool` is.
 */
function parseInput(value: unknown): ChatMessage[] {
  if (typeof value === "string") return [{ role: "user", content: value }];
  if (!Array.isArray(value) || value.length === 0) throw new RequestFieldError("input", "must be a string or a non-empty array of input items");
  const messages: ChatMessage[] = [];
  let turn: { output: string; toolCalls: ToolCall[] } | undefined;
  const close = () => {
    if (turn !== undefined) messages.push({ role: "assistant", content: turn.output, ...(turn.toolCalls.length === 0 ? {} : { toolCalls: turn.toolCalls }) });
    turn = undefined;
  };
  value.forEach((item, i) => {
    const at = `input[${i}]`;
    if (!isRecord(item)) throw new RequestFieldError(at, "must be an input item object");
    refuseInheritedNames(item, at);
    const type = item.type ?? "message";
    // Earlier reasoning (encrypted or summarised) belongs to the model that wrote it: left out, the turn left open.
    if (type === "reasoning") return;
    if (type === "function_call") {
      const call = parseFunctionCall(item, at);
      if (turn === undefined) turn = { output: "", toolCalls: [] };
      turn.toolCalls.push(call);
      return;
    }
    close();
    if (type === "message") {
      const message = parseMessage(item, at);
      if (message.role === "assistant") turn = { output: message.content, toolCalls: [] };
      else messages.push(message);
      return;
    }
    if (type === "function_call_output") {
      if (typeof item.call_id !== "string" || item.call_id === "") throw new RequestFieldError(`${at}.call_id`, "must be the call_id of the function_call it answers");
      const output = partsText(item.output, `${at}.output`);
      messages.push({ role: "tool", toolCallId: item.call_id, content: output });
      return;
    }
    throw new RequestFieldError(at, `items of type ${JSON.stringify(type)} are not supported by the gateway; send message, function_call, function_call_output and reasoning items`);
  });
  close();
  return messages;
}

function parseMessage(item: Record<string, unknown>, at: string): ChatMessage {
  const content = () => partsText(item.content, `${at}.content`);
  switch (item.role) {
    case "system":
    case "developer":
      return { role: "system", content: content() };
    case "user":
      return { role: "user", content: content() };
    case "assistant":
      return { role: "assistant", content: content() };
    default:
      throw new RequestFieldError(`${at}.role`, "must be user, system, developer or assistant");
  }
}

function parseFunctionCall(item: Record<string, unknown>, at: string): ToolCall {
  if (typeof item.call_id !== "string" || item.call_id === "") throw new RequestFieldError(`${at}.call_id`, "must be a non-empty string");
  if (typeof item.name !== "string" || item.name === "") throw new RequestFieldError(`${at}.name`, "must be a non-empty string");
  if (typeof item.arguments !== "string") throw new RequestFieldError(`${at}.arguments`, "must be a string of JSON");
  return { id: item.call_id, name: item.name, arguments: item.arguments };
}

/** A message's content or a tool's output as text: a string, or text parts. Images, files and audio are refused. */
function partsText(value: unknown, field: string): string {
  return textOfParts(value, field, ["input_text", "output_text"], " by the gateway; send input_text or output_text parts only");
}

/** `text.format` as chat's `response_format` maps: json_schema → the upstream's JSON mode with the schema, and the schema check. */
function parseText(value: unknown): { schema?: RequestCheckSpec["schema"]; responseFormat?: CallSampling["responseFormat"]; echo: ResponsesTextFormat } {
  if (value === undefined || value === null) return { echo: { type: "text" } };
  if (!isRecord(value)) throw new RequestFieldError("text", "must be an object { format }");
  for (const key of Object.keys(value)) if (key !== "format" && key !== "verbosity") throw new RequestFieldError(`text.${key}`, "is not supported by the gateway; remove it");
  // `verbosity` is accepted and ignored: the upstream is asked for no length, the client's max_output_tokens bounds it.
  if (value.verbosity !== undefined && value.verbosity !== null && !["low", "medium", "high"].includes(value.verbosity as string)) throw new RequestFieldError("text.verbosity", "must be low, medium or high");
  const format = value.format;
  if (format === undefined || format === null) return { echo: { type: "text" } };
  if (!isRecord(format)) throw new RequestFieldError("text.format", "must be an object with a type");
  refuseInheritedNames(format, "text.format");
  if (format.type === "text") return { echo: { type: "text" } };
  // JSON mode: any JSON object; the upstream is asked for it, and no schema check applies.
  if (format.type === "json_object") return { responseFormat: { type: "json", schema: { type: "object" } }, echo: { type: "json_object" } };
  if (format.type !== "json_schema") throw new RequestFieldError("text.format.type", "must be text, json_object or json_schema");
  if (typeof format.name !== "string" || !/^[A-Za-z0-9_-]{1,64}$/u.test(format.name)) throw new RequestFieldError("text.format.name", "must be 1–64 letters, digits, _ or -");
  if (!isRecord(format.schema)) throw new RequestFieldError("text.format.schema", "must be a JSON schema object");
  if (format.strict !== undefined && format.strict !== null && typeof format.strict !== "boolean") throw new RequestFieldError("text.format.strict", "must be true or false");
  if (format.description !== undefined && typeof format.description !== "string") throw new RequestFieldError("text.format.description", "must be a string");
  const schema = format.schema;
  const echo: ResponsesTextFormat = {
    type: "json_schema",
    name: format.name,
    schema,
    ...(format.description === undefined ? {} : { description: format.description as string }),
    ...(format.strict === undefined ? {} : { strict: format.strict as boolean | null }),
  };
  return { schema: { name: format.name, schema }, responseFormat: { type: "json", schema }, echo };
}

/**
 * Function `tools` (flat: `{ type: "function", name, parameters }`) and `tool_choice`, as chat's: `none` offers no
 * tools, `required` or a named function makes a reply without a tool call fail the tools check, and a named function
 * is the only one offered. `tools` is what the answer echoes; `offered` what the upstream is given and checked against.
 */
function parseTools(value: unknown, choice: unknown): { tools: ResponsesFunctionTool[]; offered?: ToolDefinition[]; choice: ResponsesToolChoice; toolChoice?: ToolChoice; droppedTools: string[] } {
  const { tools, droppedTools } = value === undefined || value === null ? { tools: [], droppedTools: [] } : parseToolList(value);
  if (choice === undefined || choice === null || choice === "auto" || choice === "none") {
    const offered = choice === "none" || tools.length === 0 ? undefined : tools.map(definition);
    return { tools, ...(offered === undefined ? {} : { offered }), choice: choice === "none" ? "none" : "auto", droppedTools };
  }
  if (isRecord(choice)) refuseInheritedNames(choice, "tool_choice");
  if (isRecord(choice) && hostedTool(choice.type)) {
    throw new RequestFieldError("tool_choice", `forces a ${String(choice.type)} tool, which the gateway leaves out (no upstream it speaks can run it); send tool_choice auto or name a function tool`);
  }
  if (tools.length === 0 && droppedTools.length > 0) throw new RequestFieldError("tool_choice", "forces a tool call, but every tool offered is one the gateway leaves out; send tool_choice auto or offer a function tool");
  if (tools.length === 0) throw new RequestFieldError("tool_choice", "needs tools");
  if (choice === "required") return { tools, offered: tools.map(definition), choice, toolChoice: { type: "required" }, droppedTools };
  const name = isRecord(choice) && choice.type === "function" ? choice.name : undefined;
  const named = tools.filter((t) => t.name === name);
  if (named.length === 0) throw new RequestFieldError("tool_choice", "must be none, auto, required or { type: \"function\", name } naming one of tools");
  // A forced function: it is the only one offered, and the reply must call it.
  return { tools, offered: named.map(definition), choice: { type: "function", name: name as string }, toolChoice: { type: "tool", name: name as string }, droppedTools };
}

/**
 * Tools OpenAI runs itself or that need OpenAI's model (hosted search, files, code, images, computer use, MCP, a shell,
 * freeform `custom` tools and `namespace` groups): a dated variant (`web_search_preview_2025_03_11`) is its type.
 */
const hostedTools = new Set(["web_search", "web_search_preview", "namespace", "custom", "local_shell", "shell", "apply_patch", "file_search", "code_interpreter", "image_generation", "computer_use_preview", "computer_use", "mcp"]);

function hostedTool(type: unknown): boolean {
  return typeof type === "string" && hostedTools.has(type.replace(/_\d{4}_\d{2}_\d{2}$/u, ""));
}

/**
 * The function tools, and the hosted ones left out of what the upstream sees (`ChatRequest.droppedTools`, as `type`
 * or `type:name`, an MCP tool by its `server_label`). Any other type is refused naming it.
 */
function parseToolList(value: unknown): { tools: ResponsesFunctionTool[]; droppedTools: string[] } {
  if (!Array.isArray(value)) throw new RequestFieldError("tools", "must be an array of { type: \"function\", name, parameters }");
  const droppedTools: string[] = [];
  const tools = value.flatMap((tool, i): ResponsesFunctionTool[] => {
    const at = `tools[${i}]`;
    if (!isRecord(tool)) throw new RequestFieldError(at, "must be { type: \"function\", name, description?, parameters?, strict? }");
    if (hostedTool(tool.type)) {
      refuseInheritedNames(tool, at);
      droppedTools.push(droppedToolLabel(tool, at, tool.type === "mcp" ? "server_label" : "name"));
      return [];
    }
    if (tool.type !== "function") throw new RequestFieldError(`${at}.type`, `tools of type ${JSON.stringify(tool.type)} are not supported by the gateway; send function tools (hosted tools are left out)`);
    for (const [key, v] of Object.entries(tool)) if (!toolFields.has(key) && v !== undefined && v !== null) throw new RequestFieldError(`${at}.${key}`, "is not supported by the gateway; remove it");
    if (typeof tool.name !== "string" || !/^[A-Za-z0-9_-]{1,64}$/u.test(tool.name)) throw new RequestFieldError(`${at}.name`, "must be 1–64 letters, digits, _ or -");
    const description = tool.description ?? null;
    if (description !== null && typeof description !== "string") throw new RequestFieldError(`${at}.description`, "must be a string");
    const parameters = tool.parameters ?? null;
    if (parameters !== null && !isRecord(parameters)) throw new RequestFieldError(`${at}.parameters`, "must be a JSON schema object");
    const strict = tool.strict ?? null;
    if (strict !== null && typeof strict !== "boolean") throw new RequestFieldError(`${at}.strict`, "must be true or false");
    return [{ type: "function", name: tool.name, description, parameters, strict }];
  });
  return { tools, droppedTools };
}

function definition(tool: ResponsesFunctionTool): ToolDefinition {
  return {
    name: tool.name,
    ...(tool.description === null ? {} : { description: tool.description }),
    ...(tool.parameters === null ? {} : { parameters: tool.parameters }),
    ...(tool.strict === null ? {} : { strict: tool.strict }),
  };
}

/** A check's field in this dialect: `text.format` for `response_format.json_schema`, flat function tools. */
function checkField(field: string): string {
  return field.replace(/^response_format\.json_schema(?=\.|$)/u, "text.format").replace(/^(tools\[\d+\])\.function(?=\.)/u, "$1");
}

export interface ResponsesOutputText {
  type: "output_text";
  text: string;
  annotations: never[];
  logprobs: never[];
}
export interface ResponsesMessageItem {
  type: "message";
  id: string;
  status: "in_progress" | "completed" | "incomplete";
  role: "assistant";
  content: ResponsesOutputText[];
}
export interface ResponsesFunctionCallItem {
  type: "function_call";
  id: string;
  call_id: string;
  name: string;
  arguments: string;
  status: "in_progress" | "completed" | "incomplete";
}
/**
 * The reasoning item a request asking for reasoning is answered with, first in `output`: its `summary` is always
 * empty and it has no `content`, since the upstream's thinking (if any) is not OpenAI's and the gateway writes none
 * of its own; `encrypted_content`, when `include` names it, is the empty string, carrying nothing. A client sends it
 * back on its next turn and the gateway leaves it out again.
 */
export interface ResponsesReasoningItem {
  type: "reasoning";
  id: string;
  summary: never[];
  encrypted_content?: string;
  status: "completed";
}
export type ResponsesOutputItem = ResponsesReasoningItem | ResponsesMessageItem | ResponsesFunctionCallItem;

/** What the answer's shape takes from the request beside its echoed fields: whether it opens with a reasoning item. */
export interface ResponsesAnswerShape {
  reasoningItem?: { encrypted: boolean };
}

/** The reasoning item `meta.echo` asks for (`ResponsesAnswerShape`), or none. */
function reasoningItemOf(meta: CompletionMeta): ResponsesReasoningItem | undefined {
  const asked = (meta.echo as ResponsesAnswerShape | undefined)?.reasoningItem;
  if (asked === undefined) return undefined;
  return { type: "reasoning", id: `rs_${idSuffix(meta)}_0`, summary: [], ...(asked.encrypted ? { encrypted_content: "" } : {}), status: "completed" };
}

export interface ResponsesUsage {
  input_tokens: number;
  /** `cache_write_tokens` is OpenAI's billing of prompt-cache writes: the gateway bills none. */
  input_tokens_details: { cached_tokens: number; cache_write_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

/** The Response object the gateway answers with (`output_text` is not a server field: OpenAI's SDKs compute it). */
export interface ResponsesObject extends ResponsesEcho {
  id: string;
  object: "response";
  created_at: number;
  status: "in_progress" | "completed" | "incomplete";
  model: string;
  output: ResponsesOutputItem[];
  usage: ResponsesUsage;
  error: null;
  incomplete_details: { reason: "max_output_tokens" } | null;
  access_programs: null;
  background: false;
  previous_response_id: null;
  reasoning: null;
  store: false;
  truncation: "disabled";
  reflect?: ReflectExtension;
}

export function responsesUsage(usage: DialectUsage): ResponsesUsage {
  const openAi = openAiUsage(usage);
  return {
    input_tokens: openAi.prompt_tokens,
    input_tokens_details: { cached_tokens: openAi.prompt_tokens_details.cached_tokens, cache_write_tokens: 0 },
    output_tokens: openAi.completion_tokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: openAi.total_tokens,
  };
}

/** The part of an answer's id after `resp_`, from which its items' ids are made (`msg_<suffix>_0`, `fc_<suffix>_1`). */
function idSuffix(meta: CompletionMeta): string {
  return meta.id.startsWith(ID_PREFIX) ? meta.id.slice(ID_PREFIX.length) : meta.id;
}

/** Whether the reply was cut at the token limit (a reply with tool calls is not: as chat's `finish_reason`). */
function cut(reply: CompletionReply): boolean {
  return finishReason(reply) === "length";
}

/**
 * The reply as output items: an assistant message with the text (present when there is text, or when there are no
 * tool calls), then one `function_call` item per tool call. Ids come from the answer's id.
 */
export function outputItems(meta: CompletionMeta, reply: CompletionReply): ResponsesOutputItem[] {
  const suffix = idSuffix(meta);
  const calls = reply.toolCalls ?? [];
  const reasoning = reasoningItemOf(meta);
  const items: ResponsesOutputItem[] = reasoning === undefined ? [] : [reasoning];
  if (reply.text !== "" || calls.length === 0) {
    items.push({
      type: "message",
      id: `msg_${suffix}_${items.length}`,
      status: cut(reply) ? "incomplete" : "completed",
      role: "assistant",
      content: [{ type: "output_text", text: reply.text, annotations: [], logprobs: [] }],
    });
  }
  for (const call of calls) {
    const index = items.length;
    items.push({ type: "function_call", id: `fc_${suffix}_${index}`, call_id: call.id === "" ? `call_${suffix}_${index}` : call.id, name: call.name, arguments: call.arguments, status: "completed" });
  }
  return items;
}

/**
 * The Response object. Request fields it repeats (`instructions`, `tools`, `temperature`, …) come from `meta.echo`,
 * which the gateway copies from `ChatRequest.echo`; absent, the API's defaults stand in.
 */
export function responseObject(meta: CompletionMeta, reply: CompletionReply, usage: DialectUsage, reflect?: ReflectExtension): ResponsesObject {
  // `echo` is what this dialect's own parse wrote.
  const { reasoningItem: _shape, ...echo } = { ...defaultEcho, ...(meta.echo as (Partial<ResponsesEcho> & ResponsesAnswerShape) | undefined) };
  const incomplete = cut(reply);
  return {
    id: meta.id,
    object: "response",
    created_at: meta.created,
    status: incomplete ? "incomplete" : "completed",
    model: meta.model,
    output: outputItems(meta, reply),
    usage: responsesUsage(usage),
    error: null,
    incomplete_details: incomplete ? { reason: "max_output_tokens" } : null,
    access_programs: null,
    background: false,
    previous_response_id: null,
    reasoning: null,
    store: false,
    truncation: "disabled",
    ...echo,
    ...(reflect === undefined ? {} : { reflect }),
  };
}

/**
 * The whole Responses event stream of a settled answer: `responsesWriter` over the reply's parts.
 */
export function responseEvents(meta: CompletionMeta, reply: CompletionReply, usage: DialectUsage, reflect?: ReflectExtension): string {
  return settledEvents(responsesWriter(meta, reflect), settledParts(reply, usage));
}

/** An output item a Responses stream has opened: a message with its text so far, or a function call with its arguments. */
type OpenItem = { kind: "message"; index: number; id: string; text: string } | { kind: "call"; index: number; item: Extract<ResponsesOutputItem, { type: "function_call" }> };

/**
 * The Responses event stream, part by part, each event `event: <type>` with its JSON and a `sequence_number` counting
 * from 0: `response.created` and `response.in_progress` (status `in_progress`, no output, no usage); per output item
 * `response.output_item.added`, then a message's content (`response.content_part.added`, a
 * `response.output_text.delta` per text delta, `response.output_text.done`, `response.content_part.done`) or a
 * call's arguments (a `response.function_call_arguments.delta` per piece, `.done`), and `response.output_item.done`
 * once the next item begins or the reply ends; last `response.completed` with the whole answer — or
 * `response.incomplete`, as OpenAI ends a stream cut at `max_output_tokens`. A reply with neither text nor tool calls
 * has one empty message. Ids are the answer's (`msg_<suffix>_<index>`, `fc_<suffix>_<index>`), as `outputItems` makes them.
 */
export function responsesWriter(meta: CompletionMeta, reflect?: ReflectExtension): EventWriter {
  const suffix = idSuffix(meta);
  const items: ResponsesOutputItem[] = [];
  const calls = new Map<number, Extract<OpenItem, { kind: "call" }>>();
  let open: OpenItem | undefined;
  let sequence = 0;
  let out: string[] = [];
  const emit = (type: string, fields: Record<string, unknown>): void => {
    out.push(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...fields })}\n\n`);
  };
  const close = (incomplete: boolean): void => {
    if (open?.kind === "message") {
      const at = { item_id: open.id, output_index: open.index, content_index: 0 };
      const part = { type: "output_text" as const, text: open.text, annotations: [], logprobs: [] };
      emit("response.output_text.done", { ...at, text: open.text, logprobs: [] });
      emit("response.content_part.done", { ...at, part });
      const item: ResponsesOutputItem = { type: "message", id: open.id, status: incomplete ? "incomplete" : "completed", role: "assistant", content: [part] };
      items[open.index] = item;
      emit("response.output_item.done", { output_index: open.index, item });
    } else if (open?.kind === "call") {
      const { item, index } = open;
      emit("response.function_call_arguments.done", { item_id: item.id, output_index: index, arguments: item.arguments });
      items[index] = item;
      emit("response.output_item.done", { output_index: index, item });
    }
    open = undefined;
  };
  const openMessage = (): Extract<OpenItem, { kind: "message" }> => {
    close(false);
    const message = { kind: "message" as const, index: items.length, id: `msg_${suffix}_${items.length}`, text: "" };
    items.push({ type: "message", id: message.id, status: "in_progress", role: "assistant", content: [] });
    emit("response.output_item.added", { output_index: message.index, item: { type: "message", id: message.id, status: "in_progress", role: "assistant", content: [] } });
    emit("response.content_part.added", { item_id: message.id, output_index: message.index, content_index: 0, part: { type: "output_text", text: "", annotations: [], logprobs: [] } });
    open = message;
    return message;
  };
  const callOf = (part: Extract<ReplyPart, { type: "tool-call-delta" }>): Extract<OpenItem, { kind: "call" }> => {
    const known = calls.get(part.index);
    if (known !== undefined) return known;
    close(false);
    const index = items.length;
    const item = { type: "function_call" as const, id: `fc_${suffix}_${index}`, call_id: part.id === undefined || part.id === "" ? `call_${suffix}_${index}` : part.id, name: part.name ?? "", arguments: "", status: "completed" as const };
    items.push(item);
    emit("response.output_item.added", { output_index: index, item: { ...item, status: "in_progress" } });
    const call = { kind: "call" as const, index, item };
    calls.set(part.index, call);
    open = call;
    return call;
  };
  const start = (): void => {
    // As OpenAI's stream opens: the response under way, with no output and no usage yet.
    const { reflect: _omitted, ...rest } = responseObject(meta, { text: "", finishReason: "stop" }, { promptTokens: 0, completionTokens: 0 });
    const pending = { ...rest, status: "in_progress", output: [], usage: null, incomplete_details: null };
    emit("response.created", { response: pending });
    emit("response.in_progress", { response: pending });
    const reasoning = reasoningItemOf(meta);
    if (reasoning === undefined) return;
    items.push(reasoning);
    emit("response.output_item.added", { output_index: 0, item: reasoning });
    emit("response.output_item.done", { output_index: 0, item: reasoning });
  };
  return {
    write(part: ReplyPart): string {
      out = [];
      if (sequence === 0) start();
      if (part.type === "text-delta") {
        const message = open?.kind === "message" ? open : openMessage();
        message.text += part.text;
        if (part.text !== "") emit("response.output_text.delta", { item_id: message.id, output_index: message.index, content_index: 0, delta: part.text, logprobs: [] });
      } else if (part.type === "tool-call-delta") {
        const call = callOf(part);
        call.item.arguments += part.argumentsDelta;
        if (part.argumentsDelta !== "") emit("response.function_call_arguments.delta", { item_id: call.item.id, output_index: call.index, delta: part.argumentsDelta });
      } else {
        const incomplete = calls.size === 0 && part.finishReason === "length";
        if (!items.some((item) => item.type !== "reasoning")) openMessage();
        close(incomplete);
        const final = { ...responseObject(meta, { text: "", finishReason: incomplete ? "length" : "stop" }, part.usage, reflect), output: items };
        emit(incomplete ? "response.incomplete" : "response.completed", { response: final });
      }
      return out.join("");
    },
  };
}

/**
 * An error as the Responses stream's `error` event. It carries the published event's flat fields (`code`, `message`,
 * `param`) and OpenAI's nested `error` object, from which OpenAI's SDKs raise an APIError with the error's type. It
 * is the stream's first event (only keep-alive comments came before), so its sequence number is 0.
 */
export function responsesErrorEvent(error: GatewayError): string {
  const nested = { type: error.type, code: error.code, message: error.message, param: error.param };
  const data = { type: "error", sequence_number: 0, code: error.code, message: error.message, param: error.param, error: nested, ...(error.reflect === undefined ? {} : { reflect: error.reflect }) };
  return `event: error\ndata: ${JSON.stringify(data)}\n\n`;
}

export const responsesDialect: Dialect = {
  name: "responses",
  route: "/v1/responses",
  upstreamPath: "/responses",
  idPrefix: ID_PREFIX,
  parse: parseResponsesRequest,
  asksForReflection,
  answer: (meta, reply, usage, reflect) => ({ ...responseObject(meta, reply, usage, reflect) }),
  // Usage is always part of a Response, so `includeUsage` does not apply.
  events: (meta, reply, usage, _request, reflect) => responseEvents(meta, reply, usage, reflect),
  writer: (meta, _request, known) => responsesWriter(meta, known?.reflect),
  error: errorBody,
  errorEvent: responsesErrorEvent,
  keepAlive: ": keep-alive\n\n",
  checkField,
};
