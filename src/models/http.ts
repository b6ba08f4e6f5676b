/**
 * A `LanguageModel` over any OpenAI-compatible chat-completions endpoint (vLLM, SGLang, Ollama, llama.cpp's
 * server, OpenAI). `doGenerate` settles a completion whole; `doStream` streams one (`stream: true`, its server-sent
 * events read as they come). Retries only what is retryable, and a stream only until its first byte; the API key is read from the environment at
 * request time and is never stored on the model, logged, or put in an error.
 */
import { setTimeout as sleepFor } from "node:timers/promises";
import pLimit from "p-limit";
import { ModelCallError, UsageError } from "../errors.js";
import type { FinishReason, GenerateRequest, GenerateResult, LanguageModel, StreamPart, TokenLogprob, TokenUsage, ToolCall } from "./language-model.js";
import { capReply, maxReplyTokens, replyByteLimit, type Truncation } from "./reply-cap.js";
import { raceAbort } from "../util/abortable.js";
import { alignTokenLogprobs } from "./token-texts.js";
import { isRecord } from "../util/is-record.js";

/** How failed attempts are retried: exponential backoff with jitter, or the server's `Retry-After` when it sends one. */
export interface RetryPolicy {
  /** Retries after the first attempt; 0 disables retrying. */
  maxRetries: number;
  /** Base wait before the first retry; it doubles with each further retry. */
  initialDelayMs: number;
  /** Upper bound on any one wait, `Retry-After` included. */
  maxDelayMs: number;
}

export const defaultRetryPolicy: RetryPolicy = Object.freeze({ maxRetries: 4, initialDelayMs: 500, maxDelayMs: 20_000 });

export interface HttpModelOptions {
  /** Up to and including the API version, e.g. `http://127.0.0.1:8000/v1`; requests go to `<baseUrl>/chat/completions`. */
  baseUrl: string;
  /** The `model` field sent with every request. */
  model: string;
  /** Name of the environment variable holding the API key (default `OPENAI_API_KEY`); unset or empty sends no key. */
  apiKeyEnv?: string;
  /** Limit on one attempt, response body included (default 120 000 ms). */
  timeoutMs?: number;
  /** Most requests in flight at once (default 4); also the model's `maxConcurrency`. */
  concurrency?: number;
  retry?: RetryPolicy;
  /** Where the API key is looked up (default `process.env`). */
  env?: Record<string, string | undefined>;
  /** Waits between attempts (default: a real timer); must reject or return early when `signal` aborts. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

export const DEFAULT_API_KEY_ENV = "OPENAI_API_KEY";
const DEFAULT_TIMEOUT_MS = 120_000;
const DEFAULT_CONCURRENCY = 4;
const EXCERPT_CHARS = 200;
/**
 * Most bytes of a response body read, beyond which reading stops: room for the reply limit six times over (JSON
 * escapes a character in at most six bytes) plus the rest of the completion object. An error body needs far less.
 */
const BODY_OVERHEAD_BYTES = 64 * 1024;
const bodyByteLimit = (maxTokens: number): number => 6 * replyByteLimit(maxTokens) + BODY_OVERHEAD_BYTES;

/** The result of one attempt that failed in a way worth retrying. Other failures are thrown. */
interface RetryableFailure {
  status: number | undefined;
  /** What went wrong, with the URL; never headers. */
  detail: string;
  retryAfterMs: number | undefined;
  cause?: unknown;
}

export function createHttpModel(options: HttpModelOptions): LanguageModel {
  const baseUrl = normaliseBaseUrl(options.baseUrl);
  const model = options.model;
  if (model.trim() === "") throw new UsageError("model must be a non-empty model name, e.g. `Qwen/Qwen2.5-0.5B-Instruct`");
  const apiKeyEnv = options.apiKeyEnv ?? DEFAULT_API_KEY_ENV;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
  const retry = { ...(options.retry ?? defaultRetryPolicy) };
  const env = options.env ?? process.env;
  const sleep = options.sleep ?? defaultSleep;
  validateOptions(timeoutMs, concurrency, retry);

  const url = `${baseUrl}/chat/completions`;
  const modelId = `http:${baseUrl}#${model}`;
  const limit = pLimit(concurrency);
  let closed = false;

  /** Read per attempt so a rotated key is picked up and the key never lives on the model object. */
  function readApiKey(): string | undefined {
    const key = env[apiKeyEnv];
    return key === undefined || key === "" ? undefined : key;
  }

  async function attempt(body: string, signal: AbortSignal | undefined, keepStops: readonly string[], maxTokens: number): Promise<GenerateResult | RetryableFailure> {
    const apiKey = readApiKey();
    const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json" };
    if (apiKey !== undefined) headers.authorization = `Bearer ${apiKey}`;

    // One controller per attempt: the caller's signal and the per-attempt timeout both end it.
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    const onAbort = (): void => controller.abort();
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      let response: Response;
      let read: BoundedBody;
      try {
        response = await fetch(url, { method: "POST", headers, body, signal: controller.signal });
        read = await readBounded(response, response.ok ? bodyByteLimit(maxTokens) : BODY_OVERHEAD_BYTES);
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        const detail = controller.signal.aborted
          ? `POST ${url} timed out after ${timeoutMs} ms`
          : `POST ${url} failed: ${describeNetworkError(error)}`;
        return { status: undefined, detail, retryAfterMs: undefined, cause: error };
      }

      const { text } = read;
      if (response.ok) {
        const result = read.complete ? parseCompletion(text, url, apiKey, keepStops) : partialCompletion(read, url, apiKey);
        // The content alone may still exceed the reply limit (a complete body within the read limit): cut it here too.
        const capped = capReply(result.text, maxTokens, result.truncated);
        const { logprobs, ...rest } = result;
        const kept = logprobs === undefined || capped.text.length === result.text.length ? logprobs : cutLogprobs(logprobs, capped.text);
        return { ...rest, text: capped.text, ...(kept === undefined ? {} : { logprobs: kept }), ...(capped.truncated === undefined ? {} : { truncated: capped.truncated, finishReason: "length" }) };
      }

      const status = response.status;
      const detail = `POST ${url} returned HTTP ${status}: ${excerpt(text, apiKey)}`;
      if (isRetryableStatus(status)) {
        return { status, detail, retryAfterMs: parseRetryAfter(response.headers.get("retry-after"), Date.now()) };
      }
      throw new ModelCallError(detail + hintFor(status, apiKeyEnv, model), status, false);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    }
  }

  async function generate(request: GenerateRequest): Promise<GenerateResult> {
    const { signal } = request;
    const body = JSON.stringify(toRequestBody(model, request));
    const keepStops = request.includeStop === true ? (request.stop ?? []) : [];
    // No limit asked: none is sent (the server's default applies) and the reply is kept up to the byte limit.
    return retried(() => attempt(body, signal, keepStops, request.maxTokens ?? maxReplyTokens), signal);
  }

  /**
   * `once` tried until it answers, a retryable failure retried after the server's Retry-After or the backoff, at most
   * `retry.maxRetries` times; then a ModelCallError saying how many attempts were made.
   */
  async function retried<T extends GenerateResult | OpenedStream>(once: () => Promise<T | RetryableFailure>, signal: AbortSignal | undefined): Promise<T> {
    for (let retriesDone = 0; ; retriesDone++) {
      signal?.throwIfAborted();
      const outcome = await once();
      if (!isFailure(outcome)) return outcome;
      if (retriesDone >= retry.maxRetries) {
        const attempts = retriesDone + 1;
        throw new ModelCallError(
          `${outcome.detail} (gave up after ${attempts} attempt${attempts === 1 ? "" : "s"}; ` +
            "check that the server is up and not overloaded, or raise retry.maxRetries / timeoutMs)",
          outcome.status,
          true,
          { cause: outcome.cause },
        );
      }
      const delayMs =
        outcome.retryAfterMs === undefined
          ? backoffDelayMs(retry, retriesDone)
          : Math.min(outcome.retryAfterMs, retry.maxDelayMs);
      await raceAbort(sleep(delayMs, signal), signal);
    }
  }

  /**
   * One attempt at opening a streamed completion: the response once its status is 2xx (its body not yet read, the
   * attempt's timer still running over it), a retryable failure, or a throw as `attempt` throws.
   */
  async function openAttempt(body: string, signal: AbortSignal | undefined): Promise<OpenedStream | RetryableFailure> {
    const apiKey = readApiKey();
    const headers: Record<string, string> = { "content-type": "application/json", accept: "text/event-stream" };
    if (apiKey !== undefined) headers.authorization = `Bearer ${apiKey}`;
    const controller = new AbortController();
    let timedOut = false;
    // The attempt's timer measures silence: it starts over with every byte the body brings (`touch`), so a long stream
    // lives while it flows and a stalled one ends after `timeoutMs` without a byte.
    const expire = (): void => {
      timedOut = true;
      controller.abort();
    };
    let timer = setTimeout(expire, timeoutMs);
    const touch = (): void => {
      clearTimeout(timer);
      timer = setTimeout(expire, timeoutMs);
    };
    const onAbort = (): void => controller.abort();
    signal?.addEventListener("abort", onAbort, { once: true });
    const stop = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      controller.abort();
    };
    const failed = (error: unknown): RetryableFailure => {
      stop();
      if (signal?.aborted) throw signal.reason;
      const detail = timedOut ? `POST ${url} timed out after ${timeoutMs} ms` : `POST ${url} failed: ${describeNetworkError(error)}`;
      return { status: undefined, detail, retryAfterMs: undefined, cause: error };
    };
    let response: Response;
    try {
      response = await fetch(url, { method: "POST", headers, body, signal: controller.signal });
    } catch (error) {
      return failed(error);
    }
    if (response.ok) return { response, apiKey, stop, touch, timedOut: () => timedOut };
    let text: string;
    try {
      text = (await readBounded(response, BODY_OVERHEAD_BYTES)).text;
    } catch (error) {
      return failed(error);
    }
    stop();
    const status = response.status;
    const detail = `POST ${url} returned HTTP ${status}: ${excerpt(text, apiKey)}`;
    if (isRetryableStatus(status)) return { status, detail, retryAfterMs: parseRetryAfter(response.headers.get("retry-after"), Date.now()) };
    throw new ModelCallError(detail + hintFor(status, apiKeyEnv, model), status, false);
  }

  /** A streamed completion's parts: opened with `generate`'s retries, never retried once its body flows. */
  async function* stream(request: GenerateRequest): AsyncGenerator<StreamPart> {
    const { signal } = request;
    const body = JSON.stringify({ ...toRequestBody(model, request), stream: true, stream_options: { include_usage: true } });
    const opened = await retried(() => openAttempt(body, signal), signal);
    try {
      const maxTokens = request.maxTokens ?? maxReplyTokens;
      // A server that ignores `stream: true` answers one JSON completion: its reply is the stream's parts, whole.
      const type = opened.response.headers.get("content-type") ?? "";
      if (!/^\s*text\/event-stream/iu.test(type)) yield* wholeParts(await readWhole(opened, url, maxTokens), maxTokens, url, opened.apiKey, request.includeStop === true ? (request.stop ?? []) : []);
      else yield* streamParts(opened.response, { url, apiKey: opened.apiKey, maxTokens, timeoutMs, touch: opened.touch, timedOut: opened.timedOut, signal });
    } finally {
      // Also when the caller leaves the iteration early: the upstream's connection is closed.
      opened.stop();
    }
  }

  const httpModel: LanguageModel & { toJSON(): unknown } = {
    specificationVersion: "v1",
    modelId,
    maxConcurrency: concurrency,
    async doGenerate(request: GenerateRequest): Promise<GenerateResult> {
      if (closed) throw new UsageError(`${modelId} is closed; create a new model to send more requests`);
      const { signal } = request;
      signal?.throwIfAborted();
      try {
        // Racing the queue too, so a request aborted while waiting for a slot rejects at once.
        return await raceAbort(limit(() => generate(request)), signal);
      } catch (error) {
        // Whatever broke while the caller was aborting (the default sleep's own AbortError, say), the caller's reason wins.
        if (signal?.aborted) throw signal.reason;
        throw error;
      }
    },
    async *doStream(request: GenerateRequest): AsyncGenerator<StreamPart> {
      if (closed) throw new UsageError(`${modelId} is closed; create a new model to send more requests`);
      const { signal } = request;
      signal?.throwIfAborted();
      // The concurrency slot is held until the stream ends, however it ends.
      let release: () => void = () => {};
      const held = new Promise<void>((resolve) => (release = resolve));
      const entered = new Promise<void>((resolve) => void limit(() => (resolve(), held)));
      try {
        await raceAbort(entered, signal);
        yield* stream(request);
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        throw error;
      } finally {
        release();
      }
    },
    async close(): Promise<void> {
      closed = true;
    },
    // No key, no env: only what identifies the model and reproduces its configuration.
    toJSON() {
      const maxConcurrency = concurrency;
      return { specificationVersion: "v1", modelId, baseUrl, model, apiKeyEnv, timeoutMs, maxConcurrency, retry };
    },
  };
  return httpModel;
}

function normaliseBaseUrl(raw: string): string {
  const trimmed = raw.trim().replace(/\/+$/, "");
  let parsed: URL;
  try {
    parsed = new URL(trimmed);
  } catch {
    throw new UsageError(`baseUrl ${JSON.stringify(raw)} is not a URL; pass e.g. http://127.0.0.1:8000/v1`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new UsageError(`baseUrl must be http:// or https://, got ${parsed.protocol}//`);
  }
  if (parsed.username !== "" || parsed.password !== "") {
    // Never echo the URL here: the credentials are in it.
    throw new UsageError("baseUrl must not contain credentials; put the key in the variable named by apiKeyEnv");
  }
  if (parsed.search !== "" || parsed.hash !== "") {
    throw new UsageError(`baseUrl ${trimmed} must not have a query or fragment; pass e.g. http://127.0.0.1:8000/v1`);
  }
  return trimmed;
}

function validateOptions(timeoutMs: number, concurrency: number, retry: RetryPolicy): void {
  if (!(Number.isFinite(timeoutMs) && timeoutMs > 0)) {
    throw new UsageError(`timeoutMs must be a positive number, got ${timeoutMs}`);
  }
  if (!(Number.isInteger(concurrency) && concurrency >= 1)) {
    throw new UsageError(`concurrency must be an integer of at least 1, got ${concurrency}`);
  }
  if (!(Number.isInteger(retry.maxRetries) && retry.maxRetries >= 0)) {
    throw new UsageError(`retry.maxRetries must be a non-negative integer, got ${retry.maxRetries}`);
  }
  if (!(retry.initialDelayMs >= 0 && retry.maxDelayMs >= 0)) {
    throw new UsageError("retry.initialDelayMs and retry.maxDelayMs must be non-negative");
  }
}

function toRequestBody(model: string, request: GenerateRequest): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model,
    messages: request.messages.map(chatMessage),
  };
  if (request.maxTokens !== undefined) body.max_tokens = request.maxTokens;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.topP !== undefined) body.top_p = request.topP;
  // Not in OpenAI's API; vLLM, SGLang and llama.cpp's server accept it.
  if (request.topK !== undefined) body.top_k = request.topK;
  if (request.seed !== undefined) body.seed = request.seed;
  if (request.stop !== undefined && request.stop.length > 0) body.stop = [...request.stop];
  // Only where the request carries them: the gateway strips both for an upstream not configured to take them.
  if (request.reasoningEffort !== undefined) body.reasoning_effort = request.reasoningEffort;
  if (request.user !== undefined) body.user = request.user;
  // OpenAI's chat-completions log-probs of the chosen tokens; vLLM, SGLang and llama.cpp's server accept it too.
  if (request.logprobs === true) body.logprobs = true;
  // OpenAI's structured outputs; vLLM, SGLang and llama.cpp's server accept the same shape.
  if (request.responseFormat !== undefined) body.response_format = { type: "json_schema", json_schema: { name: "response", schema: request.responseFormat.schema } };
  if (request.tools !== undefined && request.tools.length > 0) {
    body.tools = request.tools.map(({ name, description, parameters, strict }) => ({
      type: "function",
      function: { name, ...(description === undefined ? {} : { description }), ...(parameters === undefined ? {} : { parameters }), ...(strict === undefined ? {} : { strict }) },
    }));
    const choice = request.toolChoice;
    if (choice !== undefined) body.tool_choice = choice.type === "required" ? "required" : { type: "function", function: { name: choice.name } };
  }
  return body;
}

/**
 * A turn as Chat Completions takes it: an assistant turn's calls as `tool_calls` (content null when it wrote no text,
 * as OpenAI's own replies have it), a tool result as a `tool` message answering `tool_call_id`. A failed result has no
 * field of its own in this API; its text says what went wrong.
 */
function chatMessage(message: GenerateRequest["messages"][number]): Record<string, unknown> {
  switch (message.role) {
    case "tool":
      return { role: "tool", tool_call_id: message.toolCallId, content: message.content };
    case "assistant": {
      const calls = message.toolCalls ?? [];
      if (calls.length === 0) return { role: "assistant", content: message.content };
      const tool_calls = calls.map((call) => ({ id: call.id, type: "function", function: { name: call.name, arguments: call.arguments } }));
      return { role: "assistant", content: message.content === "" ? null : message.content, tool_calls };
    }
    default:
      return { role: message.role, content: message.content };
  }
}

/**
 * `keepStops`: the request's stop strings when it asked for the matched one back. Only servers that name the match
 * (vLLM's `stop_reason`) can honour that; OpenAI's API does not say which string stopped it, so nothing is added.
 */
function parseCompletion(text: string, url: string, apiKey: string | undefined, keepStops: readonly string[]): GenerateResult {
  const malformed = (what: string): ModelCallError =>
    new ModelCallError(`POST ${url} returned a malformed completion (${what}): ${excerpt(text, apiKey)}`, undefined, false);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw malformed("body is not JSON");
  }
  const choice = isRecord(json) && Array.isArray(json.choices) ? (json.choices[0] as unknown) : undefined;
  if (!isRecord(choice) || !isRecord(choice.message)) throw malformed("no choices[0].message");
  const content = choice.message.content;
  // `null` content happens (e.g. a reasoning model cut off before answering); it is empty text, not a broken body.
  if (content !== null && content !== undefined && typeof content !== "string") {
    throw malformed("choices[0].message.content is not a string");
  }
  const matched = choice.finish_reason === "stop" && typeof choice.stop_reason === "string" && keepStops.includes(choice.stop_reason) ? choice.stop_reason : "";
  const toolCalls = readToolCalls(choice.message.tool_calls, malformed);
  const reply = (content ?? "") + matched;
  const logprobs = readLogprobs(choice.logprobs, reply, malformed);
  return {
    text: reply,
    ...(logprobs === undefined ? {} : { logprobs }),
    finishReason: mapFinishReason(choice.finish_reason),
    usage: isRecord(json) ? mapUsage(json.usage) : mapUsage(undefined),
    ...(toolCalls.length === 0 ? {} : { toolCalls }),
  };
}

/**
 * `choices[0].message.tool_calls`: `[{id, type: "function", function: {name, arguments}}]`, `arguments` the JSON text
 * the model wrote (kept as it is; a check judges it). Absent or null is no calls; anything else that is not this shape
 * is a malformed completion. A missing `id` (some local servers omit it) becomes `call_<index>`.
 */
function readToolCalls(raw: unknown, malformed: (what: string) => ModelCallError): ToolCall[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw malformed("choices[0].message.tool_calls is not a list");
  return raw.map((entry: unknown, index): ToolCall => {
    const where = `choices[0].message.tool_calls[${index}]`;
    if (!isRecord(entry) || !isRecord(entry.function)) throw malformed(`${where} has no function object`);
    if (entry.type !== undefined && entry.type !== "function") throw malformed(`${where}.type is not "function"`);
    const { name, arguments: args } = entry.function;
    if (typeof name !== "string" || name === "") throw malformed(`${where}.function.name is not a non-empty string`);
    if (typeof args !== "string") throw malformed(`${where}.function.arguments is not a string`);
    if (entry.id !== undefined && entry.id !== null && typeof entry.id !== "string") throw malformed(`${where}.id is not a string`);
    return { id: typeof entry.id === "string" && entry.id !== "" ? entry.id : `call_${index}`, name, arguments: args };
  });
}

/**
 * `choices[0].logprobs.content`: `[{token, logprob, bytes?}]`, one per generated token. Absent or null (a server that
 * gives none, or was not asked) is none; another shape is a malformed completion. A token's text is taken from its
 * UTF-8 `bytes` when given (a character split across tokens then goes whole to the token that completes it), else
 * from `token`. Undefined when the tokens do not spell the reply (a stop string the server appended, which it did not
 * report log-probs for): none rather than wrong ones.
 */
function readLogprobs(raw: unknown, text: string, malformed: (what: string) => ModelCallError): TokenLogprob[] | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!isRecord(raw)) throw malformed("choices[0].logprobs is not an object");
  const content = raw.content;
  if (content === undefined || content === null) return undefined;
  if (!Array.isArray(content)) throw malformed("choices[0].logprobs.content is not a list");
  const entries = content.map((entry: unknown, index) => {
    const where = `choices[0].logprobs.content[${index}]`;
    if (!isRecord(entry) || typeof entry.token !== "string") throw malformed(`${where}.token is not a string`);
    if (typeof entry.logprob !== "number" || !(entry.logprob <= 0)) throw malformed(`${where}.logprob is not a number ≤ 0`);
    const bytes = Array.isArray(entry.bytes) && entry.bytes.every((b) => Number.isInteger(b) && b >= 0 && b < 256) ? (entry.bytes as number[]) : undefined;
    return { token: entry.token, logprob: entry.logprob, bytes };
  });
  const decoder = new TextDecoder();
  const byBytes = entries.every((e) => e.bytes !== undefined);
  const seen: number[] = [];
  let spelled = "";
  const decoded = entries.map((e) => {
    if (!byBytes) return (spelled += e.token);
    seen.push(...(e.bytes as number[]));
    return decoder.decode(new Uint8Array(seen));
  });
  const logprobs = entries.map((e) => e.logprob);
  return alignTokenLogprobs(text, decoded, logprobs);
}

/** Log-probs of a reply cut to `text` (a prefix of what they spelled). */
function cutLogprobs(logprobs: readonly TokenLogprob[], text: string): TokenLogprob[] | undefined {
  let spelled = "";
  return alignTokenLogprobs(text, logprobs.map((t) => (spelled += t.text)), logprobs.map((t) => t.logprob));
}

/** A response body read up to a byte limit: the text read, whether it is the whole body, and the bytes seen. */
interface BoundedBody {
  text: string;
  complete: boolean;
  /** Bytes read (or announced by Content-Length, when larger): a lower bound on the body's size when not complete. */
  bytes: number;
  limit: number;
}

/**
 * Reads at most `limit` bytes of the body (streamed, so an oversized body is never held whole) and cancels the rest.
 * The text is decoded without a character cut at the limit.
 */
async function readBounded(response: Response, limit: number): Promise<BoundedBody> {
  const announced = Number(response.headers.get("content-length") ?? NaN);
  const decoder = new TextDecoder();
  let text = "";
  let bytes = 0;
  if (response.body === null) return { text, complete: true, bytes, limit };
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { text: text + decoder.decode(), complete: true, bytes, limit };
    const room = limit - bytes;
    bytes += value.byteLength;
    if (value.byteLength > room) {
      text += decoder.decode(value.subarray(0, room), { stream: true });
      await reader.cancel().catch(() => {});
      return { text, complete: false, bytes: Number.isFinite(announced) ? Math.max(announced, bytes) : bytes, limit };
    }
    text += decoder.decode(value, { stream: true });
  }
}

/**
 * The completion of a body cut at the read limit: the start of `choices[0].message.content`, as far as it was read,
 * with the cut recorded. Usage and the finish reason come after the content in a completion, so they are unknown:
 * the usage reads 0 and the finish reason "length".
 */
function partialCompletion(read: BoundedBody, url: string, apiKey: string | undefined): GenerateResult {
  const start = /"message"\s*:\s*\{[^]*?"content"\s*:\s*"/u.exec(read.text);
  if (start === null) {
    throw new ModelCallError(`POST ${url} returned a body over ${read.limit} bytes with no reply content in them: ${excerpt(read.text, apiKey)}`, undefined, false);
  }
  const content = decodeJsonStringPrefix(read.text.slice(start.index + start[0].length));
  const truncated: Truncation = { bytes: read.bytes, kept: Buffer.byteLength(content, "utf8"), reason: `response body over ${read.limit} bytes: reading stopped` };
  return { text: content, finishReason: "length", usage: mapUsage(undefined), truncated };
}

/** The JSON string starting at `raw` (after its opening quote), decoded up to its closing quote or the end of `raw`. */
function decodeJsonStringPrefix(raw: string): string {
  let end = 0;
  while (end < raw.length && raw[end] !== '"') end += raw[end] === "\\" ? 2 : 1;
  let body = raw.slice(0, Math.min(end, raw.length));
  // A cut inside an escape (`\`, `\u12`) is dropped: at most six characters.
  for (let drop = 0; drop <= 6 && body.length > 0; drop++) {
    try {
      return JSON.parse(`"${body}"`) as string;
    } catch {
      body = body.slice(0, -1);
    }
  }
  return "";
}

function mapFinishReason(reason: unknown): FinishReason {
  if (reason === "stop") return "stop";
  if (reason === "length") return "length";
  return "other";
}

/** Missing counts are reported as 0 rather than guessed. */
function mapUsage(usage: unknown): TokenUsage {
  if (!isRecord(usage)) return { promptTokens: 0, evaluatedPromptTokens: 0, completionTokens: 0 };
  const promptTokens = tokenCount(usage.prompt_tokens);
  const details = usage.prompt_tokens_details;
  const cachedTokens = isRecord(details) ? tokenCount(details.cached_tokens) : 0;
  return {
    promptTokens,
    evaluatedPromptTokens: Math.max(0, promptTokens - cachedTokens),
    completionTokens: tokenCount(usage.completion_tokens),
  };
}

function tokenCount(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : 0;
}

/** 408 timeout, 409 conflict (OpenAI's and the AI SDK's lock and retry signal), 429 rate limit, 5xx. */
function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || (status >= 500 && status <= 599);
}

function hintFor(status: number, apiKeyEnv: string, model: string): string {
  if (status === 401 || status === 403) return ` — check the API key in $${apiKeyEnv}`;
  if (status === 404) {
    return ` — check that baseUrl ends with the API version (usually /v1) and the server serves "${model}"`;
  }
  return "";
}

/** `Retry-After` as delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(header: string | null, nowMs: number): number | undefined {
  if (header === null) return undefined;
  const value = header.trim();
  if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1000);
  const dateMs = Date.parse(value);
  return Number.isNaN(dateMs) ? undefined : Math.max(0, dateMs - nowMs);
}

/** Exponential backoff with "equal jitter": a uniform wait in [cap/2, cap], cap = min(max, initial·2^n). */
export function backoffDelayMs(retry: RetryPolicy, retriesDone: number): number {
  const cap = Math.min(retry.maxDelayMs, retry.initialDelayMs * 2 ** retriesDone);
  return Math.round(cap / 2 + Math.random() * (cap / 2));
}

function describeNetworkError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause;
  if (!(cause instanceof Error)) return error.message;
  const code = (cause as { code?: unknown }).code;
  return `${error.message} (${typeof code === "string" ? `${code}: ` : ""}${cause.message})`;
}

/** A one-line start of a response body, with the key blanked in case the server echoes request headers. */
function excerpt(text: string, apiKey: string | undefined): string {
  let line = text.replace(/\s+/g, " ").trim();
  if (apiKey !== undefined) line = line.replaceAll(apiKey, "[redacted]");
  if (line === "") return "(empty body)";
  return line.length > EXCERPT_CHARS ? `${line.slice(0, EXCERPT_CHARS)}…` : line;
}

/** A streamed completion whose 2xx status has come: its response, the key it was sent with, and how to end it. */
interface OpenedStream {
  response: Response;
  apiKey: string | undefined;
  /** Ends the attempt: its timer cleared, its connection closed (a no-op once the body has ended). */
  stop(): void;
  /** A byte came: the silence timer starts over. */
  touch(): void;
  timedOut(): boolean;
}

/** What reading a streamed completion needs besides its response. */
interface StreamReading {
  url: string;
  apiKey: string | undefined;
  maxTokens: number;
  timeoutMs: number;
  touch(): void;
  timedOut(): boolean;
  signal: AbortSignal | undefined;
}

/**
 * The parts of a Chat Completions event stream, read line by line as the server-sent events format frames it (`data:`
 * lines joined, an empty line ends an event, comments and other fields skipped), until `data: [DONE]`. A chunk with an
 * `error` member, or one that is not JSON, is a `ModelCallError` with the key blanked; so is a stream that ends with
 * neither a finish reason nor `[DONE]` (the server broke off). The reply is bounded as `doGenerate`'s is: past the
 * reply limit (or the body limit) reading stops and the finish reason is `length`. The usage comes with the last
 * chunk (`stream_options.include_usage`), so the `finish` part waits for the stream's end.
 */
async function* streamParts(response: Response, reading: StreamReading): AsyncGenerator<StreamPart> {
  const { url, apiKey } = reading;
  const malformed = (what: string, text: string): ModelCallError => new ModelCallError(`POST ${url} streamed a malformed chunk (${what}): ${excerpt(text, apiKey)}`, undefined, false);
  if (response.body === null) throw malformed("no body", "");
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  const state: ChunkState = { finish: undefined, usage: mapUsage(undefined), textBytes: 0, replyLimit: replyByteLimit(reading.maxTokens), cut: false };
  const bodyLimit = bodyByteLimit(reading.maxTokens);
  let bytes = 0;
  let buffer = "";
  let data: string[] = [];
  let done = false;
  try {
    while (!done && !state.cut) {
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      try {
        chunk = await reader.read();
      } catch (error) {
        if (reading.signal?.aborted) throw reading.signal.reason;
        if (reading.timedOut()) throw new ModelCallError(`POST ${url} timed out: no byte of its stream for ${reading.timeoutMs} ms (raise timeoutMs if the server is slow)`, undefined, false, { cause: error });
        throw new ModelCallError(`POST ${url} broke off its stream: ${describeNetworkError(error)}`, undefined, false, { cause: error });
      }
      if (chunk.done) break;
      reading.touch();
      bytes += chunk.value.byteLength;
      if (bytes > bodyLimit) state.cut = true;
      buffer += decoder.decode(chunk.value, { stream: true });
      const lines = buffer.split(/\r\n|\r|\n/u);
      // The last piece may be a line not yet ended (a `\r` at the end may yet be half of `\r\n`: an empty line then follows, harmlessly).
      buffer = lines.pop() ?? "";
      for (const line of lines) {
        if (line !== "") {
          if (line.startsWith("data:")) data.push(line.slice(line.startsWith("data: ") ? 6 : 5));
          continue;
        }
        if (data.length === 0) continue;
        const payload = data.join("\n");
        data = [];
        if (payload === "[DONE]") {
          done = true;
          break;
        }
        for (const part of chunkParts(payload, state, malformed, apiKey, url)) yield part;
        if (state.cut) break;
      }
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  if (!done && state.finish === undefined && !state.cut) throw new ModelCallError(`POST ${url} ended its stream before a finish reason or [DONE]; the reply is incomplete`, undefined, false);
  yield { type: "finish", finishReason: state.cut ? "length" : (state.finish ?? "stop"), usage: state.usage };
}

/** The body of an opened stream that is not an event stream, read whole within `doGenerate`'s limit. */
async function readWhole(opened: OpenedStream, url: string, maxTokens: number): Promise<BoundedBody> {
  try {
    return await readBounded(opened.response, bodyByteLimit(maxTokens));
  } catch (error) {
    if (opened.timedOut()) throw new ModelCallError(`POST ${url} timed out: no byte of its body for its timeout`, undefined, false, { cause: error });
    throw new ModelCallError(`POST ${url} broke off its body: ${describeNetworkError(error)}`, undefined, false, { cause: error });
  }
}

/** A whole completion as a stream's parts: its text, each tool call as one piece, the finish; cut as `doGenerate` cuts it. */
function wholeParts(read: BoundedBody, maxTokens: number, url: string, apiKey: string | undefined, keepStops: readonly string[]): StreamPart[] {
  const result = read.complete ? parseCompletion(read.text, url, apiKey, keepStops) : partialCompletion(read, url, apiKey);
  const capped = capReply(result.text, maxTokens, result.truncated);
  const parts: StreamPart[] = capped.text === "" ? [] : [{ type: "text-delta", text: capped.text }];
  (result.toolCalls ?? []).forEach((call, index) => parts.push({ type: "tool-call-delta", index, id: call.id, name: call.name, argumentsDelta: call.arguments }));
  parts.push({ type: "finish", finishReason: capped.truncated === undefined ? result.finishReason : "length", usage: result.usage });
  return parts;
}

/** What a stream's chunks have told so far. */
interface ChunkState {
  finish: FinishReason | undefined;
  usage: TokenUsage;
  textBytes: number;
  replyLimit: number;
  /** The reply outgrew its limit: reading stops. */
  cut: boolean;
}

/** The parts of one `chat.completion.chunk`: `choices[0].delta`'s content and tool-call pieces; its finish reason and usage into `state`. */
function chunkParts(payload: string, state: ChunkState, malformed: (what: string, text: string) => ModelCallError, apiKey: string | undefined, url: string): StreamPart[] {
  let json: unknown;
  try {
    json = JSON.parse(payload);
  } catch {
    throw malformed("not JSON", payload);
  }
  if (!isRecord(json)) throw malformed("not an object", payload);
  if (json.error !== undefined && json.error !== null) throw new ModelCallError(`POST ${url} streamed an error: ${excerpt(JSON.stringify(json.error), apiKey)}`, undefined, false);
  if (isRecord(json.usage)) state.usage = mapUsage(json.usage);
  const choice = Array.isArray(json.choices) ? (json.choices[0] as unknown) : undefined;
  if (choice === undefined) return [];
  if (!isRecord(choice)) throw malformed("choices[0] is not an object", payload);
  if (choice.finish_reason !== null && choice.finish_reason !== undefined) state.finish = mapFinishReason(choice.finish_reason);
  const delta = choice.delta;
  if (delta === undefined || delta === null) return [];
  if (!isRecord(delta)) throw malformed("choices[0].delta is not an object", payload);
  const parts: StreamPart[] = [];
  if (typeof delta.content === "string" && delta.content !== "") {
    const grown = state.textBytes + Buffer.byteLength(delta.content, "utf8");
    if (grown > state.replyLimit) {
      state.cut = true;
      return parts;
    }
    state.textBytes = grown;
    parts.push({ type: "text-delta", text: delta.content });
  } else if (delta.content !== undefined && delta.content !== null && typeof delta.content !== "string") throw malformed("choices[0].delta.content is not a string", payload);
  if (delta.tool_calls === undefined || delta.tool_calls === null) return parts;
  if (!Array.isArray(delta.tool_calls)) throw malformed("choices[0].delta.tool_calls is not a list", payload);
  for (const entry of delta.tool_calls as unknown[]) {
    const fn = isRecord(entry) ? entry.function : undefined;
    if (!isRecord(entry) || !Number.isInteger(entry.index) || (entry.index as number) < 0) throw malformed("a tool call delta has no index", payload);
    if (fn !== undefined && fn !== null && !isRecord(fn)) throw malformed("a tool call delta's function is not an object", payload);
    const name = isRecord(fn) && typeof fn.name === "string" && fn.name !== "" ? fn.name : undefined;
    const args = isRecord(fn) && typeof fn.arguments === "string" ? fn.arguments : "";
    const id = typeof entry.id === "string" && entry.id !== "" ? entry.id : undefined;
    parts.push({ type: "tool-call-delta", index: entry.index as number, ...(id === undefined ? {} : { id }), ...(name === undefined ? {} : { name }), argumentsDelta: args });
  }
  return parts;
}

function isFailure<T extends object>(outcome: T | RetryableFailure): outcome is RetryableFailure {
  return "detail" in outcome;
}

function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return sleepFor(ms, undefined, signal === undefined ? undefined : { signal });
}
