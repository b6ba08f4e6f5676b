import assert from "node:assert/strict";
import { describe, it, type TestContext } from "node:test";
import { brotliCompressSync, gzipSync } from "node:zlib";
import { APIError } from "openai";
import { createHttpModel } from "../models/http.js";
import { StreamRedactor } from "./pass-through.js";
import { client, completion, echoHeaders, hang, invalidJson, startTestGateway, startUpstream, status, streamReply, UPSTREAM_MODEL, type Behaviour, type FakeUpstream } from "./serve-harness.js";
import type { RunningGateway } from "./server.js";
import type { RequestOutcome } from "./observer.js";

const KEY_ENV = "REFLECT_TEST_UPSTREAM_KEY";
const KEY = "sk-planted-DO-NOT-LEAK-51c7e2a9";
const BODY = JSON.stringify({ model: UPSTREAM_MODEL, messages: [{ role: "user", content: "Say hello." }], max_tokens: 16 });

/** A gateway in front of `script`'s upstream, with the upstream key planted in the environment. */
async function setup(t: TestContext, script: Behaviour | Behaviour[], limits: { requestTimeoutMs?: number } = {}): Promise<{ upstream: FakeUpstream; gateway: RunningGateway; outcomes: RequestOutcome[] }> {
  process.env[KEY_ENV] = KEY;
  t.after(() => delete process.env[KEY_ENV]);
  const upstream = await startUpstream(t, script);
  const outcomes: RequestOutcome[] = [];
  const gateway = await startTestGateway(t, {
    upstream: createHttpModel({ baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, apiKeyEnv: KEY_ENV }),
    upstreamHttp: { baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, apiKeyEnv: KEY_ENV },
    observer: { request: (o) => outcomes.push(o) },
    limits,
  });
  return { upstream, gateway, outcomes };
}

function post(base: string, body: string | Uint8Array = BODY, headers: Record<string, string> = {}, signal?: AbortSignal): Promise<Response> {
  return fetch(`${base}/chat/completions`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body, ...(signal === undefined ? {} : { signal }) });
}

/** An SSE stream of chat completion chunks, one event per write: `deltas` (or raw events), a finish, `data: [DONE]`. */
function chunks(deltas: Array<Record<string, unknown> | string>, options: { finish?: string | null; done?: boolean } = {}): Behaviour {
  const event = (delta: Record<string, unknown>, finish: string | null): string =>
    `data: ${JSON.stringify({ id: "chatcmpl-r", object: "chat.completion.chunk", created: 1_700_000_000, model: UPSTREAM_MODEL, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })}\n\n`;
  const events = deltas.map((d) => (typeof d === "string" ? d : event(d, null)));
  if (options.finish !== null) events.push(event({}, options.finish ?? "stop"));
  if (options.done !== false) events.push("data: [DONE]\n\n");
  return (res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    let i = 0;
    const next = (): void => {
      if (res.destroyed) return;
      if (i === events.length) return void res.end();
      res.write(events[i++]);
      setTimeout(next, 5);
    };
    next();
  };
}

/** What the official client makes of a streamed reply: the text and each tool call's arguments, concatenated. */
async function streamed(gateway: RunningGateway): Promise<{ content: string; calls: string[] }> {
  const stream = await client(gateway.url).chat.completions.create({ model: UPSTREAM_MODEL, messages: [{ role: "user", content: "x" }], stream: true });
  let content = "";
  const calls: string[] = [];
  for await (const chunk of stream) {
    for (const choice of chunk.choices) {
      content += choice.delta.content ?? "";
      for (const call of choice.delta.tool_calls ?? []) calls[call.index] = (calls[call.index] ?? "") + (call.function?.arguments ?? "");
    }
  }
  return { content, calls };
}

/** The relayed body's text, for a check that the key is in none of its bytes either. */
async function relayedText(gateway: RunningGateway): Promise<string> {
  return (await post(`${gateway.url}/v1`)).text();
}

/** The key with its first character written as a JSON `\u` escape, as JSON.parse reads it back. */
const escapedKey = `\\u0073${KEY.slice(1)}`;

/** Resolves once the observer has heard of `n` requests (a streamed pass-through is told when its body ends). */
async function told(outcomes: RequestOutcome[], n: number): Promise<void> {
  for (let i = 0; i < 200 && outcomes.length < n; i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal(outcomes.length, n);
}

describe("pass-through to an HTTP upstream", () => {
  it("relays a completion byte for byte, with the upstream key in place of the client's", async (t) => {
    const { upstream, gateway, outcomes } = await setup(t, status(200, completion("Hello!"), { "x-request-id": "req-7" }));
    const direct = await (await post(upstream.baseUrl)).text();
    const response = await post(`${gateway.url}/v1`, BODY, { authorization: "Bearer client-key", "openai-organization": "org-1" });
    assert.equal(response.status, 200);
    assert.equal(await response.text(), direct);
    assert.equal(response.headers.get("x-request-id"), "req-7");
    // The upstream got the client's bytes unchanged, the upstream key, and the client's other headers.
    assert.deepEqual(upstream.requests[1]?.raw, Buffer.from(BODY));
    assert.equal(upstream.requests[1]?.headers.authorization, `Bearer ${KEY}`);
    assert.equal(upstream.requests[1]?.headers["openai-organization"], "org-1");
    // The official client reads it as the upstream's own completion.
    const viaClient = await client(gateway.url).chat.completions.create({ model: UPSTREAM_MODEL, messages: [{ role: "user", content: "Say hello." }] });
    assert.deepEqual(viaClient, completion("Hello!"));
    await told(outcomes, 2);
    assert.deepEqual(outcomes.map((o) => [o.kind, o.status, o.stream]), [["pass-through", 200, false], ["pass-through", 200, false]]);
  });

  it("pipes an SSE stream chunk by chunk, byte-identical to a direct call, when no upstream key is set", async (t) => {
    const pieces = ["Hel", "lo", ", ", "wor", "ld"];
    const { upstream, gateway, outcomes } = await setup(t, streamReply(pieces, { pauseMs: 80 }));
    // Without a key there is nothing to blank, and the relay leaves the bytes alone.
    delete process.env[KEY_ENV];
    const streamBody = JSON.stringify({ model: UPSTREAM_MODEL, messages: [{ role: "user", content: "hi" }], stream: true });
    const direct = await (await post(upstream.baseUrl, streamBody)).text();
    const relayed = await post(`${gateway.url}/v1`, streamBody);
    assert.equal(relayed.headers.get("content-type"), "text/event-stream");
    assert.equal(await relayed.text(), direct);

    // Chunks reach the client as the upstream writes them, not at the end.
    const stream = await client(gateway.url).chat.completions.create({ model: UPSTREAM_MODEL, messages: [{ role: "user", content: "hi" }], stream: true });
    const arrivals: number[] = [];
    let text = "";
    for await (const chunk of stream) {
      arrivals.push(performance.now());
      text += chunk.choices[0]?.delta.content ?? "";
    }
    assert.equal(text, pieces.join(""));
    assert.ok((arrivals.at(-1) as number) - (arrivals[0] as number) > 4 * 80 * 0.6, `chunks arrived over ${(arrivals.at(-1) as number) - (arrivals[0] as number)} ms`);
    await told(outcomes, 2);
    assert.ok(outcomes.every((o) => o.kind === "pass-through" && o.status === 200));
  });

  it("relays the upstream's 429 with Retry-After and its 500 as sent (a transparent proxy)", async (t) => {
    const limited = { error: { message: "slow down", type: "requests", param: null, code: "rate_limit_exceeded" } };
    const { gateway, outcomes } = await setup(t, [status(429, limited, { "retry-after": "7" }), status(500, { error: { message: "boom", type: "server_error" } })]);
    const openai = client(gateway.url);
    const first = await openai.chat.completions.create({ model: UPSTREAM_MODEL, messages: [{ role: "user", content: "x" }] }).then(() => assert.fail("expected 429"), (e: unknown) => e);
    assert.ok(first instanceof APIError);
    assert.equal(first.status, 429);
    assert.equal(first.headers?.get("retry-after"), "7");
    assert.equal(first.message, "429 slow down");
    const second = await post(`${gateway.url}/v1`);
    assert.equal(second.status, 500);
    assert.deepEqual(await second.json(), { error: { message: "boom", type: "server_error" } });
    await told(outcomes, 2);
    assert.deepEqual(outcomes.map((o) => [o.status, o.upstreamFailure]), [[429, "status"], [500, "status"]]);
  });

  it("relays invalid JSON and a huge reply unchanged", async (t) => {
    const huge = completion("x".repeat(6 * 1024 * 1024));
    const { upstream, gateway } = await setup(t, [invalidJson, status(200, huge)]);
    const bad = await post(`${gateway.url}/v1`);
    assert.equal(bad.status, 200);
    assert.equal(await bad.text(), '{"choices": [ this is not json');
    const big = await post(`${gateway.url}/v1`);
    assert.equal(await big.text(), JSON.stringify(huge));
    assert.equal(upstream.requests.length, 2);
  });

  it("answers 502 when the upstream cannot be reached and 504 when it does not answer in time", async (t) => {
    const { gateway, outcomes } = await setup(t, hang, { requestTimeoutMs: 300 });
    const timedOut = await post(`${gateway.url}/v1`);
    assert.equal(timedOut.status, 504);
    assert.deepEqual(await timedOut.json(), { error: { message: "the upstream did not answer within 300 ms", type: "server_error", param: null, code: "upstream_timeout" } });

    const gone = await startTestGateway(t, {
      upstream: createHttpModel({ baseUrl: "http://127.0.0.1:9/v1", model: "m" }),
      upstreamHttp: { baseUrl: "http://127.0.0.1:9/v1", model: "m", apiKeyEnv: KEY_ENV },
      observer: { request: (o) => outcomes.push(o) },
    });
    const unreachable = await client(gone.url).chat.completions.create({ model: "m", messages: [{ role: "user", content: "x" }] }).then(() => assert.fail("expected 502"), (e: unknown) => e);
    assert.ok(unreachable instanceof APIError);
    assert.equal(unreachable.status, 502);
    assert.equal((unreachable.error as { code?: string }).code, "upstream_unreachable");
    await told(outcomes, 2);
    assert.deepEqual(outcomes.map((o) => [o.status, o.upstreamFailure]), [[504, "timeout"], [502, "network"]]);
  });

  it("with a key set, streams the text as it comes, less the hold-back window", async (t) => {
    const pieces = ["a".repeat(40), "b".repeat(40), "c".repeat(40), "d".repeat(40), "e".repeat(40)];
    const { gateway } = await setup(t, streamReply(pieces, { pauseMs: 80 }));
    const stream = await client(gateway.url).chat.completions.create({ model: UPSTREAM_MODEL, messages: [{ role: "user", content: "hi" }], stream: true });
    const arrivals: Array<{ at: number; length: number }> = [];
    let text = "";
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta.content ?? "";
      arrivals.push({ at: performance.now(), length: delta.length });
      text += delta;
    }
    assert.equal(text, pieces.join(""));
    // The key's 31 characters round up to a window of 32: each 40-character delta goes out whole, as the upstream wrote
    // it, once the next one's 40 characters hold the window (the last at the finish).
    assert.deepEqual(arrivals.slice(0, 5).map((a) => a.length), [40, 40, 40, 40, 40]);
    assert.ok((arrivals[4]?.at as number) - (arrivals[0]?.at as number) > 4 * 80 * 0.6, "the deltas arrived as the upstream wrote them");
  });

  it("sends a stream's status and headers at once when its first events are held back, and after a wait when no body comes", async (t) => {
    // The first event's text is held (a window of 32 holds it all); the upstream then waits before the rest.
    const held: Behaviour = (res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(`data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: UPSTREAM_MODEL, choices: [{ index: 0, delta: { content: "held" }, finish_reason: null }] })}\n\n`);
      setTimeout(() => res.end("data: [DONE]\n\n"), 600);
    };
    // Headers, then silence: no body byte for 600 ms.
    const silent: Behaviour = (res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.flushHeaders();
      setTimeout(() => res.end("data: [DONE]\n\n"), 600);
    };
    const { gateway } = await setup(t, [held, silent]);
    for (const [name, most] of [["held", 300], ["silent", 400]] as const) {
      const started = performance.now();
      const response = await post(`${gateway.url}/v1`, JSON.stringify({ model: UPSTREAM_MODEL, messages: [{ role: "user", content: "x" }], stream: true }));
      const headersAt = performance.now() - started;
      assert.equal(response.status, 200, name);
      assert.ok(headersAt < most, `${name}: headers after ${headersAt.toFixed(0)} ms, before the upstream's body ended`);
      const text = await response.text();
      assert.ok(performance.now() - started >= 550, `${name}: the body ended with the upstream's`);
      if (name === "held") assert.match(text, /"held"/u);
    }
  });

  it("cuts the client's stream where the upstream's was cut", async (t) => {
    const { gateway, outcomes } = await setup(t, streamReply(["one ", "two ", "three"], { cutAfter: 2 }));
    const stream = await client(gateway.url).chat.completions.create({ model: UPSTREAM_MODEL, messages: [{ role: "user", content: "count" }], stream: true });
    let text = "";
    const ended = await (async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    })().then(
      () => "finished",
      (e: unknown) => (e as Error).name,
    );
    assert.notEqual(ended, "finished", "a cut stream must not look complete");
    // What was held back when the upstream broke off never reaches the client: the reply was not whole.
    assert.equal(text, "");
    await told(outcomes, 1);
    assert.equal(outcomes[0]?.upstreamFailure, "network");
  });

  it("cuts a stream whose upstream goes quiet past the timeout, and tells the observer of a timeout", async (t) => {
    const quiet: Behaviour = (res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write('data: {"choices":[{"index":0,"delta":{"content":"one "}}]}\n\n');
    };
    const { gateway, outcomes } = await setup(t, quiet, { requestTimeoutMs: 300 });
    const response = await post(`${gateway.url}/v1`);
    assert.equal(response.status, 200);
    const ended = await response.text().then(
      () => "finished",
      (e: unknown) => (e as Error).name,
    );
    assert.notEqual(ended, "finished", "a cut stream must not look complete");
    await told(outcomes, 1);
    assert.deepEqual([outcomes[0]?.status, outcomes[0]?.upstreamFailure], [200, "timeout"]);
  });

  it("decodes a compressed reply, as a fetch would, and blanks the key in it", async (t) => {
    const gzipped: Behaviour = (res) => {
      res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" });
      res.end(gzipSync(JSON.stringify(completion(`the key is ${KEY}`))));
    };
    const { gateway } = await setup(t, gzipped);
    const response = await post(`${gateway.url}/v1`);
    assert.equal(response.headers.get("content-encoding"), null);
    assert.deepEqual(await response.json(), completion("the key is [redacted]"));
  });

  it("blanks a key split across two SSE events, as the client concatenates them, keeping the text around it", async (t) => {
    const { gateway } = await setup(t, chunks([{ role: "assistant", content: "" }, { content: `before ${KEY.slice(0, 12)}` }, { content: `${KEY.slice(12)} after` }]));
    assert.deepEqual(await streamed(gateway), { content: "before [redacted] after", calls: [] });
    assert.ok(!(await relayedText(gateway)).includes(KEY));
  });

  it("blanks a key split across three SSE events, in the text and in a tool call's arguments", async (t) => {
    const call = (args: string, first = false) => ({ tool_calls: [{ index: 0, ...(first ? { id: "call_1", type: "function" } : {}), function: { ...(first ? { name: "lookup" } : {}), arguments: args } }] });
    const { gateway } = await setup(
      t,
      chunks([{ content: `a ${KEY.slice(0, 5)}` }, { content: KEY.slice(5, 20) }, { content: `${KEY.slice(20)} b` }, call(`{"key":"${KEY.slice(0, 3)}`, true), call(KEY.slice(3, 15)), call(`${KEY.slice(15)}"}`)], { finish: "tool_calls" }),
    );
    assert.deepEqual(await streamed(gateway), { content: "a [redacted] b", calls: ['{"key":"[redacted]"}'] });
    assert.ok(!(await relayedText(gateway)).includes(KEY));
  });

  it("blanks a key escaped as \\u in a JSON reply", async (t) => {
    const escaped: Behaviour = (res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(completion(`before ${KEY} after`)).replace(KEY, escapedKey));
    };
    const { gateway } = await setup(t, escaped);
    const reply = await client(gateway.url).chat.completions.create({ model: UPSTREAM_MODEL, messages: [{ role: "user", content: "x" }] });
    assert.equal(reply.choices[0]?.message.content, "before [redacted] after");
    assert.deepEqual(reply, completion("before [redacted] after"));
  });

  it("blanks a key escaped as \\u in an SSE event", async (t) => {
    const event = `data: {"id":"chatcmpl-r","object":"chat.completion.chunk","created":1,"model":"${UPSTREAM_MODEL}","choices":[{"index":0,"delta":{"content":"before ${escapedKey} after"},"finish_reason":null}]}\n\n`;
    const { gateway } = await setup(t, chunks([{ role: "assistant", content: "" }, event]));
    assert.deepEqual(await streamed(gateway), { content: "before [redacted] after", calls: [] });
  });

  it("undoes a gzip inside a gzip, and blanks the key in it", async (t) => {
    const twice: Behaviour = (res) => {
      res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip, gzip" });
      res.end(gzipSync(gzipSync(JSON.stringify(completion(`before ${KEY} after`)))));
    };
    const { gateway } = await setup(t, twice);
    const response = await post(`${gateway.url}/v1`);
    assert.equal(response.headers.get("content-encoding"), null);
    assert.deepEqual(await response.json(), completion("before [redacted] after"));
  });

  it("undoes br inside gzip, and blanks the key in it", async (t) => {
    const stacked: Behaviour = (res) => {
      res.writeHead(200, { "content-type": "application/json", "content-encoding": "br, gzip" });
      res.end(gzipSync(brotliCompressSync(JSON.stringify(completion(`before ${KEY} after`)))));
    };
    const { gateway } = await setup(t, stacked);
    const reply = await client(gateway.url).chat.completions.create({ model: UPSTREAM_MODEL, messages: [{ role: "user", content: "x" }] });
    assert.deepEqual(reply, completion("before [redacted] after"));
  });

  it("refuses a content-encoding it cannot undo with a 502 before any of the body, and closes the upstream connection", async (t) => {
    const encoded =
      (encoding: string): Behaviour =>
      (res) => {
        res.writeHead(200, { "content-type": "application/json", "content-encoding": encoding });
        res.write(`(${encoding} bytes that hold ${KEY})`);
      };
    const { upstream, gateway, outcomes } = await setup(t, [encoded("zstd"), encoded("gzip, gzip, gzip, gzip")]);
    const refused = await client(gateway.url).chat.completions.create({ model: UPSTREAM_MODEL, messages: [{ role: "user", content: "x" }] }).then(() => assert.fail("expected 502"), (e: unknown) => e);
    assert.ok(refused instanceof APIError);
    assert.equal(refused.status, 502);
    assert.equal((refused.error as { code?: string }).code, "upstream_encoding");
    await upstream.closed(0);
    assert.equal(upstream.requests[0]?.closedEarly, true);
    const layered = await post(`${gateway.url}/v1`);
    assert.equal(layered.status, 502);
    assert.ok(!(await layered.text()).includes(KEY));
    await told(outcomes, 2);
    assert.deepEqual(outcomes.map((o) => [o.status, o.upstreamFailure]), [[502, "malformed"], [502, "malformed"]]);
  });

  it("replaces a header value that holds the key percent-encoded", async (t) => {
    const encoded = [...KEY].map((c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`).join("");
    const { gateway } = await setup(t, status(200, completion("ok"), { "x-echo-url": `https://upstream/?key=${encoded}`, "x-echo-bearer": `Bearer ${KEY}`, "x-request-id": "req-9" }));
    const response = await post(`${gateway.url}/v1`);
    assert.equal(response.headers.get("x-echo-url"), "[redacted]");
    assert.equal(response.headers.get("x-echo-bearer"), "Bearer [redacted]");
    assert.equal(response.headers.get("x-request-id"), "req-9");
    for (const [, value] of response.headers) assert.ok(!decodeURIComponent(value).includes(KEY), value);
  });

  it("does not forward the upstream's Server, Via and X-Powered-By headers", async (t) => {
    const { gateway } = await setup(t, status(200, completion("ok"), { server: "uvicorn", via: "1.1 internal-proxy", "x-powered-by": "vllm/0.9", "x-request-id": "req-3" }));
    const response = await post(`${gateway.url}/v1`);
    assert.deepEqual([response.headers.get("server"), response.headers.get("via"), response.headers.get("x-powered-by")], [null, null, null]);
    assert.equal(response.headers.get("x-request-id"), "req-3");
    assert.deepEqual(await response.json(), completion("ok"));
  });

  it("never loses streamed text that ends in a start of the key", async (t) => {
    const { gateway } = await setup(t, [
      chunks([{ content: "the prefix is sk-" }]),
      chunks([{ content: "the prefix is sk-" }, { content: "pla" }], { finish: null, done: false }),
      chunks([{ content: "tokens and skates" }, { content: " and s" }], { finish: null }),
    ]);
    assert.equal((await streamed(gateway)).content, "the prefix is sk-");
    assert.equal((await streamed(gateway)).content, "the prefix is sk-pla", "held to the body's end");
    assert.equal((await streamed(gateway)).content, "tokens and skates and s", "held to [DONE]");
  });

  it("aborts the upstream request when the client disconnects", async (t) => {
    const { upstream, gateway } = await setup(t, hang);
    const controller = new AbortController();
    const pending = post(`${gateway.url}/v1`, BODY, {}, controller.signal).catch((e: unknown) => e);
    await upstream.received(1);
    controller.abort();
    await pending;
    await upstream.closed(0);
    assert.equal(upstream.requests[0]?.closedEarly, true);
  });

  it("never shows the upstream key, even when the upstream echoes it (body, headers, split across chunks)", async (t) => {
    const split: Behaviour = (res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(`data: {"key":"${KEY.slice(0, 10)}`);
      setTimeout(() => res.end(`${KEY.slice(10)}"}\n\ndata: [DONE]\n\n`), 30);
    };
    const { upstream, gateway } = await setup(t, [echoHeaders, split]);
    const echoed = await post(`${gateway.url}/v1`);
    const text = await echoed.text();
    assert.ok(upstream.requests[0]?.headers.authorization?.includes(KEY), "the upstream did receive the key");
    assert.ok(!text.includes(KEY) && text.includes("[redacted]"), text);
    assert.equal(echoed.headers.get("x-echo-authorization"), "Bearer [redacted]");
    for (const [, value] of echoed.headers) assert.ok(!value.includes(KEY));
    const streamed = await (await post(`${gateway.url}/v1`, JSON.stringify({ model: UPSTREAM_MODEL, messages: [{ role: "user", content: "x" }], stream: true }))).text();
    assert.equal(streamed, 'data: {"key":"[redacted]"}\n\ndata: [DONE]\n\n');
  });

  it("needs the gateway key when one is set, and never forwards it", async (t) => {
    process.env[KEY_ENV] = KEY;
    t.after(() => delete process.env[KEY_ENV]);
    const upstream = await startUpstream(t, status(200, completion("ok")));
    const gateway = await startTestGateway(t, {
      upstream: createHttpModel({ baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL }),
      upstreamHttp: { baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, apiKeyEnv: KEY_ENV },
      apiKey: "gateway-secret",
    });
    const wrong = await client(gateway.url, "not-it").chat.completions.create({ model: UPSTREAM_MODEL, messages: [{ role: "user", content: "x" }] }).then(() => assert.fail("expected 401"), (e: unknown) => e);
    assert.ok(wrong instanceof APIError);
    assert.equal(wrong.status, 401);
    assert.equal((wrong.error as { type?: string }).type, "authentication_error");
    assert.equal((await post(`${gateway.url}/v1`)).status, 401, "no bearer at all");
    assert.equal((await fetch(`${gateway.url}/healthz`)).status, 200, "health checks need no key");
    const right = await client(gateway.url, "gateway-secret").chat.completions.create({ model: UPSTREAM_MODEL, messages: [{ role: "user", content: "x" }] });
    assert.equal(right.choices[0]?.message.content, "ok");
    assert.equal(upstream.requests.length, 1);
    assert.equal(upstream.requests[0]?.headers.authorization, `Bearer ${KEY}`);
  });
});

describe("StreamRedactor", () => {
  it("blanks a secret split at every possible point, holding back the same window whatever the bytes", () => {
    const secret = Buffer.from("sk-abcdef");
    const text = "before sk-abcdef middle sk-abc after sk-abcdef and a tail longer than the window";
    for (let cut = 0; cut <= text.length; cut++) {
      const redactor = new StreamRedactor(secret);
      const first = Buffer.from(redactor.push(Buffer.from(text.slice(0, cut))));
      const out = Buffer.concat([first, redactor.push(Buffer.from(text.slice(cut))), redactor.flush()]).toString();
      assert.equal(out, "before [redacted] middle sk-abc after [redacted] and a tail longer than the window", `cut at ${cut}`);
      // A 9-byte secret rounds up to a 32-byte window: what is sent depends on the length alone, unless a secret was whole.
      if (cut < 7) assert.equal(first.byteLength, Math.max(0, cut - 32), `cut at ${cut}`);
    }
    const near = (tail: string) => Buffer.from(new StreamRedactor(secret).push(Buffer.from(`${"x".repeat(40)}${tail}`))).byteLength;
    for (let n = 1; n < secret.length; n++) assert.equal(near(secret.subarray(0, n).toString()), near("q".repeat(n)), `a start of ${n} bytes`);
  });
});
