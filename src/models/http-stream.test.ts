import assert from "node:assert/strict";
import { once } from "node:events";
import http from "node:http";
import { describe, it, type TestContext } from "node:test";
import { listenOnLoopback } from "../cli/cli-harness.js";
import { ModelCallError } from "../errors.js";
import { createHttpModel, type HttpModelOptions } from "./http.js";
import type { StreamPart } from "./language-model.js";

const KEY = "sk-stream-DO-NOT-LEAK-41b9";

type Behaviour = (res: http.ServerResponse, index: number, body: Record<string, unknown>) => void;

interface Scripted {
  baseUrl: string;
  bodies: Array<Record<string, unknown>>;
  /** Resolves once request `index` is closed, with whether it closed before its reply ended. */
  closed(index: number): Promise<boolean>;
}

/** A real HTTP server on 127.0.0.1: request i gets `script[i]`, the last repeats. */
async function startServer(t: TestContext, script: Behaviour[]): Promise<Scripted> {
  const bodies: Array<Record<string, unknown>> = [];
  const closings: Array<Promise<boolean>> = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const index = bodies.push(JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>) - 1;
      closings[index] = once(res, "close").then(() => !res.writableFinished);
      (script[Math.min(index, script.length - 1)] as Behaviour)(res, index, bodies[index] as Record<string, unknown>);
    });
  });
  const port = await listenOnLoopback(t, server);
  return { baseUrl: `http://127.0.0.1:${port}/v1`, bodies, closed: (i) => closings[i] ?? Promise.reject(new Error(`no request ${i}`)) };
}

const chunk = (delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}): string =>
  `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`;
const usageChunk = (prompt: number, completion: number): string => `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", choices: [], usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion } })}\n\n`;

function sse(res: http.ServerResponse): void {
  res.writeHead(200, { "content-type": "text/event-stream" });
}

function model(baseUrl: string, extra: Partial<HttpModelOptions> = {}) {
  return createHttpModel({ baseUrl, model: "m", apiKeyEnv: "STREAM_TEST_KEY", env: { STREAM_TEST_KEY: KEY }, retry: { maxRetries: 2, initialDelayMs: 1, maxDelayMs: 5 }, sleep: async () => {}, ...extra });
}

async function collect(parts: AsyncIterable<StreamPart> | readonly StreamPart[]): Promise<StreamPart[]> {
  const out: StreamPart[] = [];
  for await (const part of parts) out.push(part);
  return out;
}

describe("the HTTP model's doStream", () => {
  it("yields text deltas as they come, then the finish reason and the usage from the last chunk", async (t) => {
    let release!: () => void;
    const later = new Promise<void>((resolve) => (release = resolve));
    const server = await startServer(t, [
      (res) => {
        sse(res);
        res.write(chunk({ role: "assistant", content: "" }));
        res.write(chunk({ content: "Hel" }));
        void later.then(() => {
          res.write(chunk({ content: "lo" }) + chunk({}, "stop") + usageChunk(7, 2) + "data: [DONE]\n\n");
          res.end();
        });
      },
    ]);
    const stream = model(server.baseUrl).doStream?.({ messages: [{ role: "user", content: "hi" }], maxTokens: 16 });
    assert.ok(stream !== undefined);
    const iterator = stream[Symbol.asyncIterator]();
    // The first delta arrives while the server still holds the rest.
    assert.deepEqual((await iterator.next()).value, { type: "text-delta", text: "Hel" });
    release();
    const rest: StreamPart[] = [];
    for (let next = await iterator.next(); next.done !== true; next = await iterator.next()) rest.push(next.value);
    assert.deepEqual(rest[0], { type: "text-delta", text: "lo" });
    const finish = rest[1];
    assert.equal(rest.length, 2);
    assert.ok(finish?.type === "finish");
    assert.equal(finish.finishReason, "stop");
    assert.equal(finish.usage.promptTokens, 7);
    assert.equal(finish.usage.completionTokens, 2);
    const body = server.bodies[0] as Record<string, unknown>;
    assert.equal(body.stream, true);
    assert.deepEqual(body.stream_options, { include_usage: true });
  });

  it("yields a tool call's pieces: the first with id and name, then its argument text", async (t) => {
    const server = await startServer(t, [
      (res) => {
        sse(res);
        res.write(chunk({ role: "assistant", tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "get_weather", arguments: "" } }] }));
        res.write(chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }));
        res.write(chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }));
        res.end(chunk({}, "tool_calls") + "data: [DONE]\n\n");
      },
    ]);
    const parts = await collect(model(server.baseUrl).doStream?.({ messages: [{ role: "user", content: "weather?" }] }) ?? []);
    assert.deepEqual(
      parts.filter((p) => p.type === "tool-call-delta"),
      [
        { type: "tool-call-delta", index: 0, id: "call_1", name: "get_weather", argumentsDelta: "" },
        { type: "tool-call-delta", index: 0, argumentsDelta: '{"city":' },
        { type: "tool-call-delta", index: 0, argumentsDelta: '"Paris"}' },
      ],
    );
    const finish = parts.at(-1);
    // Tool calls are told by the parts themselves; the finish reason is the model's own vocabulary.
    assert.equal(finish?.type, "finish");
  });

  it("retries an upstream error before the first byte, and the retry's stream is the one yielded", async (t) => {
    const server = await startServer(t, [
      (res) => res.writeHead(503, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "busy" } })),
      (res) => {
        sse(res);
        res.end(chunk({ content: "ok" }) + chunk({}, "stop") + "data: [DONE]\n\n");
      },
    ]);
    const parts = await collect(model(server.baseUrl).doStream?.({ messages: [{ role: "user", content: "hi" }] }) ?? []);
    assert.equal(server.bodies.length, 2);
    assert.deepEqual(parts[0], { type: "text-delta", text: "ok" });
  });

  it("raises an error the stream sends after its first byte, without a retry, and never with the key", async (t) => {
    const server = await startServer(t, [
      (res) => {
        sse(res);
        res.write(chunk({ content: "par" }));
        res.end(`data: ${JSON.stringify({ error: { message: `overloaded, key ${KEY}` } })}\n\n`);
      },
    ]);
    const seen: StreamPart[] = [];
    await assert.rejects(
      async () => {
        for await (const part of model(server.baseUrl).doStream?.({ messages: [{ role: "user", content: "hi" }] }) ?? []) seen.push(part);
      },
      (error: unknown) => error instanceof ModelCallError && /streamed an error/u.test(error.message) && !error.message.includes(KEY),
    );
    assert.deepEqual(seen, [{ type: "text-delta", text: "par" }]);
    assert.equal(server.bodies.length, 1, "a stream under way is never sent again");
  });

  it("raises a stream the server breaks off before its finish, without a retry", async (t) => {
    const server = await startServer(t, [
      (res) => {
        sse(res);
        res.write(chunk({ content: "half" }));
        setTimeout(() => res.destroy(), 20);
      },
    ]);
    await assert.rejects(collect(model(server.baseUrl).doStream?.({ messages: [{ role: "user", content: "hi" }] }) ?? []), ModelCallError);
    assert.equal(server.bodies.length, 1);
  });

  it("closes the upstream connection when the caller's signal aborts mid-stream", async (t) => {
    const server = await startServer(t, [
      (res) => {
        sse(res);
        res.write(chunk({ content: "first" }));
      },
    ]);
    const controller = new AbortController();
    const stream = model(server.baseUrl).doStream?.({ messages: [{ role: "user", content: "hi" }], signal: controller.signal });
    const iterator = (stream as AsyncIterable<StreamPart>)[Symbol.asyncIterator]();
    assert.deepEqual((await iterator.next()).value, { type: "text-delta", text: "first" });
    const pending = iterator.next();
    controller.abort(new Error("the client left"));
    await assert.rejects(pending, /the client left/u);
    assert.equal(await server.closed(0), true, "the upstream's reply was cut, not finished");
  });

  it("closes the upstream connection when the caller leaves the iteration early", async (t) => {
    const server = await startServer(t, [
      (res) => {
        sse(res);
        res.write(chunk({ content: "first" }));
      },
    ]);
    for await (const part of model(server.baseUrl).doStream?.({ messages: [{ role: "user", content: "hi" }] }) ?? []) {
      assert.equal(part.type, "text-delta");
      break;
    }
    assert.equal(await server.closed(0), true);
  });

  it("ends a stream that sends no byte for timeoutMs with a timeout error, though it lives longer while bytes flow", async (t) => {
    const server = await startServer(t, [
      (res) => {
        sse(res);
        // Bytes every 60 ms for 300 ms (past the 150 ms timeout in all), then silence.
        let sent = 0;
        const timer = setInterval(() => {
          res.write(chunk({ content: "x" }));
          if (++sent === 5) clearInterval(timer);
        }, 60);
        res.on("close", () => clearInterval(timer));
      },
    ]);
    const seen: StreamPart[] = [];
    await assert.rejects(
      async () => {
        for await (const part of model(server.baseUrl, { timeoutMs: 150 }).doStream?.({ messages: [{ role: "user", content: "hi" }] }) ?? []) seen.push(part);
      },
      (error: unknown) => error instanceof ModelCallError && /timed out: no byte of its stream for 150 ms/u.test(error.message),
    );
    assert.equal(seen.length, 5);
    assert.equal(await server.closed(0), true);
  });
});
