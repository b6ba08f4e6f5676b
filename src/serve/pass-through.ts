import http, { type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from "node:http";
import https from "node:https";
import type { Readable } from "node:stream";
import { ModelCallError } from "../errors.js";
import type { GenerateRequest, LanguageModel } from "../models/language-model.js";
import type { UpstreamFailure } from "./observer.js";
import { keysOf, type Secrets } from "./redact-secret.js";
import { EventShapes } from "./sse-shapes.js";
import { bodyRedactorOf, contentDecoders, maxDecodedBytes, redactHeaderValue, redactJsonValue } from "./redact-stream.js";
import type { Dialect, DialectName, GatewayError } from "./dialects/index.js";
import { DROPPED_TOOLS_HEADER, type ChatRequest } from "./loop-request.js";
import type { CompletionMeta } from "./response.js";
import { sseHeaders } from "./sse.js";

/** An HTTP upstream, for raw pass-through: where it is, the model it serves, where its key is, what it speaks. */
export interface UpstreamHttp {
  /** Up to and including the API version, e.g. `http://127.0.0.1:8000/v1`. */
  baseUrl: string;
  model: string;
  /** The environment variable holding the upstream's API key (read per request; unset sends none). */
  apiKeyEnv: string;
  /**
   * The dialects it serves (default: Chat Completions only): a request in one of these is relayed raw to
   * `baseUrl + dialect.upstreamPath`; one in another dialect is translated to the loop's request and answered back
   * in its own dialect.
   */
  speaks?: readonly DialectName[];
}

/** Whether `upstream` takes requests of `dialect` raw. */
export function upstreamSpeaks(upstream: UpstreamHttp | undefined, dialect: DialectName): boolean {
  return upstream !== undefined && (upstream.speaks ?? ["chat"]).includes(dialect);
}

/** How a pass-through ended, told once when the relayed body ends (or the request failed before it). */
export type PassThroughEnd = (status: number, failure: UpstreamFailure | undefined) => void;

/** Request headers never forwarded: hop-by-hop ones, the gateway's own credentials, and the framing set anew. */
const droppedRequestHeaders = new Set(["host", "connection", "keep-alive", "transfer-encoding", "content-length", "authorization", "x-api-key", "proxy-authorization", "accept-encoding", "te", "upgrade", "expect", "trailer", "proxy-connection"]);
/** Response headers never relayed: hop-by-hop ones, and the framing the relay sets anew (it decompresses, as fetch did). */
const droppedResponseHeaders = new Set(["connection", "keep-alive", "transfer-encoding", "content-encoding", "content-length", "proxy-authenticate", "trailer", "upgrade"]);
/** Response headers that name the upstream's software or its proxies: the gateway's clients need not know them. */
const identifyingResponseHeaders = new Set(["server", "via", "x-powered-by"]);

/** The connection pool's bound: at most this many sockets to the upstream at once; more requests wait for one. */
export const upstreamMaxSockets = 256;

/** The client side of one pass-through: the raw request body already read, the Node request and response. */
export interface RelayExchange {
  body: Buffer;
  incoming: IncomingMessage;
  outgoing: ServerResponse;
  /**
   * Another model is tried should this one fail before answering: a 5xx status is then not relayed (nor anything of
   * its body); `send` resolves with the gateway's 502 instead, as it does when the upstream cannot be reached.
   */
  fallback?: boolean;
}

/** Relays pass-through requests to an HTTP upstream over one keep-alive connection pool. */
export interface UpstreamRelay {
  /**
   * Relays one request. Resolves with the gateway's own answer when the upstream gave none (502, 504), or with
   * `undefined` once the upstream's status and headers are written to `outgoing` and its body is being piped there.
   */
  send(exchange: RelayExchange, onEnd: PassThroughEnd, dialect: Dialect): Promise<Response | undefined>;
  /** Closes the pool's sockets (on gateway close, once no request is in flight). */
  close(): void;
}

/** How long a relayed body's headers wait for its first bytes before they go out alone. */
export const headerWaitMs = 100;

/**
 * A transparent relay to an HTTP upstream, on Node streams end to end: the raw body bytes to the dialect's path, the
 * client's headers with only its credentials replaced by the upstream's key (`Authorization: Bearer`, or Anthropic's
 * `x-api-key` on the Messages path); and the upstream's status, headers and body back as they come
 * (SSE chunk by chunk, never buffered), its content encodings undone as fetch would. The upstream's own errors (429
 * with Retry-After, 500) reach the client as sent. The gateway answers only what the upstream could not: no
 * connection → 502, no response headers within `timeoutMs` → 504, a content-encoding it cannot undo → 502; no body
 * bytes for `timeoutMs` once the body flows, or a body the upstream broke off, cuts the client's connection (it must
 * not see a complete reply). A client that disconnects aborts the upstream request. When a key is set, it is blanked
 * in every header and in the body as the client will decode it (`redact-stream.ts`), should the upstream echo it: an
 * SSE stream then goes out event by event, read as the dialect's events, each concatenated string's last characters
 * held back by a fixed window until its stream ends; a JSON body once whole; without a key the bytes flow untouched.
 */
export function openRelay(upstream: UpstreamHttp, timeoutMs: number, blanked: () => Secrets = () => undefined): UpstreamRelay {
  const base = new URL(upstream.baseUrl.replace(/\/+$/u, ""));
  const secure = base.protocol === "https:";
  const agent = secure ? new https.Agent({ keepAlive: true, maxSockets: upstreamMaxSockets }) : new http.Agent({ keepAlive: true, maxSockets: upstreamMaxSockets });
  const request = secure ? https.request : http.request;
  const target = { protocol: base.protocol, hostname: base.hostname.replace(/^\[(.*)\]$/u, "$1"), port: base.port, method: "POST", agent };
  const relay: RelayTarget = { upstream, base, request, target, timeoutMs, blanked, shapes: new Map(), keys: { secret: undefined, blanked: undefined, all: [] } };
  return { send: (exchange, onEnd, dialect) => relayOnce(relay, exchange, onEnd, dialect), close: () => agent.destroy() };
}

/** Where `openRelay`'s requests go: the upstream, its base URL, and the request function and options of its agent. */
interface RelayTarget {
  upstream: UpstreamHttp;
  base: URL;
  request: typeof http.request;
  target: { protocol: string; hostname: string; port: string; method: string; agent: http.Agent };
  timeoutMs: number;
  /** The keys blanked besides its own: on a gateway with several models, the other models'. */
  blanked: () => Secrets;
  /** The SSE event shapes learnt on this upstream's streams, by dialect, read by every request's redactor (src/serve/sse-shapes.ts). */
  shapes: Map<DialectName, EventShapes>;
  /** The keys a request blanks, worked out for the last key and blanked keys seen (`keysOfRelay`). */
  keys: { secret: string | undefined; blanked: Secrets; all: readonly string[] };
}

/** Its own key and the blanked ones, each once: the list `keys` holds while both are as they were. */
function keysOfRelay(keys: RelayTarget["keys"], secret: string | undefined, blanked: Secrets): readonly string[] {
  if (keys.secret !== secret || keys.blanked !== blanked) [keys.secret, keys.blanked, keys.all] = [secret, blanked, [...new Set([...keysOf(secret), ...keysOf(blanked)])]];
  return keys.all;
}

/** The event shapes kept for `dialect`'s streams in `byDialect`, made on first use. */
function shapesOf(byDialect: Map<DialectName, EventShapes>, dialect: DialectName): EventShapes {
  let shapes = byDialect.get(dialect);
  if (shapes === undefined) byDialect.set(dialect, (shapes = new EventShapes()));
  return shapes;
}

/** The client's headers for the upstream: its credentials replaced by the upstream's key, the body's length set. */
function upstreamHeaders(incoming: RelayExchange["incoming"], secret: string | undefined, dialect: Dialect, body: Buffer): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = {};
  for (const name in incoming.headers) if (!droppedRequestHeaders.has(name)) headers[name] = incoming.headers[name];
  if (secret !== undefined) {
    if (dialect.name === "messages") headers["x-api-key"] = secret;
    else headers.authorization = `Bearer ${secret}`;
  }
  headers["content-length"] = body.byteLength;
  return headers;
}

/**
 * The path a relayed request goes to: the upstream's base path and the dialect's path, then the base URL's query and
 * the client's (`/v1/messages?beta=true`, as Claude Code sends it), joined with `&`. Only the client's query is taken
 * from its URL, as the URL parser serialises it (percent-encoded, no fragment), so nothing in it can reach the host or
 * the path: `?x=@evil` and `?p=%2F..` stay query parameters of the upstream's own path.
 */
export function relayPath(base: URL, dialect: Pick<Dialect, "upstreamPath">, requestUrl: string | undefined): string {
  // Most relayed requests carry no query: no URL parse on that path.
  const client = requestUrl === undefined || !requestUrl.includes("?") ? "" : new URL(requestUrl, "http://gateway.invalid").search.slice(1);
  const own = base.search.slice(1);
  const query = [own, client].filter((q) => q !== "").join("&");
  return `${base.pathname}${dialect.upstreamPath}${query === "" ? "" : `?${query}`}`;
}

/** One exchange of `openRelay`'s: the request to the upstream, and its answer relayed to the client. */
function relayOnce({ upstream, base, request, target, timeoutMs, blanked, shapes, keys }: RelayTarget, { body, incoming, outgoing, fallback }: RelayExchange, onEnd: PassThroughEnd, dialect: Dialect): Promise<Response | undefined> {
  const secret = keysOf(process.env[upstream.apiKeyEnv])[0];
  const headers = upstreamHeaders(incoming, secret, dialect, body);
  const secrets = keysOfRelay(keys, secret, blanked());
  const path = relayPath(base, dialect, incoming.url);

  return new Promise((resolve) => {
    let status = 0;
    let ended = false;
    let timedOut = false;
    let relaying = false;
    const upstreamRequest = request({ ...target, path, headers });
    // One timer per request: until the response headers, then re-armed by every body chunk.
    const timer = setTimeout(() => {
      timedOut = true;
      upstreamRequest.destroy(new Error(`the upstream sent nothing for ${timeoutMs} ms`));
    }, timeoutMs);
    const end = (failure: UpstreamFailure | undefined): void => {
      if (ended) return;
      ended = true;
      clearTimeout(timer);
      onEnd(status, failure);
    };
    outgoing.once("close", () => {
      if (outgoing.writableFinished || ended) return;
      // The client left. Before the upstream answered that is no upstream failure (499, as nginx logs it).
      if (!relaying) status = 499;
      end(!relaying || (status >= 200 && status < 300) ? undefined : "status");
      upstreamRequest.destroy();
      if (!relaying) resolve(dialectError(dialect, { status: 499, message: "the client closed the request", type: "invalid_request_error", param: null, code: "client_closed" }));
    });
    upstreamRequest.once("error", () => {
      if (relaying || ended) return;
      status = timedOut ? 504 : 502;
      end(timedOut ? "timeout" : "network");
      resolve(unanswered(dialect, timedOut ? "timeout" : "unreachable", timeoutMs));
    });
    upstreamRequest.once("response", (response) => {
      // A 204 or 304 has no body to decode, whatever its content-encoding says.
      const layers = response.statusCode === 204 || response.statusCode === 304 ? [] : contentDecoders(response.headers["content-encoding"]);
      if (layers === undefined) {
        // Nothing is sent: a body the gateway cannot decode is one it cannot redact; the client gets none of it.
        status = 502;
        end("malformed");
        response.destroy();
        resolve(dialectError(dialect, { status: 502, message: "the upstream answered in a content-encoding the gateway does not undo (it undoes up to 3 layers of gzip, deflate and br)", type: "server_error", param: null, code: "upstream_encoding" }));
        return;
      }
      if (fallback === true && (response.statusCode ?? 502) >= 500) {
        status = response.statusCode ?? 502;
        end("status");
        response.destroy();
        return resolve(unanswered(dialect, status, timeoutMs));
      }
      relaying = true;
      status = response.statusCode ?? 502;
      timer.refresh();
      const failure: UpstreamFailure | undefined = status >= 200 && status < 300 ? undefined : "status";
      const redactor = bodyRedactorOf(response.headers["content-type"], status, secrets, dialect.name, shapesOf(shapes, dialect.name));
      // The body is relayed as it came, so its length stands, unless it is decoded or may have a key blanked.
      outgoing.writeHead(status, response.statusMessage, relayedHeaders(response.rawHeaders, secrets, layers.length === 0 && redactor === undefined));
      resolve(undefined);
      // Headers go out with the first body bytes, in one write. A body whose first bytes are all held back (a stream's
      // first events), or that has not begun within `headerWaitMs`, gets them alone. `headersSent` cannot tell whether
      // they went: it is true as soon as `writeHead` stored them.
      let wrote = false;
      const flushHeaders = (): void => {
        if (wrote || outgoing.destroyed) return;
        wrote = true;
        clearTimeout(headerWait);
        outgoing.flushHeaders();
      };
      const headerWait = setTimeout(flushHeaders, headerWaitMs);
      const decoders = layers.map((make) => make());
      const cut = (): void => {
        clearTimeout(headerWait);
        end(timedOut ? "timeout" : "network");
        response.destroy();
        for (const decoder of decoders) decoder.destroy();
        outgoing.destroy();
      };
      response.once("close", () => {
        if (!response.complete) cut();
      });
      let source: Readable = response;
      for (const decoder of decoders) {
        // Each layer is bounded, so a decompression bomb is cut, neither relayed nor held.
        let decoded = 0;
        decoder.on("data", (chunk: Buffer) => {
          decoded += chunk.byteLength;
          if (decoded > maxDecodedBytes) cut();
        });
        decoder.on("error", cut);
        source = source.pipe(decoder);
      }
      source.on("data", (chunk: Buffer) => {
        if (ended) return;
        timer.refresh();
        const out = redactor === undefined ? chunk : redactor.push(chunk);
        if (out === null) return cut();
        if (out.byteLength === 0) return flushHeaders();
        if (!wrote) {
          wrote = true;
          clearTimeout(headerWait);
        }
        if (!outgoing.write(out)) source.pause();
      });
      outgoing.on("drain", () => source.resume());
      source.once("end", () => {
        if (ended) return;
        const rest = redactor === undefined ? undefined : redactor.end();
        if (rest === null) return cut();
        clearTimeout(headerWait);
        end(failure);
        outgoing.end(rest !== undefined && rest.byteLength > 0 ? rest : undefined);
      });
    });
    upstreamRequest.end(body);
  });
}

/**
 * The gateway's answer for an upstream that gave none: 504 when it sent nothing in time, 502 when it could not be
 * reached; for another status, the 5xx it answered, which is not relayed because a fallback is tried next.
 */
function unanswered(dialect: Dialect, status: "timeout" | "unreachable" | number, timeoutMs: number): Response {
  if (status === "timeout") return dialectError(dialect, { status: 504, message: `the upstream did not answer within ${timeoutMs} ms`, type: "server_error", param: null, code: "upstream_timeout" });
  if (status === "unreachable") return dialectError(dialect, { status: 502, message: "the upstream could not be reached", type: "server_error", param: null, code: "upstream_unreachable" });
  return dialectError(dialect, { status: 502, message: `the upstream answered ${status}`, type: "server_error", param: null, code: "upstream_error" });
}

export { StreamRedactor } from "./redact-stream.js";

/**
 * The upstream's response headers as relayed: without the hop-by-hop ones, the framing the relay sets anew (but the
 * length of a body relayed as it came), and the ones that identify the upstream's software; with the key blanked in
 * every value (`redactHeaderValue`), and a header whose name holds it left out.
 */
function relayedHeaders(raw: string[], secret: Secrets, keepLength: boolean): string[] {
  const relayed: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] as string;
    const value = raw[i + 1] as string;
    const lower = name.toLowerCase();
    if ((droppedResponseHeaders.has(lower) && !(keepLength && lower === "content-length")) || identifyingResponseHeaders.has(lower)) continue;
    if (keysOf(secret).length === 0) relayed.push(name, value);
    else if (redactHeaderValue(name, secret) === name) relayed.push(name, redactHeaderValue(value, secret));
  }
  return relayed;
}

/** `text` with every occurrence of the key blanked (nothing to blank without one). */
export function redactText(text: string, secret: Secrets): string {
  let redacted = text;
  for (const key of keysOf(secret)) redacted = redacted.replaceAll(key, "[redacted]");
  return redacted;
}

/** An error of the gateway's own, as a JSON response in `dialect`'s shape. */
export function dialectError(dialect: Dialect, error: GatewayError, headers: Record<string, string> = {}): Response {
  return Response.json(dialect.error(error), { status: error.status, headers });
}

/** What `generateOnce` answers in: the answer's identity, the request's signal, the dialect, the key to keep out. */
export interface GenerateOnceContext {
  meta: CompletionMeta;
  signal: AbortSignal;
  dialect: Dialect;
  /** The upstream keys, blanked wherever the model's reply (or anything else in the answer) holds one. */
  secret: Secrets;
}

/** The one model call a pass-through makes of a chat request: its messages, sampling, format and tools (`generateOnce`, `streamOnce`). */
export function callOf(request: ChatRequest, signal: AbortSignal): GenerateRequest {
  const { responseFormat, tools, ...sampling } = request.sampling;
  return {
    ...sampling,
    messages: request.messages,
    ...(request.seed === undefined ? {} : { seed: request.seed }),
    ...(responseFormat === undefined ? {} : { responseFormat }),
    ...(tools === undefined || tools.length === 0 ? {} : { tools }),
    signal,
  };
}

/**
 * A pass-through to an embedded upstream, or to one that does not speak the request's dialect (any `LanguageModel`):
 * one `doGenerate` of the request, answered in the dialect — its JSON body, or with `stream: true` the finished reply
 * as its server-sent events. The reply is redacted as a reflected answer is: the key blanked in every string before
 * the answer is written (so no escape can hide it), then in the written text.
 */
export async function generateOnce(model: LanguageModel, request: ChatRequest, { meta, signal, dialect, secret }: GenerateOnceContext): Promise<Response> {
  const result = await model.doGenerate(callOf(request, signal));
  const reply = redactJsonValue({ text: result.text, toolCalls: result.toolCalls, finishReason: result.finishReason }, secret);
  const shown = redactJsonValue(meta, secret);
  const dropped = droppedToolsHeaders(request, secret);
  if (request.stream) return new Response(redactText(dialect.events(shown, reply, result.usage, request), secret), { headers: { ...sseHeaders, ...dropped } });
  return new Response(redactText(JSON.stringify(redactJsonValue(dialect.answer(shown, reply, result.usage), secret)), secret), { headers: { "content-type": "application/json", ...dropped } });
}

/** `x-reflect-dropped-tools`, naming the tools a translated request left out (`ChatRequest.droppedTools`), the key blanked in it. */
export function droppedToolsHeaders(request: ChatRequest, secret: Secrets): Record<string, string> {
  return request.droppedTools === undefined ? {} : { [DROPPED_TOOLS_HEADER]: redactText(request.droppedTools.join(","), secret) };
}

/** How a failed upstream call is answered: 504 for a timeout, else 502; and what metrics call the failure. */
export function upstreamError(error: { name: string; message: string; status?: number | undefined } | unknown, timedOut: boolean): { status: 502 | 504; failure: UpstreamFailure; message: string } {
  const described = error as { name?: string; message?: string; status?: number };
  const message = typeof described?.message === "string" ? described.message : String(error);
  // The HTTP backend reports its own per-attempt timeout in the message ("timed out after N ms"); it has no status.
  if (timedOut || /timed out/u.test(message)) return { status: 504, failure: "timeout", message: `the upstream timed out: ${message}` };
  if (error instanceof ModelCallError ? error.status !== undefined : described?.status !== undefined) return { status: 502, failure: "status", message: `the upstream failed: ${message}` };
  if (/malformed/u.test(message)) return { status: 502, failure: "malformed", message: `the upstream sent an unreadable reply: ${message}` };
  return { status: 502, failure: "network", message: `the upstream failed: ${message}` };
}

/**
 * A relayed body with its `model` replaced — the adapter arm's name on an upstream that serves adapters by name (vLLM's
 * runtime LoRA) — or the bytes as they came when they are not a JSON object (the upstream answers those as it would).
 */
export function withModel(bytes: Buffer, model: string): Buffer {
  let body: unknown;
  try {
    body = JSON.parse(bytes.toString("utf8"));
  } catch {
    return bytes;
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) return bytes;
  return Buffer.from(JSON.stringify({ ...body, model }));
}
