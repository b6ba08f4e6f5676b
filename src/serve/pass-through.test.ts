import assert from "node:assert/strict";
import { describe, it, type TestContext } from "node:test";
import { gzipSync } from "node:zlib";
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

  it("pipes an SSE stream chunk by chunk, byte-identical to a direct call", async (t) => {
    const pieces = ["Hel", "lo", ", ", "wor", "ld"];
    const { upstream, gateway, outcomes } = await setup(t, streamReply(pieces, { pauseMs: 80 }));
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
    assert.equal(text, "one two ");
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
  it("blanks a secret split at every possible point and holds back only a possible start of it", () => {
    const secret = Buffer.from("sk-abcdef");
    const text = "before sk-abcdef middle sk-abc after sk-abcdef";
    for (let cut = 0; cut <= text.length; cut++) {
      const redactor = new StreamRedactor(secret);
      const out = Buffer.concat([redactor.push(Buffer.from(text.slice(0, cut))), redactor.push(Buffer.from(text.slice(cut))), redactor.flush()]).toString();
      assert.equal(out, "before [redacted] middle sk-abc after [redacted]", `cut at ${cut}`);
    }
    const redactor = new StreamRedactor(secret);
    assert.equal(Buffer.from(redactor.push(Buffer.from("data: x\n\n"))).toString(), "data: x\n\n", "an event end is never held");
  });
});
