/**
 * What the gateway's tests share: a real OpenAI-compatible upstream on 127.0.0.1 whose replies are scripted per
 * request (replies, streams, 429s, 500s, hangs, cut streams, invalid JSON, huge bodies, header echoes), the gateway
 * started on a free port, and the official `openai` client pointed at it. Not a test file itself.
 */
import { once } from "node:events";
import http from "node:http";
import type { TestContext } from "node:test";
import OpenAI from "openai";
import { listenOnLoopback } from "../cli/cli-harness.js";
import { startGateway, type GatewayOptions, type RunningGateway } from "./server.js";

export const UPSTREAM_MODEL = "fake-upstream";

export interface UpstreamRequest {
  /** The request target as received: path and query. */
  url: string;
  headers: http.IncomingHttpHeaders;
  /** The raw body bytes as received. */
  raw: Buffer;
  body: Record<string, unknown>;
  /** Set when the gateway (or client) closed the connection before the reply ended. */
  closedEarly: boolean;
}

/** What the upstream does with one request; `index` counts from 0. */
export type Behaviour = (res: http.ServerResponse, seen: UpstreamRequest, index: number, upstream: FakeUpstream) => void;

export interface FakeUpstream {
  /** `http://127.0.0.1:PORT/v1` */
  baseUrl: string;
  requests: UpstreamRequest[];
  /** Usage the upstream reported, summed over every request it answered with a completion. */
  usage: { prompt: number; completion: number };
  /** Resolves once `n` requests have arrived. */
  received(n: number): Promise<void>;
  /** Resolves once request `index` has been closed (answered, or cut by the other side). */
  closed(index: number): Promise<void>;
}

/** A real HTTP server on 127.0.0.1, closed when the test ends. Request i gets `script[i]`; the last repeats. */
export async function startUpstream(t: TestContext, script: Behaviour | Behaviour[]): Promise<FakeUpstream> {
  const behaviours = Array.isArray(script) ? script : [script];
  const requests: UpstreamRequest[] = [];
  const closings: Array<Promise<void>> = [];
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  const upstream: FakeUpstream = {
    baseUrl: "",
    requests,
    usage: { prompt: 0, completion: 0 },
    received: (n) => (requests.length >= n ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ n, resolve }))),
    closed: (index) => closings[index] ?? Promise.reject(new Error(`no request ${index}`)),
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const raw = Buffer.concat(chunks);
      const seen: UpstreamRequest = { url: req.url ?? "", headers: req.headers, raw, body: raw.length === 0 ? {} : (JSON.parse(raw.toString("utf8")) as Record<string, unknown>), closedEarly: false };
      const index = requests.push(seen) - 1;
      closings[index] = once(res, "close").then(() => {
        seen.closedEarly = !res.writableFinished;
      });
      for (const waiter of waiters.filter((w) => requests.length >= w.n)) waiter.resolve();
      const behaviour = behaviours[Math.min(index, behaviours.length - 1)] as Behaviour;
      behaviour(res, seen, index, upstream);
    });
  });
  const port = await listenOnLoopback(t, server);
  upstream.baseUrl = `http://127.0.0.1:${port}/v1`;
  return upstream;
}

/** A completion body; `usage` made up from the text lengths so sums are checkable. */
export function completion(content: string | null, usage = { prompt_tokens: 11, completion_tokens: 5 }, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: "chatcmpl-upstream",
    object: "chat.completion",
    created: 1_700_000_000,
    model: UPSTREAM_MODEL,
    choices: [{ index: 0, message: { role: "assistant", content }, logprobs: null, finish_reason: "stop" }],
    usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
    ...extra,
  };
}

/** Replies with a completion of `content` and counts its usage into `upstream.usage`. */
export function reply(content: string | ((seen: UpstreamRequest, index: number) => string)): Behaviour {
  return (res, seen, index, upstream) => {
    const u = { prompt_tokens: 20 + index, completion_tokens: 3 + index };
    upstream.usage.prompt += u.prompt_tokens;
    upstream.usage.completion += u.completion_tokens;
    const text = typeof content === "string" ? content : content(seen, index);
    res.writeHead(200, { "content-type": "application/json", "x-request-id": `req-${index}` });
    res.end(JSON.stringify(completion(text, u)));
  };
}

/** An SSE stream of `pieces`, each written as its own chunk with a short pause, ending in `data: [DONE]`. */
export function streamReply(pieces: readonly string[], options: { cutAfter?: number; pauseMs?: number } = {}): Behaviour {
  return (res) => {
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    const events = pieces.map((piece, i) => `data: ${JSON.stringify({ id: "chatcmpl-s", object: "chat.completion.chunk", created: 1_700_000_000, model: UPSTREAM_MODEL, choices: [{ index: 0, delta: i === 0 ? { role: "assistant", content: piece } : { content: piece }, finish_reason: null }] })}\n\n`);
    events.push(`data: ${JSON.stringify({ id: "chatcmpl-s", object: "chat.completion.chunk", created: 1_700_000_000, model: UPSTREAM_MODEL, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\n`, "data: [DONE]\n\n");
    let i = 0;
    const next = (): void => {
      if (res.destroyed) return;
      if (options.cutAfter !== undefined && i === options.cutAfter) {
        res.socket?.destroy();
        return;
      }
      if (i === events.length) {
        res.end();
        return;
      }
      res.write(events[i++]);
      setTimeout(next, options.pauseMs ?? 5);
    };
    next();
  };
}

export const status =
  (code: number, body: unknown, headers: Record<string, string> = {}): Behaviour =>
  (res) => {
    res.writeHead(code, { "content-type": "application/json", ...headers });
    res.end(JSON.stringify(body));
  };

/** Never answers (until the other side gives up). */
export const hang: Behaviour = () => {};

/** Answers 200 with a body that is not JSON. */
export const invalidJson: Behaviour = (res) => {
  res.writeHead(200, { "content-type": "application/json" });
  res.end('{"choices": [ this is not json');
};

/** Answers with a completion whose content is the request headers it received, as JSON. */
export const echoHeaders: Behaviour = (res, seen) => {
  res.writeHead(200, { "content-type": "application/json", "x-echo-authorization": String(seen.headers.authorization ?? "") });
  res.end(JSON.stringify(completion(JSON.stringify(seen.headers))));
};

/** The gateway on a free port of 127.0.0.1, closed when the test ends. */
export async function startTestGateway(t: TestContext, options: GatewayOptions): Promise<RunningGateway> {
  const gateway = await startGateway({ ...options, port: 0 });
  t.after(() => gateway.close(100));
  return gateway;
}

/** The official client, pointed at `url` (no retries: the tests count requests). */
export function client(url: string, apiKey = "unused"): OpenAI {
  return new OpenAI({ baseURL: `${url}/v1`, apiKey, maxRetries: 0 });
}

/**
 * One request with the headers as given, Host included (`fetch` sets Host itself): what a browser tricked by DNS
 * rebinding, or a page of another site, would send.
 */
export function rawRequest(url: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: options.method ?? "GET", headers: options.headers ?? {} }, (res) => {
      let body = "";
      res.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    request.on("error", reject);
    request.end(options.body);
  });
}

/** The reflection `digitsLessonScript` writes: a lesson a later request under the same memory key is shown. */
export const DIGITS_LESSON = "I spelled the number out; the check wants digits, so answer with digits only.";

/**
 * An upstream for lessons across requests, by the last message it is sent: a first draft in words ("forty-two", which
 * fails `^\d+$`), `DIGITS_LESSON` when asked to reflect, and "42" when asked to try again.
 */
export function digitsLessonScript(seen: UpstreamRequest): string {
  const last = (seen.body.messages as Array<{ content: string }>).at(-1)?.content ?? "";
  if (last.includes("Reflect on what went wrong")) return DIGITS_LESSON;
  return last.includes("Now try again") ? "42" : "forty-two";
}
