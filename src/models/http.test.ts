import assert from "node:assert/strict";
import { listenOnLoopback } from "../cli/cli-harness.js";
import http from "node:http";
import { describe, it, type TestContext } from "node:test";
import { inspect } from "node:util";
import { ModelCallError, ReflectkitError, UsageError } from "../errors.js";
import { createHttpModel, defaultRetryPolicy, type HttpModelOptions } from "./http.js";
import type { GenerateRequest } from "./language-model.js";
import { replyByteLimit } from "./reply-cap.js";

const KEY = "sk-test-DO-NOT-LEAK-8f3a1c";
const MODEL = "test-model";

interface SeenRequest {
  method: string | undefined;
  url: string | undefined;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown>;
}

/** What the server does with one request; `index` counts from 0. */
type Behaviour = (res: http.ServerResponse, seen: SeenRequest, index: number) => void;

interface ScriptedServer {
  baseUrl: string;
  requests: SeenRequest[];
  /** Most requests the server was handling at one time. */
  maxInFlight: () => number;
  /** Resolves when the server has received `n` requests in all. */
  received: (n: number) => Promise<void>;
}

/**
 * A real HTTP server on 127.0.0.1, closed when the test ends. Request i gets `script[i]`; the last behaviour repeats.
 */
async function startServer(t: TestContext, script: Behaviour | Behaviour[]): Promise<ScriptedServer> {
  const behaviours = Array.isArray(script) ? script : [script];
  const requests: SeenRequest[] = [];
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const server = http.createServer((req, res) => {
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    let settled = false;
    const done = (): void => {
      if (!settled) {
        settled = true;
        inFlight -= 1;
      }
    };
    res.on("close", done);
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const seen: SeenRequest = {
        method: req.method,
        url: req.url,
        headers: req.headers,
        body: text === "" ? {} : (JSON.parse(text) as Record<string, unknown>),
      };
      const index = requests.push(seen) - 1;
      for (const waiter of waiters.filter((w) => requests.length >= w.n)) waiter.resolve();
      const behaviour = behaviours[Math.min(index, behaviours.length - 1)];
      assert.ok(behaviour);
      behaviour(res, seen, index);
    });
  });
  const port = await listenOnLoopback(t, server);
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    maxInFlight: () => maxInFlight,
    received: (n) =>
      requests.length >= n ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ n, resolve })),
  };
}

function completion(content: string | null, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: "cmpl-1",
    object: "chat.completion",
    choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
    usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 },
    ...extra,
  };
}

function replyJson(body: unknown, status = 200, headers: Record<string, string> = {}): Behaviour {
  return (res) => {
    res.writeHead(status, { "content-type": "application/json", ...headers });
    res.end(JSON.stringify(body));
  };
}

function replyText(status: number, text: string, headers: Record<string, string> = {}): Behaviour {
  return (res) => {
    res.writeHead(status, { "content-type": "text/plain", ...headers });
    res.end(text);
  };
}

const ok = replyJson(completion("42"));
const hang: Behaviour = () => {};
const destroySocket: Behaviour = (res) => res.socket?.destroy();
function after(ms: number, behaviour: Behaviour): Behaviour {
  return (res, seen, index) => {
    const timer = setTimeout(() => behaviour(res, seen, index), ms);
    res.on("close", () => clearTimeout(timer));
  };
}

/** A sleep that records what it was asked to wait and returns at once. */
function fastSleep(): { sleep: NonNullable<HttpModelOptions["sleep"]>; waits: number[] } {
  const waits: number[] = [];
  return {
    waits,
    sleep: async (ms) => {
      waits.push(ms);
    },
  };
}

const request: GenerateRequest = { messages: [{ role: "user", content: "What is 6*7?" }], maxTokens: 16 };

function modelFor(server: ScriptedServer, overrides: Partial<HttpModelOptions> = {}) {
  return createHttpModel({
    baseUrl: server.baseUrl,
    model: MODEL,
    env: { OPENAI_API_KEY: KEY },
    retry: { maxRetries: 3, initialDelayMs: 1, maxDelayMs: 5 },
    sleep: fastSleep().sleep,
    ...overrides,
  });
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  assert.fail("expected the promise to reject");
}

async function modelCallError(promise: Promise<unknown>): Promise<ModelCallError> {
  const error = await rejection(promise);
  assert.ok(error instanceof ModelCallError, `expected ModelCallError, got ${inspect(error)}`);
  assertNoKey(error);
  return error;
}

function assertNoKey(error: unknown): void {
  assert.ok(!inspect(error, { depth: 10 }).includes(KEY), "the API key leaked into an error");
  assert.ok(!JSON.stringify(error).includes(KEY), "the API key leaked into a serialised error");
}

describe("createHttpModel", () => {
  it("maps the completion, finish reason and usage, cached prompt tokens included", async (t) => {
    const server = await startServer(t, [
      replyJson(
        completion("The answer is 42.", {
          usage: { prompt_tokens: 100, completion_tokens: 7, prompt_tokens_details: { cached_tokens: 64 } },
        }),
      ),
      replyJson(completion("no usage here", { usage: undefined })),
      replyJson({ choices: [{ message: { role: "assistant", content: "cut" }, finish_reason: "length" }] }),
      replyJson({ choices: [{ message: { role: "assistant", content: null }, finish_reason: "tool_calls" }] }),
    ]);
    const model = modelFor(server);

    assert.deepEqual(await model.doGenerate(request), {
      text: "The answer is 42.",
      finishReason: "stop",
      usage: { promptTokens: 100, evaluatedPromptTokens: 36, completionTokens: 7 },
    });
    const zeros = { promptTokens: 0, evaluatedPromptTokens: 0, completionTokens: 0 };
    assert.deepEqual(await model.doGenerate(request), { text: "no usage here", finishReason: "stop", usage: zeros });
    assert.deepEqual(await model.doGenerate(request), { text: "cut", finishReason: "length", usage: zeros });
    assert.deepEqual(await model.doGenerate(request), { text: "", finishReason: "other", usage: zeros });
  });

  it("keeps the matched stop string only when asked and the server names it (vLLM's stop_reason)", async (t) => {
    const stopped = (content: string, extra: Record<string, unknown>) => replyJson({ choices: [{ message: { role: "assistant", content }, finish_reason: "stop", ...extra }] });
    const server = await startServer(t, [
      stopped("<answer>42", { stop_reason: "</answer>" }),
      stopped("<answer>42", { stop_reason: "</answer>" }),
      stopped("<answer>42", {}),
      stopped("<answer>42", { stop_reason: 106 }),
      stopped("<answer>42", { stop_reason: "something else" }),
    ]);
    const model = modelFor(server);
    const asked = { ...request, stop: ["</answer>"], includeStop: true };
    assert.equal((await model.doGenerate(asked)).text, "<answer>42</answer>");
    assert.equal((await model.doGenerate({ ...request, stop: ["</answer>"] })).text, "<answer>42", "not asked: left out");
    assert.equal((await model.doGenerate(asked)).text, "<answer>42", "OpenAI does not say which string matched");
    assert.equal((await model.doGenerate(asked)).text, "<answer>42", "a token id (end of sequence) is not a stop string");
    assert.equal((await model.doGenerate(asked)).text, "<answer>42", "only the request's own stop strings");
    // includeStop is ours, not an API field: the body carries no trace of it.
    assert.ok(server.requests.every((r) => !JSON.stringify(r.body).includes("include")));
  });

  it("reports all prompt tokens as evaluated when the server says nothing about caching", async (t) => {
    const server = await startServer(t, ok);
    const result = await modelFor(server).doGenerate(request);
    assert.deepEqual(result.usage, { promptTokens: 12, evaluatedPromptTokens: 12, completionTokens: 3 });
  });

  it("POSTs the sampling fields to <baseUrl>/chat/completions, optional ones only when given", async (t) => {
    const server = await startServer(t, ok);
    // A trailing slash on baseUrl must not double up.
    const model = modelFor(server, { baseUrl: `${server.baseUrl}/` });
    const messages = [
      { role: "system", content: "Be brief." },
      { role: "user", content: "6*7?" },
    ] as const;
    await model.doGenerate({ messages, maxTokens: 32, temperature: 0.7, topP: 0.9, topK: 20, seed: 7, stop: ["\n\n"] });
    await model.doGenerate({ messages, maxTokens: 8 });

    assert.equal(server.requests.length, 2);
    const [full, minimal] = server.requests;
    assert.equal(full?.method, "POST");
    assert.equal(full?.url, "/v1/chat/completions");
    assert.equal(full?.headers["content-type"], "application/json");
    assert.deepEqual(full?.body, {
      model: MODEL,
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "6*7?" },
      ],
      max_tokens: 32,
      temperature: 0.7,
      top_p: 0.9,
      top_k: 20,
      seed: 7,
      stop: ["\n\n"],
    });
    assert.deepEqual(minimal?.body, { model: MODEL, messages: full?.body.messages, max_tokens: 8 });
    assert.equal(model.modelId, `http:${server.baseUrl}#${MODEL}`);
    assert.equal(model.maxConcurrency, 4);
  });

  it("sends `Authorization: Bearer <key>` only when the named variable is set and non-empty", async (t) => {
    const server = await startServer(t, ok);
    await modelFor(server).doGenerate(request);
    await modelFor(server, { env: {} }).doGenerate(request);
    await modelFor(server, { env: { OPENAI_API_KEY: "" } }).doGenerate(request);
    const otherEnv = { VLLM_KEY: "other-key", OPENAI_API_KEY: KEY };
    await modelFor(server, { apiKeyEnv: "VLLM_KEY", env: otherEnv }).doGenerate(request);

    assert.deepEqual(
      server.requests.map((r) => r.headers.authorization),
      [`Bearer ${KEY}`, undefined, undefined, "Bearer other-key"],
    );
  });

  it("reads the key at request time, not at construction", async (t) => {
    const server = await startServer(t, ok);
    const env: Record<string, string | undefined> = {};
    const model = modelFor(server, { env });
    env.OPENAI_API_KEY = KEY;
    await model.doGenerate(request);
    assert.equal(server.requests[0]?.headers.authorization, `Bearer ${KEY}`);
  });

  it("retries a 500 and succeeds on the next attempt", async (t) => {
    const server = await startServer(t, [replyText(500, "boom"), ok]);
    const { sleep, waits } = fastSleep();
    const result = await modelFor(server, { sleep }).doGenerate(request);
    assert.equal(result.text, "42");
    assert.equal(server.requests.length, 2);
    assert.equal(waits.length, 1);
  });

  it("retries on the real timer with tiny delays", async (t) => {
    const server = await startServer(t, [replyText(502, "bad gateway"), replyText(503, "busy"), ok]);
    // No `sleep` option: the default timer-based one.
    const model = createHttpModel({
      baseUrl: server.baseUrl,
      model: MODEL,
      env: {},
      retry: { maxRetries: 2, initialDelayMs: 5, maxDelayMs: 20 },
    });
    const started = performance.now();
    assert.equal((await model.doGenerate(request)).text, "42");
    assert.equal(server.requests.length, 3);
    // Equal jitter waits at least half of each backoff step: 2.5 ms then 5 ms.
    assert.ok(performance.now() - started >= 7, "the backoff did not wait");
  });

  it("waits what `Retry-After` says on a 429, in seconds or as an HTTP date, capped by maxDelayMs", async (t) => {
    const farFuture = new Date(Date.now() + 3_600_000).toUTCString();
    const server = await startServer(t, [
      replyText(429, "slow down", { "retry-after": "1" }),
      replyText(429, "slow down", { "retry-after": farFuture }),
      replyText(429, "slow down", { "retry-after": "120" }),
      ok,
    ]);
    const { sleep, waits } = fastSleep();
    const model = modelFor(server, { sleep, retry: { maxRetries: 4, initialDelayMs: 10, maxDelayMs: 30_000 } });
    assert.equal((await model.doGenerate(request)).text, "42");
    assert.deepEqual(waits, [1000, 30_000, 30_000]);
  });

  it("backs off exponentially with jitter, never past maxDelayMs", async (t) => {
    const server = await startServer(t, [replyText(503, "busy")]);
    const { sleep, waits } = fastSleep();
    const model = modelFor(server, { sleep, retry: { maxRetries: 4, initialDelayMs: 100, maxDelayMs: 300 } });
    await modelCallError(model.doGenerate(request));
    assert.equal(waits.length, 4);
    const caps = [100, 200, 300, 300];
    waits.forEach((wait, i) => {
      const cap = caps[i] ?? 0;
      assert.ok(wait >= cap / 2 && wait <= cap, `wait ${i} was ${wait}, outside [${cap / 2}, ${cap}]`);
    });
  });

  it("gives up on a 503 that never clears after maxRetries + 1 requests, with a retryable ModelCallError", async (t) => {
    const server = await startServer(t, replyText(503, "model is loading, try again"));
    const error = await modelCallError(modelFor(server).doGenerate(request));
    assert.equal(server.requests.length, 4);
    assert.equal(error.status, 503);
    assert.equal(error.isRetryable, true);
    assert.ok(ReflectkitError.isInstance(error));
    assert.match(error.message, /503/);
    assert.match(error.message, /model is loading/);
    assert.ok(error.message.includes(`${server.baseUrl}/chat/completions`));
    assert.match(error.message, /4 attempts/);
  });

  it("throws a 400 at once, without retrying, and without the key in the message", async (t) => {
    const server = await startServer(t, replyJson({ error: { message: "max_tokens is too large" } }, 400));
    const { sleep, waits } = fastSleep();
    const error = await modelCallError(modelFor(server, { sleep }).doGenerate(request));
    assert.equal(server.requests.length, 1);
    assert.deepEqual(waits, []);
    assert.equal(error.status, 400);
    assert.equal(error.isRetryable, false);
    assert.match(error.message, /400/);
    assert.match(error.message, /max_tokens is too large/);
    assert.ok(!error.message.includes(KEY));
  });

  it("never retries other 4xx, and redacts the key if the server echoes it back", async (t) => {
    const echoAuth: Behaviour = (res, seen) => {
      res.writeHead(401, { "content-type": "text/plain" });
      res.end(`invalid credentials: ${String(seen.headers.authorization)}`);
    };
    const server = await startServer(t, [echoAuth, replyText(404, "no such model"), replyText(422, "unprocessable")]);
    const model = modelFor(server);

    const unauthorised = await modelCallError(model.doGenerate(request));
    assert.equal(unauthorised.status, 401);
    assert.match(unauthorised.message, /\[redacted\]/);
    assert.match(unauthorised.message, /\$OPENAI_API_KEY/);
    const notFound = await modelCallError(model.doGenerate(request));
    assert.equal(notFound.status, 404);
    const unprocessable = await modelCallError(model.doGenerate(request));
    assert.equal(unprocessable.status, 422);
    assert.equal(server.requests.length, 3);
  });

  it("retries a 408 and a 409", async (t) => {
    const server = await startServer(t, [replyText(408, "request timeout"), replyText(409, "conflict"), ok]);
    assert.equal((await modelFor(server).doGenerate(request)).text, "42");
    assert.equal(server.requests.length, 3);
  });

  it("times out an attempt the server never answers, retries, then fails", async (t) => {
    const server = await startServer(t, hang);
    const model = modelFor(server, { timeoutMs: 200, retry: { maxRetries: 2, initialDelayMs: 1, maxDelayMs: 5 } });
    const started = performance.now();
    const error = await modelCallError(model.doGenerate(request));
    const elapsed = performance.now() - started;
    assert.equal(server.requests.length, 3);
    assert.equal(error.status, undefined);
    assert.equal(error.isRetryable, true);
    assert.match(error.message, /timed out after 200 ms/);
    assert.ok(elapsed >= 550 && elapsed < 3000, `took ${elapsed} ms for three 200 ms attempts`);
  });

  it("times out a response whose body never finishes", async (t) => {
    const server = await startServer(t, [
      (res) => {
        res.writeHead(200, { "content-type": "application/json" });
        res.write('{"choices": [');
      },
      ok,
    ]);
    const result = await modelFor(server, { timeoutMs: 200 }).doGenerate(request);
    assert.equal(result.text, "42");
    assert.equal(server.requests.length, 2);
  });

  it("retries when the server destroys the socket", async (t) => {
    const server = await startServer(t, [destroySocket, ok]);
    assert.equal((await modelFor(server).doGenerate(request)).text, "42");
    assert.equal(server.requests.length, 2);
  });

  it("reports a network failure as retryable once retries run out", async (t) => {
    const server = await startServer(t, destroySocket);
    const model = modelFor(server, { retry: { maxRetries: 1, initialDelayMs: 1, maxDelayMs: 1 } });
    const error = await modelCallError(model.doGenerate(request));
    assert.equal(server.requests.length, 2);
    assert.equal(error.status, undefined);
    assert.equal(error.isRetryable, true);
    assert.match(error.message, /failed: fetch failed/);
  });

  it("rejects a malformed body without retrying, quoting the start of it", async (t) => {
    const server = await startServer(t, [
      replyText(200, "<html>Gateway says hello</html>"),
      replyJson({ object: "chat.completion", choices: [] }),
      replyJson({ choices: [{ message: { content: 42 } }] }),
    ]);
    const model = modelFor(server);

    const notJson = await modelCallError(model.doGenerate(request));
    assert.equal(notJson.isRetryable, false);
    assert.match(notJson.message, /not JSON/);
    assert.match(notJson.message, /Gateway says hello/);
    const noChoices = await modelCallError(model.doGenerate(request));
    assert.match(noChoices.message, /no choices\[0\]\.message/);
    const badContent = await modelCallError(model.doGenerate(request));
    assert.match(badContent.message, /content is not a string/);
    assert.equal(server.requests.length, 3);
  });

  it("sends tools as OpenAI functions and reads tool_calls back, arguments as the raw text", async (t) => {
    const calls = [
      { id: "call_abc", type: "function", function: { name: "get_weather", arguments: '{"city": "Paris"}' } },
      { id: "call_def", type: "function", function: { name: "now", arguments: "{not json" } },
    ];
    const server = await startServer(t, replyJson({ ...completion(null), choices: [{ index: 0, message: { role: "assistant", content: null, tool_calls: calls }, finish_reason: "tool_calls" }] }));
    const parameters = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };
    const result = await modelFor(server).doGenerate({ ...request, tools: [{ name: "get_weather", description: "Weather in a city", parameters }, { name: "now" }] });
    assert.deepEqual(server.requests[0]?.body.tools, [
      { type: "function", function: { name: "get_weather", description: "Weather in a city", parameters } },
      { type: "function", function: { name: "now" } },
    ]);
    assert.equal(result.text, "");
    assert.equal(result.finishReason, "other");
    assert.deepEqual(result.toolCalls, [
      { id: "call_abc", name: "get_weather", arguments: '{"city": "Paris"}' },
      { id: "call_def", name: "now", arguments: "{not json" },
    ]);
  });

  it("sends no tools field without tools, and leaves toolCalls out when the reply has none (null or absent)", async (t) => {
    const server = await startServer(t, [replyJson(completion("42")), replyJson({ ...completion("43"), choices: [{ message: { content: "43", tool_calls: null }, finish_reason: "stop" }] })]);
    const model = modelFor(server);
    const plain = await model.doGenerate({ ...request, tools: [] });
    assert.equal("tools" in (server.requests[0]?.body ?? {}), false);
    assert.equal(plain.toolCalls, undefined);
    assert.equal((await model.doGenerate(request)).toolCalls, undefined);
  });

  it("names a call without an id by its index", async (t) => {
    const server = await startServer(t, replyJson({ ...completion(null), choices: [{ message: { content: "", tool_calls: [{ function: { name: "f", arguments: "{}" } }] }, finish_reason: "tool_calls" }] }));
    assert.deepEqual((await modelFor(server).doGenerate(request)).toolCalls, [{ id: "call_0", name: "f", arguments: "{}" }]);
  });

  it("rejects malformed tool_calls as a malformed completion, without retrying", async (t) => {
    const withCalls = (toolCalls: unknown) => replyJson({ ...completion(null), choices: [{ message: { content: null, tool_calls: toolCalls }, finish_reason: "tool_calls" }] });
    const cases: Array<[unknown, RegExp]> = [
      [{ function: { name: "f" } }, /tool_calls is not a list/],
      [[{ id: "a", type: "function" }], /tool_calls\[0\] has no function object/],
      [[{ id: "a", type: "function", function: { name: "", arguments: "{}" } }], /tool_calls\[0\]\.function\.name is not a non-empty string/],
      [[{ id: "a", type: "function", function: { name: "f", arguments: { city: "Paris" } } }], /tool_calls\[0\]\.function\.arguments is not a string/],
      [[{ id: "a", type: "code", function: { name: "f", arguments: "{}" } }], /tool_calls\[0\]\.type is not "function"/],
      [[{ id: 7, type: "function", function: { name: "f", arguments: "{}" } }], /tool_calls\[0\]\.id is not a string/],
    ];
    const server = await startServer(t, cases.map(([toolCalls]) => withCalls(toolCalls)));
    const model = modelFor(server);
    for (const [, words] of cases) {
      const error = await modelCallError(model.doGenerate(request));
      assert.equal(error.isRetryable, false);
      assert.match(error.message, /returned a malformed completion/);
      assert.match(error.message, words);
    }
    assert.equal(server.requests.length, cases.length);
  });

  it("cuts a reply longer than the request's token limit allows, recording the cut", async (t) => {
    const long = `${"é".repeat(3000)}tail`;
    const server = await startServer(t, replyJson(completion(long)));
    const result = await modelFor(server).doGenerate({ ...request, maxTokens: 100 });
    const limit = replyByteLimit(100);
    assert.ok(Buffer.byteLength(result.text, "utf8") <= limit);
    assert.ok(long.startsWith(result.text) && result.text.length > 1000, "a prefix, no character split");
    assert.equal(result.finishReason, "length");
    assert.deepEqual(result.truncated, { bytes: Buffer.byteLength(long, "utf8"), kept: Buffer.byteLength(result.text, "utf8"), reason: `reply over ${limit} bytes (100 tokens × 16 + 1024, at most 1048576)` });
  });

  it("stops reading a 40 MB body at its read limit, streamed, and keeps the start of the content with the cut recorded", async (t) => {
    const MB = 1024 * 1024;
    const chunk = Buffer.from("ab\\n\\u00e9".repeat(MB / 12).slice(0, MB));
    let written = 0;
    const server = await startServer(t, (res) => {
      const head = Buffer.from('{"id":"cmpl-1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"START');
      res.writeHead(200, { "content-type": "application/json", "content-length": String(head.length + 40 * MB + 100) });
      res.on("error", () => {});
      res.write(head);
      const pump = (): void => {
        while (written < 40 * MB) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once("drain", pump);
        }
        res.end('"},"finish_reason":"stop"}]}');
      };
      pump();
    });
    const before = process.memoryUsage().rss;
    const result = await modelFor(server).doGenerate({ ...request, maxTokens: 256 });
    const grown = process.memoryUsage().rss - before;
    assert.ok(result.text.startsWith("STARTab\néab\né"), "the JSON escapes are decoded");
    assert.ok(Buffer.byteLength(result.text, "utf8") <= replyByteLimit(256));
    assert.equal(result.finishReason, "length");
    assert.ok(result.truncated !== undefined);
    assert.ok(result.truncated.bytes >= 40 * MB, `bytes ${result.truncated.bytes}`);
    assert.match(result.truncated.reason, /^response body over \d+ bytes: reading stopped; reply over \d+ bytes/);
    assert.ok(written < 40 * MB, `the server could write only ${written} bytes before the client hung up`);
    assert.ok(grown < 30 * MB, `memory grew by ${(grown / MB).toFixed(1)} MB`);
  });

  it("refuses a body over the read limit that holds no reply content", async (t) => {
    const server = await startServer(t, replyJson({ padding: "x".repeat(500_000), choices: [{ message: { content: "late" } }] }));
    const error = await modelCallError(modelFor(server).doGenerate(request));
    assert.equal(error.isRetryable, false);
    assert.match(error.message, /returned a body over \d+ bytes with no reply content in them/);
    assert.ok(error.message.length < 800);
  });

  it("keeps the excerpt of a long body short", async (t) => {
    const server = await startServer(t, replyText(400, "x".repeat(10_000)));
    const error = await modelCallError(modelFor(server).doGenerate(request));
    assert.ok(error.message.length < 600, `message is ${error.message.length} chars`);
  });

  it("aborts a slow response promptly with the signal's reason, without retrying", async (t) => {
    const server = await startServer(t, after(5_000, ok));
    const model = modelFor(server);
    const controller = new AbortController();
    const pending = model.doGenerate({ ...request, signal: controller.signal });
    await server.received(1);
    const started = performance.now();
    controller.abort();
    const error = await rejection(pending);
    assert.ok(performance.now() - started < 500, "the abort was not prompt");
    assert.ok(error instanceof Error);
    assert.equal(error.name, "AbortError");
    assert.equal(error, controller.signal.reason);
    assert.equal(server.requests.length, 1);
  });

  it("aborts a backoff sleep on the real timer", async (t) => {
    const server = await startServer(t, replyText(503, "busy", { "retry-after": "30" }));
    const model = createHttpModel({ baseUrl: server.baseUrl, model: MODEL, env: {} });
    const controller = new AbortController();
    const reason = new Error("caller gave up");
    const pending = model.doGenerate({ ...request, signal: controller.signal });
    await server.received(1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const started = performance.now();
    controller.abort(reason);
    assert.equal(await rejection(pending), reason);
    assert.ok(performance.now() - started < 500, "the abort was not prompt");
    assert.equal(server.requests.length, 1);
  });

  it("rejects at once, sending nothing, when the signal is already aborted", async (t) => {
    const server = await startServer(t, ok);
    const reason = new Error("already gone");
    const error = await rejection(modelFor(server).doGenerate({ ...request, signal: AbortSignal.abort(reason) }));
    assert.equal(error, reason);
    assert.equal(server.requests.length, 0);
  });

  it("keeps at most `concurrency` requests in flight and queues the rest", async (t) => {
    const server = await startServer(t, after(40, ok));
    const model = modelFor(server, { concurrency: 2 });
    assert.equal(model.maxConcurrency, 2);
    const results = await Promise.all(Array.from({ length: 6 }, () => model.doGenerate(request)));
    assert.equal(results.length, 6);
    assert.ok(results.every((r) => r.text === "42"));
    assert.equal(server.requests.length, 6);
    assert.equal(server.maxInFlight(), 2);
  });

  it("rejects a queued request at once when its signal aborts, and never sends it", async (t) => {
    const server = await startServer(t, after(100, ok));
    const model = modelFor(server, { concurrency: 1 });
    const first = model.doGenerate(request);
    const controller = new AbortController();
    const queued = model.doGenerate({ ...request, signal: controller.signal });
    await server.received(1);
    controller.abort();
    assert.equal(((await rejection(queued)) as Error).name, "AbortError");
    assert.equal((await first).text, "42");
    assert.equal(server.requests.length, 1);
  });

  it("keeps the key out of modelId, JSON and inspection", async (t) => {
    const server = await startServer(t, ok);
    const model = modelFor(server);
    await model.doGenerate(request);
    const json = JSON.stringify(model);
    assert.ok(!json.includes(KEY));
    assert.ok(!model.modelId.includes(KEY));
    assert.ok(!inspect(model, { depth: 10, showHidden: true }).includes(KEY));
    assert.deepEqual(JSON.parse(json), {
      specificationVersion: "v1",
      modelId: `http:${server.baseUrl}#${MODEL}`,
      baseUrl: server.baseUrl,
      model: MODEL,
      apiKeyEnv: "OPENAI_API_KEY",
      timeoutMs: 120_000,
      maxConcurrency: 4,
      retry: { maxRetries: 3, initialDelayMs: 1, maxDelayMs: 5 },
    });
  });

  it("closes idempotently and refuses requests afterwards", async (t) => {
    const server = await startServer(t, ok);
    const model = modelFor(server);
    await model.close();
    await model.close();
    assert.ok((await rejection(model.doGenerate(request))) instanceof UsageError);
    assert.equal(server.requests.length, 0);
  });

  it("rejects bad options with a UsageError", () => {
    const base = { baseUrl: "http://127.0.0.1:1/v1", model: MODEL };
    assert.throws(() => createHttpModel({ ...base, baseUrl: "not a url" }), UsageError);
    assert.throws(() => createHttpModel({ ...base, baseUrl: "ftp://127.0.0.1/v1" }), UsageError);
    assert.throws(() => createHttpModel({ ...base, baseUrl: `http://user:${KEY}@127.0.0.1/v1` }), (error: unknown) => {
      assert.ok(error instanceof UsageError);
      assert.ok(!error.message.includes(KEY));
      return true;
    });
    assert.throws(() => createHttpModel({ ...base, model: " " }), UsageError);
    assert.throws(() => createHttpModel({ ...base, concurrency: 0 }), UsageError);
    assert.throws(() => createHttpModel({ ...base, timeoutMs: 0 }), UsageError);
    assert.throws(() => createHttpModel({ ...base, retry: { ...defaultRetryPolicy, maxRetries: -1 } }), UsageError);
  });

  it("ships a sensible default retry policy", () => {
    assert.deepEqual({ ...defaultRetryPolicy }, { maxRetries: 4, initialDelayMs: 500, maxDelayMs: 20_000 });
  });
});

describe("createHttpModel: tool turns, tool choice, strict and the token limit on the wire", () => {
  it("sends tool calls and results as tool_calls and tool messages, a forced tool as tool_choice, strict on the tool", async (t) => {
    const server = await startServer(t, replyJson(completion("ok")));
    const model = modelFor(server);
    await model.doGenerate({
      maxTokens: 9,
      messages: [
        { role: "user", content: "Weather in Oslo?" },
        { role: "assistant", content: "Looking.", toolCalls: [{ id: "call_a", name: "get_weather", arguments: '{"city":"Oslo"}' }] },
        { role: "tool", toolCallId: "call_a", content: "4 C", isError: true },
      ],
      tools: [{ name: "get_weather", parameters: { type: "object" }, strict: true }],
      toolChoice: { type: "tool", name: "get_weather" },
    });
    const body = server.requests[0]?.body as Record<string, unknown>;
    assert.deepEqual(body.messages, [
      { role: "user", content: "Weather in Oslo?" },
      { role: "assistant", content: "Looking.", tool_calls: [{ id: "call_a", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } }] },
      { role: "tool", tool_call_id: "call_a", content: "4 C" },
    ]);
    assert.deepEqual(body.tools, [{ type: "function", function: { name: "get_weather", parameters: { type: "object" }, strict: true } }]);
    assert.deepEqual(body.tool_choice, { type: "function", function: { name: "get_weather" } });
    assert.equal(body.max_tokens, 9);
  });

  it("sends tool_choice required for any tool, none without tools, and no max_tokens where none is asked", async (t) => {
    const server = await startServer(t, replyJson(completion("ok")));
    const model = modelFor(server);
    await model.doGenerate({ messages: [{ role: "user", content: "hi" }], tools: [{ name: "f" }], toolChoice: { type: "required" } });
    await model.doGenerate({ messages: [{ role: "user", content: "hi" }], toolChoice: { type: "required" } });
    assert.equal(server.requests[0]?.body.tool_choice, "required");
    assert.deepEqual([server.requests[1]?.body.tool_choice, server.requests[1]?.body.tools], [undefined, undefined]);
    assert.ok(server.requests.every((r) => !Object.hasOwn(r.body, "max_tokens")));
  });
});
