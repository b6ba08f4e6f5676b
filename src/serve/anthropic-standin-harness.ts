/**
 * A local stand-in for Anthropic's Messages API, for tests: a real `node:http` server on a free port of 127.0.0.1 that
 * speaks the documented wire format, with replies scripted per request as `serve-harness.ts` scripts an
 * OpenAI-compatible upstream. Not a test file itself (files named `*-harness.*` are left out of the package).
 *
 * Written from Anthropic's API reference (Messages, streaming Messages, token counting, errors, versions) and the types
 * of `@anthropic-ai/sdk`; no network is reachable where the tests run, so it was never compared with the live API.
 *
 * What it implements:
 * - `POST /v1/messages`: the Message object (`id`, `type: "message"`, `role`, `model`, `content` of `text` and `tool_use`
 *   blocks, `stop_reason`, `stop_sequence`, `usage`); with `stream: true` the documented SSE sequence — `message_start`
 *   (the Message with empty `content`), per block `content_block_start`, one or more `content_block_delta` (`text_delta`,
 *   or `input_json_delta` for a tool's input) and `content_block_stop`, a `ping` after the first block's start,
 *   `message_delta` (stop reason, output tokens) and `message_stop`; every event named by an `event:` line whose name
 *   is its data's `type`.
 * - `stop_sequences`: a scripted text that contains one is cut before it, with `stop_reason: "stop_sequence"` and the
 *   sequence in `stop_sequence`; `max_tokens`: a text longer than the limit is cut to it with `stop_reason: "max_tokens"`.
 * - `POST /v1/messages/count_tokens`: `{ input_tokens }`. The count is deterministic, not a tokenizer's: one token per
 *   started 4 characters of the system prompt, the messages' text, tool inputs and results, and the tools' JSON
 *   (`countTokens`). The `usage.input_tokens` of a message is the same count, so the two agree.
 * - Authentication and versioning as the API answers them: the key in `x-api-key` (what `@ai-sdk/anthropic` sends) or
 *   as `Authorization: Bearer KEY` (what `@anthropic-ai/sdk` 1.x sends); none or another → 401 `authentication_error`; no
 *   `anthropic-version` → 400 `invalid_request_error`; a body without `model`, `max_tokens` or `messages` → 400. Every
 *   error is Anthropic's shape, `{ type: "error", error: { type, message }, request_id }`, with a `request-id` header.
 * - Scripted faults: any status and error type with headers (429 with `retry-after`, 500, 529 `overloaded_error`), a
 *   request that never answers, a stream cut after some events, an `error` event inside a stream.
 * Every request it saw is recorded (headers, raw bytes, parsed body, whether the other side closed it early).
 */
import { once } from "node:events";
import http from "node:http";
import type { TestContext } from "node:test";
import { listenOnLoopback } from "../cli/cli-harness.js";

export const STANDIN_API_KEY = "sk-ant-standin-key";
export const ANTHROPIC_VERSION = "2023-06-01";

export interface StandinRequest {
  method: string;
  /** The path and query, e.g. `/v1/messages`. */
  url: string;
  headers: http.IncomingHttpHeaders;
  /** The raw body bytes as received. */
  raw: Buffer;
  /** The parsed body; `{}` when it was empty or not JSON. */
  body: Record<string, unknown>;
  /** Set when the other side closed the connection before the reply ended. */
  closedEarly: boolean;
}

/** What the stand-in does with one `POST /v1/messages` that passed the checks; `index` counts those from 0. */
export type StandinBehaviour = (res: http.ServerResponse, seen: StandinRequest, index: number, standin: AnthropicStandin) => void;

export interface AnthropicStandin {
  /** `http://127.0.0.1:PORT/v1`: what `@ai-sdk/anthropic` takes as `baseURL`. */
  baseUrl: string;
  /** `http://127.0.0.1:PORT`: what `@anthropic-ai/sdk` takes as `baseURL`. */
  origin: string;
  /** The key it accepts, in `x-api-key` or as `Authorization: Bearer`. */
  apiKey: string;
  /** Every request it received, on any path, checks passed or not. */
  requests: StandinRequest[];
  /** The `POST /v1/messages` requests that reached a behaviour, in order. */
  messages: StandinRequest[];
  /** Tokens it reported in the `usage` of every message it answered. */
  usage: { input: number; output: number };
  /** Resolves once `n` requests (any path) have arrived. */
  received(n: number): Promise<void>;
  /** Resolves once request `index` of `requests` has been closed (answered, or cut by the other side). */
  closed(index: number): Promise<void>;
}

export interface StandinOptions {
  /** The key to accept (default `STANDIN_API_KEY`). */
  apiKey?: string;
}

/** A real HTTP server on 127.0.0.1, closed when the test ends. Message request i gets `script[i]`; the last repeats. */
export async function startAnthropicStandin(t: TestContext, script: StandinBehaviour | StandinBehaviour[], options: StandinOptions = {}): Promise<AnthropicStandin> {
  const behaviours = Array.isArray(script) ? script : [script];
  const apiKey = options.apiKey ?? STANDIN_API_KEY;
  const requests: StandinRequest[] = [];
  const closings: Array<Promise<void>> = [];
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  const standin: AnthropicStandin = {
    baseUrl: "",
    origin: "",
    apiKey,
    requests,
    messages: [],
    usage: { input: 0, output: 0 },
    received: (n) => (requests.length >= n ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ n, resolve }))),
    closed: (index) => closings[index] ?? Promise.reject(new Error(`no request ${index}`)),
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const raw = Buffer.concat(chunks);
      const seen: StandinRequest = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, raw, body: parseBody(raw), closedEarly: false };
      const index = requests.push(seen) - 1;
      closings[index] = once(res, "close").then(() => {
        seen.closedEarly = !res.writableFinished;
      });
      for (const waiter of waiters.filter((w) => requests.length >= w.n)) waiter.resolve();
      route(res, seen, standin, behaviours);
    });
  });
  const port = await listenOnLoopback(t, server);
  standin.origin = `http://127.0.0.1:${port}`;
  standin.baseUrl = `${standin.origin}/v1`;
  return standin;
}

function parseBody(raw: Buffer): Record<string, unknown> {
  if (raw.length === 0) return {};
  try {
    const parsed: unknown = JSON.parse(raw.toString("utf8"));
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

let requestIds = 0;

/** Anthropic's error body, with the `request-id` header the API sends on every response. */
export function sendError(res: http.ServerResponse, status: number, type: string, message: string, headers: Record<string, string> = {}): void {
  const requestId = `req_standin_${++requestIds}`;
  res.writeHead(status, { "content-type": "application/json", "request-id": requestId, ...headers });
  res.end(JSON.stringify({ type: "error", error: { type, message }, request_id: requestId }));
}

function route(res: http.ServerResponse, seen: StandinRequest, standin: AnthropicStandin, behaviours: readonly StandinBehaviour[]): void {
  const path = seen.url.split("?")[0];
  if (seen.method !== "POST" || (path !== "/v1/messages" && path !== "/v1/messages/count_tokens")) {
    sendError(res, 404, "not_found_error", `${seen.method} ${path} is not a route of this server`);
    return;
  }
  const key = requestKey(seen.headers);
  if (key === undefined) {
    sendError(res, 401, "authentication_error", "x-api-key header is required");
    return;
  }
  if (key !== standin.apiKey) {
    sendError(res, 401, "authentication_error", "invalid x-api-key");
    return;
  }
  if (seen.headers["anthropic-version"] === undefined) {
    sendError(res, 400, "invalid_request_error", "anthropic-version: header is required");
    return;
  }
  const invalid = invalidField(seen.body, path === "/v1/messages");
  if (invalid !== undefined) {
    sendError(res, 400, "invalid_request_error", invalid);
    return;
  }
  if (path === "/v1/messages/count_tokens") {
    res.writeHead(200, { "content-type": "application/json", "request-id": `req_standin_${++requestIds}` });
    res.end(JSON.stringify({ input_tokens: countTokens(seen.body) }));
    return;
  }
  const index = standin.messages.push(seen) - 1;
  const behaviour = behaviours[Math.min(index, behaviours.length - 1)] as StandinBehaviour;
  behaviour(res, seen, index, standin);
}

/** The key a request carries: `x-api-key`, else a bearer token; undefined when neither is there. */
export function requestKey(headers: http.IncomingHttpHeaders): string | undefined {
  const key = headers["x-api-key"];
  if (typeof key === "string" && key !== "") return key;
  const bearer = /^Bearer (.+)$/.exec(headers.authorization ?? "");
  return bearer === null ? undefined : bearer[1];
}

/** The first required field missing or of the wrong type, as the API's message names it; undefined when the body will do. */
function invalidField(body: Record<string, unknown>, needsMaxTokens: boolean): string | undefined {
  if (typeof body.model !== "string" || body.model === "") return "model: Field required";
  if (needsMaxTokens && !(Number.isInteger(body.max_tokens) && (body.max_tokens as number) >= 1)) return "max_tokens: Field required (a positive integer)";
  if (!Array.isArray(body.messages) || body.messages.length === 0) return "messages: Field required (at least one message)";
  return undefined;
}

// ---------------------------------------------------------------------------------------------------------------
// Counting

/** One token per started 4 characters: the stand-in's deterministic count (no real tokenizer). */
export function tokensOf(text: string): number {
  return Math.ceil(text.length / 4);
}

/** The text a request's input counts: the system prompt, every block's text, tool inputs and results, and the tools. */
function inputText(body: Record<string, unknown>): string {
  const parts: string[] = [];
  const system = body.system;
  if (typeof system === "string") parts.push(system);
  else if (Array.isArray(system)) for (const block of system) parts.push(blockText(block));
  for (const message of Array.isArray(body.messages) ? body.messages : []) {
    const content = (message as { content?: unknown }).content;
    if (typeof content === "string") parts.push(content);
    else if (Array.isArray(content)) for (const block of content) parts.push(blockText(block));
  }
  if (Array.isArray(body.tools)) parts.push(JSON.stringify(body.tools));
  return parts.join("");
}

function blockText(block: unknown): string {
  if (typeof block !== "object" || block === null) return "";
  const b = block as { type?: unknown; text?: unknown; input?: unknown; content?: unknown };
  if (b.type === "text" && typeof b.text === "string") return b.text;
  if (b.type === "tool_use") return JSON.stringify(b.input ?? {});
  if (b.type === "tool_result") return typeof b.content === "string" ? b.content : Array.isArray(b.content) ? b.content.map(blockText).join("") : "";
  return "";
}

/** The stand-in's input token count of a request body: what `count_tokens` answers and `usage.input_tokens` reports. */
export function countTokens(body: Record<string, unknown>): number {
  return tokensOf(inputText(body));
}

// ---------------------------------------------------------------------------------------------------------------
// Replies

/** A content block the script asks for. */
export type ScriptedBlock = { type: "text"; text: string } | { type: "tool_use"; name: string; input: Record<string, unknown>; id?: string };

export interface ReplyOptions {
  /** Stream only: write each SSE event as its own chunk with this pause between (default 2 ms). */
  pauseMs?: number;
  /** Stream only: destroy the socket after this many events were written. */
  cutAfter?: number;
  /** Stream only: after this many events, send an `error` event of this type and end the stream. */
  errorAfter?: { events: number; type: string; message: string };
  /** Extra response headers. */
  headers?: Record<string, string>;
}

type Content = string | ScriptedBlock[];

/** A block as the Message carries it. */
type WireBlock = { type: "text"; text: string } | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> };

/**
 * Replies with `content` (text, or blocks; or a function of the request), as a Message or, when the request asks for
 * `stream: true`, as the SSE sequence. Stop sequences and `max_tokens` are applied to the text as the API does; a reply
 * with a `tool_use` block stops with `tool_use`.
 */
export function message(content: Content | ((seen: StandinRequest, index: number) => Content), options: ReplyOptions = {}): StandinBehaviour {
  return (res, seen, index, standin) => {
    const scripted = typeof content === "function" ? content(seen, index) : content;
    const built = buildMessage(typeof scripted === "string" ? [{ type: "text", text: scripted }] : scripted, seen.body, index);
    standin.usage.input += built.usage.input_tokens;
    standin.usage.output += built.usage.output_tokens;
    const headers = { "request-id": `req_standin_msg_${index}`, ...options.headers };
    if (seen.body.stream === true) writeStream(res, built, headers, options);
    else {
      res.writeHead(200, { "content-type": "application/json", ...headers });
      res.end(JSON.stringify(built));
    }
  };
}

/** A reply of one `tool_use` block (after `text`, when given). */
export function toolUse(name: string, input: Record<string, unknown>, text?: string, options: ReplyOptions = {}): StandinBehaviour {
  return message([...(text === undefined ? [] : [{ type: "text" as const, text }]), { type: "tool_use", name, input }], options);
}

/** An error in Anthropic's shape: e.g. `errorStatus(429, "rate_limit_error", "slow down", { "retry-after": "1" })`. */
export function errorStatus(status: number, type: string, message: string, headers: Record<string, string> = {}): StandinBehaviour {
  return (res) => sendError(res, status, type, message, headers);
}

/** Never answers (until the other side gives up). */
export const hang: StandinBehaviour = () => {};

interface BuiltMessage {
  id: string;
  type: "message";
  role: "assistant";
  model: string;
  content: WireBlock[];
  stop_reason: "end_turn" | "max_tokens" | "stop_sequence" | "tool_use";
  stop_sequence: string | null;
  usage: { input_tokens: number; output_tokens: number; cache_creation_input_tokens: number; cache_read_input_tokens: number };
}

function buildMessage(blocks: readonly ScriptedBlock[], body: Record<string, unknown>, index: number): BuiltMessage {
  const stops = Array.isArray(body.stop_sequences) ? body.stop_sequences.filter((s): s is string => typeof s === "string" && s !== "") : [];
  const maxTokens = body.max_tokens as number;
  let budget = maxTokens;
  let stopReason: BuiltMessage["stop_reason"] = "end_turn";
  let stopSequence: string | null = null;
  const content: WireBlock[] = [];
  let toolIndex = 0;
  for (const block of blocks) {
    if (block.type === "tool_use") {
      content.push({ type: "tool_use", id: block.id ?? `toolu_standin_${index}_${toolIndex++}`, name: block.name, input: block.input });
      budget -= tokensOf(JSON.stringify(block.input));
      stopReason = "tool_use";
      continue;
    }
    let text = block.text;
    const hit = stops.map((s) => ({ s, at: text.indexOf(s) })).filter((h) => h.at >= 0).sort((a, b) => a.at - b.at)[0];
    if (hit !== undefined) text = text.slice(0, hit.at);
    if (tokensOf(text) > budget) {
      text = text.slice(0, Math.max(0, budget) * 4);
      content.push({ type: "text", text });
      stopReason = "max_tokens";
      budget = 0;
      break;
    }
    content.push({ type: "text", text });
    budget -= tokensOf(text);
    if (hit !== undefined) {
      stopReason = "stop_sequence";
      stopSequence = hit.s;
      break;
    }
  }
  return {
    id: `msg_standin_${index}`,
    type: "message",
    role: "assistant",
    model: body.model as string,
    content,
    stop_reason: stopReason,
    stop_sequence: stopSequence,
    usage: { input_tokens: countTokens(body), output_tokens: maxTokens - Math.max(0, budget), cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  };
}

/** The documented event sequence of `built`, each as `event: NAME\ndata: JSON\n\n`. */
export function streamEvents(built: BuiltMessage): string[] {
  const events: Array<Record<string, unknown> & { type: string }> = [];
  events.push({ type: "message_start", message: { ...built, content: [], stop_reason: null, stop_sequence: null, usage: { ...built.usage, output_tokens: 1 } } });
  built.content.forEach((block, index) => {
    if (block.type === "text") {
      events.push({ type: "content_block_start", index, content_block: { type: "text", text: "" } });
      if (index === 0) events.push({ type: "ping" });
      // Text arrives in pieces of up to 8 characters; an empty block still sends one (empty) delta.
      const pieces = block.text.match(/[\s\S]{1,8}/g) ?? [""];
      for (const piece of pieces) events.push({ type: "content_block_delta", index, delta: { type: "text_delta", text: piece } });
    } else {
      events.push({ type: "content_block_start", index, content_block: { type: "tool_use", id: block.id, name: block.name, input: {} } });
      if (index === 0) events.push({ type: "ping" });
      const json = JSON.stringify(block.input);
      // The API's first input_json_delta is often empty; the pieces concatenate to the input's JSON.
      events.push({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: "" } });
      for (const piece of json.match(/[\s\S]{1,10}/g) ?? []) events.push({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: piece } });
    }
    events.push({ type: "content_block_stop", index });
  });
  events.push({ type: "message_delta", delta: { stop_reason: built.stop_reason, stop_sequence: built.stop_sequence }, usage: { output_tokens: built.usage.output_tokens } });
  events.push({ type: "message_stop" });
  return events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
}

function writeStream(res: http.ServerResponse, built: BuiltMessage, headers: Record<string, string>, options: ReplyOptions): void {
  res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", connection: "keep-alive", ...headers });
  const events = streamEvents(built);
  let i = 0;
  const next = (): void => {
    if (res.destroyed) return;
    if (options.cutAfter !== undefined && i === options.cutAfter) {
      res.socket?.destroy();
      return;
    }
    if (options.errorAfter !== undefined && i === options.errorAfter.events) {
      const error = { type: "error", error: { type: options.errorAfter.type, message: options.errorAfter.message } };
      res.end(`event: error\ndata: ${JSON.stringify(error)}\n\n`);
      return;
    }
    if (i === events.length) {
      res.end();
      return;
    }
    res.write(events[i++]);
    setTimeout(next, options.pauseMs ?? 2);
  };
  next();
}
