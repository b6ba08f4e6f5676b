/**
 * What the redaction tests share: each dialect's event stream as an upstream writes it (text split into deltas, tool
 * arguments or input JSON split likewise), and what a client decodes from a stream — every event's data, and each
 * stream's deltas concatenated as the dialect's SDKs concatenate them. Not a test file itself.
 */
import type { DialectName } from "./dialects/index.js";
import type { Behaviour } from "./serve-harness.js";

/** What an upstream streams: the text's deltas and one tool call's argument deltas, and (Messages, Responses) reasoning. */
export interface StreamPlan {
  text: readonly string[];
  args?: readonly string[];
  thinking?: readonly string[];
}

/** One SSE event as a client parses it: its `event:` name (if any) and its data. */
export interface ParsedEvent {
  event: string | undefined;
  data: string;
}

/** The events of an SSE body, as the SSE spec dispatches them (an unterminated last event is dropped). */
export function parseSse(body: string): ParsedEvent[] {
  const out: ParsedEvent[] = [];
  let data: string[] = [];
  let event: string | undefined;
  for (const line of body.split(/\r\n|\r|\n/u)) {
    if (line === "") {
      if (data.length > 0) out.push({ event, data: data.join("\n") });
      data = [];
      event = undefined;
      continue;
    }
    const colon = line.indexOf(":");
    const name = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /u, "");
    if (name === "data") data.push(value);
    else if (name === "event") event = value;
  }
  return out;
}

/** Each stream's deltas concatenated, by stream name (`text`, `args`, `thinking`), and every string the events hold. */
export interface Decoded {
  streams: Record<string, string>;
  /** Every string value of every event's data, parsed (the `.done` events' full texts, the final response, …). */
  strings: string[];
}

const add = (streams: Record<string, string>, name: string, text: unknown): void => {
  if (typeof text === "string") streams[name] = (streams[name] ?? "") + text;
};

function strings(value: unknown, out: string[]): void {
  if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) for (const item of value) strings(item, out);
  else if (typeof value === "object" && value !== null) for (const [k, v] of Object.entries(value)) (out.push(k), strings(v, out));
}

/** What a client decodes from an SSE body of `dialect`. */
export function decodeStream(dialect: DialectName, body: string): Decoded {
  const decoded: Decoded = { streams: {}, strings: [] };
  for (const { data } of parseSse(body)) {
    if (data.startsWith("[DONE]")) continue;
    const event = JSON.parse(data) as Record<string, any>;
    strings(event, decoded.strings);
    if (dialect === "chat") {
      for (const choice of event.choices ?? []) {
        add(decoded.streams, "text", choice.delta?.content);
        add(decoded.streams, "thinking", choice.delta?.reasoning_content);
        for (const call of choice.delta?.tool_calls ?? []) add(decoded.streams, `args${call.index === 0 ? "" : call.index}`, call.function?.arguments);
      }
    } else if (dialect === "responses") {
      if (event.type === "response.output_text.delta") add(decoded.streams, "text", event.delta);
      if (event.type === "response.function_call_arguments.delta") add(decoded.streams, "args", event.delta);
      if (event.type === "response.reasoning_text.delta") add(decoded.streams, "thinking", event.delta);
    } else {
      if (event.type === "content_block_start") {
        add(decoded.streams, "text", event.content_block?.text);
        add(decoded.streams, "thinking", event.content_block?.thinking);
      }
      if (event.type === "content_block_delta") {
        add(decoded.streams, "text", event.delta?.text);
        add(decoded.streams, "args", event.delta?.partial_json);
        add(decoded.streams, "thinking", event.delta?.thinking);
      }
    }
  }
  return decoded;
}

/**
 * What a body shows of its events, strings aside: each event's name and its data with every string replaced by its
 * length. Two bodies alike here differ only in what their strings say.
 */
export function eventShape(body: string): unknown[] {
  const shape = (value: unknown): unknown => {
    if (typeof value === "string") return value.length;
    if (Array.isArray(value)) return value.map(shape);
    if (typeof value === "object" && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, shape(v)]));
    return value;
  };
  return parseSse(body).map(({ event, data }) => [event, data.startsWith("[DONE]") ? data : shape(JSON.parse(data))]);
}

const sse = (type: string | undefined, data: Record<string, unknown>): string => `${type === undefined ? "" : `event: ${type}\n`}data: ${JSON.stringify(data)}\n\n`;

/** The events an upstream of `dialect` streams for `plan`, one string each, as OpenAI's and Anthropic's servers write them. */
export function upstreamEvents(dialect: DialectName, plan: StreamPlan): string[] {
  if (dialect === "chat") return chatEvents(plan);
  return dialect === "responses" ? responsesEvents(plan) : messagesEvents(plan);
}

function chatEvents(plan: StreamPlan): string[] {
  const chunk = (delta: Record<string, unknown>, finish: string | null = null): string =>
    sse(undefined, { id: "chatcmpl-u", object: "chat.completion.chunk", created: 1_700_000_000, model: "m", choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
  const out = [chunk({ role: "assistant", content: "" })];
  for (const t of plan.thinking ?? []) out.push(chunk({ reasoning_content: t }));
  for (const t of plan.text) out.push(chunk({ content: t }));
  (plan.args ?? []).forEach((a, i) => out.push(chunk({ tool_calls: [{ index: 0, ...(i === 0 ? { id: "call_1", type: "function" } : {}), function: { ...(i === 0 ? { name: "lookup" } : {}), arguments: a } }] })));
  out.push(chunk({}, plan.args === undefined ? "stop" : "tool_calls"), "data: [DONE]\n\n");
  return out;
}

function responsesEvents(plan: StreamPlan): string[] {
  let seq = 0;
  const emit = (type: string, fields: Record<string, unknown>): string => sse(type, { type, sequence_number: seq++, ...fields });
  const text = plan.text.join("");
  const args = (plan.args ?? []).join("");
  const thinking = (plan.thinking ?? []).join("");
  const message = { id: "msg_1", type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text, annotations: [], logprobs: [] }] };
  const reasoning = { id: "rs_1", type: "reasoning", summary: [], content: [{ type: "reasoning_text", text: thinking }] };
  const call = { id: "fc_1", type: "function_call", status: "completed", call_id: "call_1", name: "lookup", arguments: args };
  const output = [...(plan.thinking === undefined ? [] : [reasoning]), message, ...(plan.args === undefined ? [] : [call])];
  const response = (status: string, out: unknown[]) => ({ id: "resp_1", object: "response", created_at: 1_700_000_000, status, model: "m", output: out, usage: null, error: null, incomplete_details: null });
  const events = [emit("response.created", { response: response("in_progress", []) }), emit("response.in_progress", { response: response("in_progress", []) })];
  let index = 0;
  if (plan.thinking !== undefined) {
    const at = { item_id: "rs_1", output_index: index, content_index: 0 };
    events.push(emit("response.output_item.added", { output_index: index, item: { ...reasoning, content: [] } }));
    for (const t of plan.thinking) events.push(emit("response.reasoning_text.delta", { ...at, delta: t }));
    events.push(emit("response.reasoning_text.done", { ...at, text: thinking }), emit("response.output_item.done", { output_index: index, item: reasoning }));
    index += 1;
  }
  const at = { item_id: "msg_1", output_index: index, content_index: 0 };
  events.push(emit("response.output_item.added", { output_index: index, item: { ...message, status: "in_progress", content: [] } }));
  events.push(emit("response.content_part.added", { ...at, part: { type: "output_text", text: "", annotations: [], logprobs: [] } }));
  for (const t of plan.text) events.push(emit("response.output_text.delta", { ...at, delta: t, logprobs: [] }));
  events.push(emit("response.output_text.done", { ...at, text, logprobs: [] }), emit("response.content_part.done", { ...at, part: message.content[0] }), emit("response.output_item.done", { output_index: index, item: message }));
  if (plan.args !== undefined) {
    index += 1;
    const place = { item_id: "fc_1", output_index: index };
    events.push(emit("response.output_item.added", { output_index: index, item: { ...call, status: "in_progress", arguments: "" } }));
    for (const a of plan.args) events.push(emit("response.function_call_arguments.delta", { ...place, delta: a }));
    events.push(emit("response.function_call_arguments.done", { ...place, arguments: args }), emit("response.output_item.done", { output_index: index, item: call }));
  }
  events.push(emit("response.completed", { response: response("completed", output) }));
  return events;
}

function messagesEvents(plan: StreamPlan): string[] {
  const e = (type: string, data: Record<string, unknown>): string => sse(type, { type, ...data });
  const message = { id: "msg_1", type: "message", role: "assistant", model: "m", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 5, output_tokens: 1 } };
  const events = [e("message_start", { message }), e("ping", {})];
  let index = 0;
  if (plan.thinking !== undefined) {
    events.push(e("content_block_start", { index, content_block: { type: "thinking", thinking: "", signature: "" } }));
    for (const t of plan.thinking) events.push(e("content_block_delta", { index, delta: { type: "thinking_delta", thinking: t } }));
    events.push(e("content_block_delta", { index, delta: { type: "signature_delta", signature: "c2lnbmF0dXJl" } }), e("content_block_stop", { index }));
    index += 1;
  }
  events.push(e("content_block_start", { index, content_block: { type: "text", text: "" } }));
  for (const t of plan.text) events.push(e("content_block_delta", { index, delta: { type: "text_delta", text: t } }));
  events.push(e("content_block_stop", { index }));
  if (plan.args !== undefined) {
    index += 1;
    events.push(e("content_block_start", { index, content_block: { type: "tool_use", id: "toolu_1", name: "lookup", input: {} } }));
    for (const a of plan.args) events.push(e("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: a } }));
    events.push(e("content_block_stop", { index }));
  }
  events.push(e("message_delta", { delta: { stop_reason: plan.args === undefined ? "end_turn" : "tool_use", stop_sequence: null }, usage: { output_tokens: 9 } }), e("message_stop", {}));
  return events;
}

/** `key` split into two deltas at every position, each pair between words: `[w0 k[0:1]], [k[1:] w1 k[0:2]], …`. */
export function splitEverywhere(key: string): string[] {
  const out: string[] = ["start "];
  for (let at = 1; at < key.length; at++) {
    out[out.length - 1] += key.slice(0, at);
    out.push(`${key.slice(at)} w${at} `);
  }
  return out;
}

/** `key` one character a delta, between two words. */
export function charByChar(key: string): string[] {
  return ["before ", ...key, " after"];
}

/** An upstream's SSE body of `list`, one write each, a turn of the event loop apart. */
export function events(list: readonly string[]): Behaviour {
  return (res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    let i = 0;
    const next = (): void => {
      if (res.destroyed) return;
      if (i === list.length) return void res.end();
      res.write(list[i++]);
      setImmediate(next);
    };
    next();
  };
}
