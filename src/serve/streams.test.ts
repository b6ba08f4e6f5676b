/**
 * What every dialect's door shares: a reflected stream kept alive through proxies while the loop settles, a client
 * that goes away cancelling the episode and its upstream calls, Anthropic's `x-api-key` as the gateway's key (never
 * forwarded), and the record naming the dialect a request came in on. Real HTTP servers on both sides.
 */
import assert from "node:assert/strict";
import http from "node:http";
import { describe, it, type TestContext } from "node:test";
import { APIError } from "openai";
import type { Episode } from "../loops/types.js";
import { createHttpModel } from "../models/http.js";
import type { RequestOutcome } from "./observer.js";
import { client, reply, startTestGateway, startUpstream, UPSTREAM_MODEL, type Behaviour } from "./serve-harness.js";
import type { GatewayLimits } from "./server.js";

const ask = { model: UPSTREAM_MODEL, messages: [{ role: "user" as const, content: "What is six times seven? Digits only." }] };

/** `behaviour`, answered after `ms`. */
function after(ms: number, behaviour: Behaviour): Behaviour {
  return (res, seen, index, upstream) => {
    const timer = setTimeout(() => behaviour(res, seen, index, upstream), ms);
    res.once("close", () => clearTimeout(timer));
  };
}

async function setup(t: TestContext, script: Behaviour | Behaviour[], limits: Partial<GatewayLimits> = {}, apiKey?: string) {
  const upstream = await startUpstream(t, script);
  const outcomes: RequestOutcome[] = [];
  const recorded: Episode[] = [];
  const gateway = await startTestGateway(t, {
    upstream: createHttpModel({ baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, retry: { maxRetries: 0, initialDelayMs: 0, maxDelayMs: 0 } }),
    upstreamHttp: { baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, apiKeyEnv: "REFLECT_TEST_UNSET_KEY" },
    observer: { request: (o) => outcomes.push(o) },
    recorder: { dir: "(memory)", append: async (e) => void recorded.push(e), close: async () => {} },
    limits,
    ...(apiKey === undefined ? {} : { apiKey }),
  });
  return { upstream, gateway, outcomes, recorded };
}

/** A streamed POST read raw, chunk by chunk, with the time each chunk arrived. */
function streamRaw(url: string, body: unknown): Promise<{ status: number; chunks: Array<{ at: number; text: string }> }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const request = http.request(url, { method: "POST", headers: { "content-type": "application/json", authorization: "Bearer unused" } }, (res) => {
      const chunks: Array<{ at: number; text: string }> = [];
      res.setEncoding("utf8").on("data", (text: string) => chunks.push({ at: performance.now() - started, text }));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, chunks }));
    });
    request.on("error", reject);
    request.end(JSON.stringify(body));
  });
}

describe("a reflected stream that takes a while", () => {
  it("sends keep-alive comments until it settles, then the whole answer, which the official client reads as usual", async (t) => {
    const slow = after(300, reply("42"));
    const { gateway } = await setup(t, [slow], { streamKeepAliveMs: 60 });
    const raw = await streamRaw(`${gateway.url}/v1/chat/completions`, { ...ask, stream: true, reflect: { regex: "^\\d+$" } });
    assert.equal(raw.status, 200);
    const text = raw.chunks.map((c) => c.text).join("");
    const beats = text.split(": keep-alive\n\n").length - 1;
    assert.ok(beats >= 3, `keep-alive sent ${beats} times in ${text.slice(0, 200)}`);
    // The first bytes (a keep-alive) come well before the answer (the upstream answers after 300 ms).
    const answeredAt = raw.chunks.find((c) => c.text.includes('"content":"42"'))?.at ?? 0;
    assert.ok((raw.chunks[0]?.at ?? Infinity) < answeredAt - 150, `the first keep-alive came at ${raw.chunks[0]?.at} ms, the answer at ${answeredAt} ms`);
    assert.match(text, /"content":"42"/u);
    assert.ok(text.endsWith("data: [DONE]\n\n"));

    const { gateway: again } = await setup(t, [after(300, reply("42"))], { streamKeepAliveMs: 60 });
    const stream = await client(again.url).chat.completions.create({ ...ask, stream: true, reflect: { regex: "^\\d+$" } } as never);
    let content = "";
    for await (const chunk of stream as unknown as AsyncIterable<{ choices: Array<{ delta: { content?: string } }> }>) content += chunk.choices[0]?.delta.content ?? "";
    assert.equal(content, "42");
  });

  it("answers as usual, with its status, when it settles before the first keep-alive", async (t) => {
    const { gateway } = await setup(t, [reply("maybe"), reply("I must answer in digits."), reply("still words")], { streamKeepAliveMs: 5_000 });
    const raw = await streamRaw(`${gateway.url}/v1/chat/completions`, { ...ask, stream: true, reflect: { regex: "^\\d+$", on_failure: "error" } });
    assert.equal(raw.status, 422);
    assert.doesNotMatch(raw.chunks.map((c) => c.text).join(""), /keep-alive/u);
  });

  it("sends a failure after the keep-alive began as the dialect's error event, which the official client raises", async (t) => {
    const { gateway, outcomes } = await setup(t, [after(200, reply("maybe")), reply("I must answer in digits."), reply("still words")], { streamKeepAliveMs: 50 });
    const raw = await streamRaw(`${gateway.url}/v1/chat/completions`, { ...ask, stream: true, reflect: { regex: "^\\d+$", on_failure: "error" } });
    assert.equal(raw.status, 200);
    const text = raw.chunks.map((c) => c.text).join("");
    assert.match(text, /^: keep-alive\n\n/u);
    const last = text.trim().split("\n\n").at(-1) ?? "";
    const event = JSON.parse(last.replace(/^data: /u, "")) as { error: { code: string; message: string }; reflect: { passed: boolean } };
    assert.equal(event.error.code, "checks_failed");
    assert.equal(event.reflect.passed, false);
    assert.equal(outcomes.at(-1)?.status, 422, "the observer hears the answer's own status");

    const { gateway: again } = await setup(t, [after(200, reply("maybe")), reply("I must answer in digits."), reply("still words")], { streamKeepAliveMs: 50 });
    const stream = await client(again.url).chat.completions.create({ ...ask, stream: true, reflect: { regex: "^\\d+$", on_failure: "error" } } as never);
    await assert.rejects(async () => {
      for await (const _ of stream as unknown as AsyncIterable<unknown>) void _;
    }, (error: unknown) => error instanceof APIError && /failed its checks/u.test(error.message));
  });
});

describe("a client that goes away", () => {
  it("cancels the reflected episode and its upstream call, streamed (kept alive) or not", async (t) => {
    for (const stream of [false, true]) {
      const { upstream, gateway, outcomes, recorded } = await setup(t, [() => {}], { streamKeepAliveMs: 50 });
      const controller = new AbortController();
      const asked = fetch(`${gateway.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ ...ask, stream, reflect: { regex: "^\\d+$" } }), signal: controller.signal });
      // Once the upstream has the call (and, streamed, the keep-alive has begun), the client leaves.
      while (upstream.requests.length === 0) await new Promise((r) => setTimeout(r, 10));
      if (stream) {
        const response = await asked;
        const reader = (response.body as ReadableStream<Uint8Array>).getReader();
        assert.match(new TextDecoder().decode((await reader.read()).value), /keep-alive/u);
      }
      controller.abort();
      await asked.then((r) => r.body?.cancel()).catch(() => {});
      // The upstream's request is closed by the gateway, not answered: the episode was cancelled.
      await upstream.closed(0);
      assert.equal(upstream.requests[0]?.closedEarly, true, `stream: ${stream}`);
      while (outcomes.length === 0) await new Promise((r) => setTimeout(r, 10));
      assert.equal(outcomes[0]?.status, 499, `stream: ${stream}`);
      assert.equal(upstream.requests.length, 1, "no retry after the client left");
      assert.equal(recorded.length, 0, "a cancelled request is not acknowledged in the record");
    }
  });
});

describe("the gateway's key", () => {
  it("is taken from x-api-key as Anthropic's clients send it, and never forwarded upstream", async (t) => {
    const echo: Behaviour = (res, seen) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ id: "x", object: "chat.completion", created: 0, model: UPSTREAM_MODEL, choices: [{ index: 0, message: { role: "assistant", content: JSON.stringify(seen.headers) }, finish_reason: "stop" }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }));
    };
    const { gateway } = await setup(t, echo, {}, "gateway-key-1");
    const refused = await fetch(`${gateway.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json", "x-api-key": "wrong" }, body: JSON.stringify(ask) });
    assert.equal(refused.status, 401);
    const answered = await fetch(`${gateway.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json", "x-api-key": "gateway-key-1" }, body: JSON.stringify(ask) });
    assert.equal(answered.status, 200);
    const seen = JSON.parse(((await answered.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]?.message.content ?? "{}") as Record<string, string>;
    assert.equal(seen["x-api-key"], undefined);
    assert.equal(seen.authorization, undefined);
  });
});

describe("the record", () => {
  it("names the dialect a reflected request came in on", async (t) => {
    const { gateway, recorded } = await setup(t, reply("42"));
    await client(gateway.url).chat.completions.create({ ...ask, reflect: { regex: "^\\d+$" } } as never);
    assert.equal((recorded[0]?.record as { dialect?: string } | undefined)?.dialect, "chat");
  });
});

describe("an upstream that fails a reflected (or translated) request before any attempt", () => {
  it("still rate-limiting after the model's own retries: 429 with Retry-After; a 500: 502 — in the dialect's shape", async (t) => {
    const limited: Behaviour = (res) => {
      res.writeHead(429, { "content-type": "application/json", "retry-after": "0" });
      res.end(JSON.stringify({ error: { message: "slow down", type: "rate_limit_error" } }));
    };
    const { gateway, outcomes } = await setup(t, limited);
    const answer = await fetch(`${gateway.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ ...ask, reflect: { regex: "^\\d+$" } }) });
    assert.equal(answer.status, 429);
    assert.equal(answer.headers.get("retry-after"), "1");
    const body = (await answer.json()) as { error: { type: string; code: string; message: string } };
    assert.deepEqual([body.error.type, body.error.code], ["rate_limit_error", "upstream_rate_limited"]);
    assert.equal(outcomes.at(-1)?.upstreamFailure, "status");

    const broken: Behaviour = (res) => {
      res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: "boom" } }));
    };
    const { gateway: other } = await setup(t, broken);
    const failed = await fetch(`${other.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ ...ask, reflect: { regex: "^\\d+$" } }) });
    assert.equal(failed.status, 502);
    assert.equal(((await failed.json()) as { error: { code: string } }).error.code, "upstream_error");
  });
});
