import { ModelCallError } from "../errors.js";
import type { LanguageModel } from "../models/language-model.js";
import type { UpstreamFailure } from "./observer.js";
import type { ChatRequest } from "./request.js";
import { chatCompletion, errorResponse, openAiUsage, type CompletionMeta } from "./response.js";
import { completionEvents, sseHeaders } from "./sse.js";

/** An OpenAI-compatible upstream, for raw pass-through: where it is, the model it serves, where its key is. */
export interface UpstreamHttp {
  /** Up to and including the API version, e.g. `http://127.0.0.1:8000/v1`. */
  baseUrl: string;
  model: string;
  /** The environment variable holding the upstream's API key (read per request; unset sends none). */
  apiKeyEnv: string;
}

/** How a pass-through ended, told once when the relayed body ends (or the request failed before it). */
export type PassThroughEnd = (status: number, failure: UpstreamFailure | undefined) => void;

/** Request headers never forwarded: hop-by-hop ones, the gateway's own credentials, and what fetch sets itself. */
const droppedRequestHeaders = new Set(["host", "connection", "keep-alive", "transfer-encoding", "content-length", "authorization", "proxy-authorization", "accept-encoding", "te", "upgrade", "expect", "trailer"]);
/** Response headers never relayed: hop-by-hop ones, and the framing that fetch has already undone (it decompresses). */
const droppedResponseHeaders = new Set(["connection", "keep-alive", "transfer-encoding", "content-encoding", "content-length", "proxy-authenticate", "trailer", "upgrade"]);

/**
 * Relays a request to an HTTP upstream unchanged: the raw body bytes, the client's headers with only `Authorization`
 * replaced by the upstream's key; and the upstream's status, headers and body back as they come (SSE chunk by
 * chunk). A transparent proxy: the upstream's own errors (429 with Retry-After, 500) reach the client as sent. The
 * gateway answers only what the upstream could not: no connection → 502, no response headers within `timeoutMs` (or
 * no body bytes for that long once streaming) → 504 (a stream already started is cut). The client's `signal`
 * (disconnect) aborts the upstream request. The upstream key is blanked in every byte relayed, should the upstream
 * echo it.
 */
export async function relayHttp(
  upstream: UpstreamHttp,
  request: { body: Uint8Array; headers: Headers; signal: AbortSignal },
  timeoutMs: number,
  onEnd: PassThroughEnd,
): Promise<Response> {
  const key = process.env[upstream.apiKeyEnv];
  const secret = key === undefined || key === "" ? undefined : Buffer.from(key, "utf8");
  const headers = new Headers();
  for (const [name, value] of request.headers) if (!droppedRequestHeaders.has(name)) headers.set(name, value);
  if (key !== undefined && key !== "") headers.set("authorization", `Bearer ${key}`);

  const controller = new AbortController();
  let timedOut = false;
  const onClientAbort = (): void => controller.abort(request.signal.reason);
  request.signal.addEventListener("abort", onClientAbort, { once: true });
  const arm = (): NodeJS.Timeout =>
    setTimeout(() => {
      timedOut = true;
      controller.abort(new Error(`the upstream sent nothing for ${timeoutMs} ms`));
    }, timeoutMs);
  let timer = arm();
  let ended = false;
  let status = 0;
  const end = (failure: UpstreamFailure | undefined): void => {
    clearTimeout(timer);
    request.signal.removeEventListener("abort", onClientAbort);
    if (!ended) onEnd(status, failure);
    ended = true;
  };

  let response: Response;
  try {
    response = await fetch(`${upstream.baseUrl.replace(/\/+$/u, "")}/chat/completions`, { method: "POST", headers, body: request.body, signal: controller.signal });
  } catch {
    // A client that left is no upstream failure (499, as nginx logs it).
    status = request.signal.aborted ? 499 : timedOut ? 504 : 502;
    end(request.signal.aborted ? undefined : timedOut ? "timeout" : "network");
    if (timedOut) return errorResponse(504, `the upstream did not answer within ${timeoutMs} ms`, { type: "server_error", code: "upstream_timeout" });
    return errorResponse(502, "the upstream could not be reached", { type: "server_error", code: "upstream_unreachable" });
  }
  status = response.status;
  const relayed = new Headers();
  for (const [name, value] of response.headers) if (!droppedResponseHeaders.has(name)) relayed.append(name, redactText(value, key));
  const failure: UpstreamFailure | undefined = response.ok ? undefined : "status";
  if (response.body === null) {
    end(failure);
    return new Response(null, { status: response.status, headers: relayed });
  }
  const reader = response.body.getReader();
  const redactor = secret === undefined ? undefined : new StreamRedactor(secret);
  const body = new ReadableStream<Uint8Array>({
    async pull(stream) {
      // Until something is enqueued or the body ends: a pull that enqueues nothing is not called again.
      for (;;) {
        clearTimeout(timer);
        timer = arm();
        let read: Awaited<ReturnType<typeof reader.read>>;
        try {
          read = await reader.read();
        } catch {
          end(timedOut ? "timeout" : "network");
          // The client's connection is cut (it must not see a complete stream). The server library logs this error:
          // one line of ours, never the upstream's error object.
          const cut = new Error(timedOut ? `pass-through: the upstream sent nothing for ${timeoutMs} ms; the stream was cut` : "pass-through: the upstream's stream broke off; the client's was cut");
          cut.stack = `Error: ${cut.message}`;
          stream.error(cut);
          return;
        }
        if (read.done) {
          const rest = redactor?.flush();
          if (rest !== undefined && rest.byteLength > 0) stream.enqueue(rest);
          end(failure);
          stream.close();
          return;
        }
        const out = redactor === undefined ? read.value : redactor.push(read.value);
        if (out.byteLength > 0) {
          stream.enqueue(out);
          return;
        }
      }
    },
    async cancel(reason) {
      end(failure);
      controller.abort(reason);
      await reader.cancel(reason).catch(() => {});
    },
  });
  return new Response(body, { status: response.status, statusText: response.statusText, headers: relayed });
}

/**
 * Blanks a secret in a byte stream split at arbitrary points: a chunk's end that could begin the secret is held back
 * until the next chunk shows whether it does, so nothing else is delayed (an SSE event's `\n\n` is never held).
 */
export class StreamRedactor {
  private held: Buffer<ArrayBufferLike> = Buffer.alloc(0);
  private static readonly mask = Buffer.from("[redacted]", "utf8");
  constructor(private readonly secret: Buffer) {}

  push(chunk: Uint8Array): Uint8Array {
    let data: Buffer = Buffer.concat([this.held, chunk]);
    data = replaceAll(data, this.secret, StreamRedactor.mask);
    const keep = this.partialSuffix(data);
    this.held = Buffer.from(data.subarray(data.length - keep));
    return data.subarray(0, data.length - keep);
  }

  flush(): Uint8Array {
    const rest = this.held;
    this.held = Buffer.alloc(0);
    return rest;
  }

  /** The length of the longest end of `data` that is a proper start of the secret. */
  private partialSuffix(data: Buffer): number {
    for (let n = Math.min(this.secret.length - 1, data.length); n > 0; n--) {
      if (data.subarray(data.length - n).equals(this.secret.subarray(0, n))) return n;
    }
    return 0;
  }
}

function replaceAll(data: Buffer, secret: Buffer, mask: Buffer): Buffer {
  let at = data.indexOf(secret);
  if (at < 0) return data;
  const parts: Buffer[] = [];
  let from = 0;
  while (at >= 0) {
    parts.push(data.subarray(from, at), mask);
    from = at + secret.length;
    at = data.indexOf(secret, from);
  }
  parts.push(data.subarray(from));
  return Buffer.concat(parts);
}

export function redactText(text: string, secret: string | undefined): string {
  return secret === undefined || secret === "" ? text : text.replaceAll(secret, "[redacted]");
}

/**
 * A pass-through to an embedded upstream (or any `LanguageModel`): one `doGenerate` of the request, answered as a
 * `chat.completion`, or with `stream: true` as the finished reply in SSE chunks ending in `data: [DONE]`.
 */
export async function generateOnce(model: LanguageModel, request: ChatRequest, meta: CompletionMeta, signal: AbortSignal): Promise<Response> {
  const { responseFormat, tools, ...sampling } = request.sampling;
  const result = await model.doGenerate({
    ...sampling,
    messages: request.messages,
    ...(request.seed === undefined ? {} : { seed: request.seed }),
    ...(responseFormat === undefined ? {} : { responseFormat }),
    ...(tools === undefined || tools.length === 0 ? {} : { tools }),
    signal,
  });
  const reply = { text: result.text, toolCalls: result.toolCalls, finishReason: result.finishReason };
  const usage = openAiUsage(result.usage);
  if (request.stream) return new Response(completionEvents(meta, reply, request.includeUsage ? usage : undefined), { headers: sseHeaders });
  return Response.json(chatCompletion(meta, reply, usage));
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
