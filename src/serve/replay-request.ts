import type { RecordedRequestOptions, RequestCheckSpec, RequestRecord } from "../critics/request/request-task.js";
import type { ChatMessage, ToolDefinition } from "../models/language-model.js";
import { toolInput } from "./dialects/messages.js";
import { dialectNamed, dialectNames, type DialectName } from "./dialects/index.js";

/**
 * A recorded request as a gateway request again: the route of its dialect and a body that the dialect's parser reads
 * back to the same conversation and the same checks (`reflect` holding the regex, task and tests; `response_format`,
 * `tools` and `tool_choice` in the dialect's own fields). One JSON object a line of `held-out-requests.jsonl`
 * (`reflect distill`, written as a record log, whose writer adds the format version and scrubs), which `reflect replay`
 * sends.
 */
export interface ReplayRequest {
  /** The episode id the request was recorded under. */
  id: string;
  dialect: DialectName;
  /** The route to POST the body to, e.g. `/v1/chat/completions`. */
  route: string;
  body: Record<string, unknown>;
}

export interface ReplayRequestOptions {
  /** The body's `model`: the gateway serves one model, so any name does; the record's model by default. */
  model: string;
  /**
   * The answer's token limit for a record that kept no options (written before they were kept); a record whose
   * options hold no `max_tokens` replays without one, except on Messages, which requires one.
   */
  maxTokens: number;
}

/**
 * The body that asks the gateway again what `record` asked: the conversation as the dialect carries it (assistant tool
 * calls and tool results stay in the text form the gateway had turned them into), the checks as the dialect's fields,
 * and a `reflect` object with the checks of the reflect extension. Where the record keeps the request's sampling and
 * `reflect` options (`record.options`), they go in the dialect's own fields, so the gateway runs the same loop request
 * again; an older record gets the gateway's defaults. A record of no known dialect is sent as Chat Completions (records
 * written before the gateway named dialects came from that door).
 */
export function replayRequest(id: string, record: RequestRecord, options: ReplayRequestOptions): ReplayRequest {
  const dialect: DialectName = dialectNames.includes(record.dialect as DialectName) ? (record.dialect as DialectName) : "chat";
  const checks = record.checks;
  const recorded = record.options;
  const reflect = { ...knobs(recorded), ...reflectObject(checks) };
  // A record with options and no `max_tokens` came from a request that set none: its replay sets none either.
  const maxTokens = recorded === undefined ? options.maxTokens : recorded.max_tokens;
  const sampling = { ...(recorded?.temperature === undefined ? {} : { temperature: recorded.temperature }), ...(recorded?.top_p === undefined ? {} : { top_p: recorded.top_p }) };
  const bodies: Record<DialectName, () => Record<string, unknown>> = {
    chat: () => ({
      model: options.model,
      messages: record.messages.map(chatTurn),
      ...(maxTokens === undefined ? {} : { max_tokens: maxTokens }),
      ...sampling,
      ...(recorded?.stop === undefined ? {} : { stop: recorded.stop }),
      ...(recorded?.seed === undefined ? {} : { seed: recorded.seed }),
      ...(recorded?.json_object === true ? { response_format: { type: "json_object" } } : {}),
      ...(checks.schema === undefined ? {} : { response_format: { type: "json_schema", json_schema: { ...(checks.schema.name === undefined ? {} : { name: checks.schema.name }), schema: checks.schema.schema } } }),
      ...toolFields(checks, (t) => ({ type: "function", function: functionOf(t) }), "required"),
      reflect,
    }),
    responses: () => ({
      model: options.model,
      input: record.messages.flatMap(responsesItems),
      ...(maxTokens === undefined ? {} : { max_output_tokens: maxTokens }),
      ...sampling,
      ...(recorded?.json_object === true ? { text: { format: { type: "json_object" } } } : {}),
      ...(checks.schema === undefined ? {} : { text: { format: { type: "json_schema", name: checks.schema.name ?? "answer", schema: checks.schema.schema } } }),
      ...toolFields(checks, (t) => ({ type: "function", ...functionOf(t) }), "required"),
      reflect,
    }),
    messages: () => {
      const system = record.messages.filter((m) => m.role === "system");
      const leading = record.messages.findIndex((m) => m.role !== "system");
      const onlyLeading = system.length === (leading === -1 ? record.messages.length : leading);
      return {
        model: options.model,
        // A system message where Anthropic's API puts it (the top-level `system`) when it leads; elsewhere as recorded.
        ...(onlyLeading && system.length > 0 ? { system: system.map((m) => m.content).join("") } : {}),
        messages: (onlyLeading ? record.messages.filter((m) => m.role !== "system") : record.messages).map(messagesTurn),
        max_tokens: maxTokens ?? options.maxTokens,
        ...sampling,
        ...(recorded?.stop === undefined ? {} : { stop_sequences: recorded.stop }),
        ...(checks.schema === undefined ? {} : { output_config: { format: { type: "json_schema", schema: checks.schema.schema } } }),
        ...toolFields(checks, (t) => ({ name: t.name, ...(t.description === undefined ? {} : { description: t.description }), input_schema: t.parameters ?? { type: "object", properties: {} }, ...(t.strict === undefined ? {} : { strict: t.strict }) }), { type: "any" }),
        reflect,
      };
    },
  };
  return { id, dialect, route: dialectNamed(dialect).route, body: bodies[dialect]() };
}

/** The `reflect` options the record keeps (every one but the checks), under the request's field names. */
function knobs(recorded: RecordedRequestOptions | undefined): Record<string, unknown> {
  const r = recorded?.reflect;
  if (r === undefined) return {};
  return {
    max_turns: r.max_turns,
    feedback: r.feedback,
    ...(r.stop === undefined ? {} : { stop: r.stop }),
    budget: r.budget,
    ...(r.judge === undefined ? {} : { judge: r.judge }),
    ...(r.reflection_max_tokens === undefined ? {} : { reflection_max_tokens: r.reflection_max_tokens }),
    on_failure: r.on_failure,
    ...(r.memory === undefined ? {} : { memory: r.memory }),
  };
}

/** The reflect extension's checks (regex, task and item, tests); the rest of `reflect` is left at the gateway's defaults. */
function reflectObject(checks: RequestCheckSpec): Record<string, unknown> {
  return {
    ...(checks.regex === undefined ? {} : { regex: checks.regex.flags === undefined ? checks.regex.pattern : { pattern: checks.regex.pattern, flags: checks.regex.flags } }),
    ...(checks.task === undefined ? {} : { task: checks.task.name, item: checks.task.item }),
    ...(checks.tests === undefined ? {} : { tests: checks.tests }),
  };
}

/** `tools`, and `tool_choice` where the record required a call (a named tool was recorded as the only one offered). */
function toolFields(checks: RequestCheckSpec, tool: (t: ToolDefinition) => Record<string, unknown>, required: unknown): Record<string, unknown> {
  if (checks.tools === undefined || checks.tools.length === 0) return {};
  return { tools: checks.tools.map(tool), ...(checks.toolsRequired === true ? { tool_choice: required } : {}) };
}

function functionOf(t: ToolDefinition): Record<string, unknown> {
  return { name: t.name, ...(t.description === undefined ? {} : { description: t.description }), ...(t.parameters === undefined ? {} : { parameters: t.parameters }), ...(t.strict === undefined ? {} : { strict: t.strict }) };
}

/** A turn as a Chat Completions message: calls as `tool_calls`, a result as a `tool` message. */
function chatTurn(m: ChatMessage): Record<string, unknown> {
  if (m.role === "tool") return { role: "tool", tool_call_id: m.toolCallId, content: m.content };
  if (m.role !== "assistant" || m.toolCalls === undefined || m.toolCalls.length === 0) return { role: m.role, content: m.content };
  const tool_calls = m.toolCalls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } }));
  return { role: "assistant", content: m.content === "" ? null : m.content, tool_calls };
}

/** A turn as Responses input items: an assistant's text as a message then one `function_call` per call; a result as a `function_call_output`. */
function responsesItems(m: ChatMessage): Array<Record<string, unknown>> {
  if (m.role === "tool") return [{ type: "function_call_output", call_id: m.toolCallId, output: m.content }];
  if (m.role !== "assistant" || m.toolCalls === undefined || m.toolCalls.length === 0) return [{ role: m.role, content: m.content }];
  const calls = m.toolCalls.map((c) => ({ type: "function_call", call_id: c.id, name: c.name, arguments: c.arguments }));
  return [...(m.content === "" ? [] : [{ role: "assistant", content: m.content }]), ...calls];
}

/** A turn as a Messages message: calls as `tool_use` blocks after the text, a result as a user turn's `tool_result`. */
function messagesTurn(m: ChatMessage): Record<string, unknown> {
  if (m.role === "tool") return { role: "user", content: [{ type: "tool_result", tool_use_id: m.toolCallId, content: m.content, ...(m.isError === true ? { is_error: true } : {}) }] };
  if (m.role !== "assistant" || m.toolCalls === undefined || m.toolCalls.length === 0) return { role: m.role, content: m.content };
  const uses = m.toolCalls.map((c) => ({ type: "tool_use", id: c.id, name: c.name, input: toolInput(c.arguments) }));
  return { role: "assistant", content: [...(m.content === "" ? [] : [{ type: "text", text: m.content }]), ...uses] };
}
