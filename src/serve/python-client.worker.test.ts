/**
 * The official OpenAI Python client, driven by `openai_client_check.py`, against a real local HTTP server that answers
 * as an OpenAI server with the gateway's extension would. The gateway's own client tests use the same helper.
 */
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { ensureOpenaiPythonClient, runPythonClient, type PythonClientHttpError, type PythonCreateResult, type PythonStreamResult } from "./python-client.js";

interface Received {
  url: string | undefined;
  authorization: string | undefined;
  body: Record<string, unknown>;
}

const received: Received[] = [];
const KEY = "test-key-0123456789";
const reflect = { attempts: 2, decision: "verified", checks: [{ source: "schema", pass: true, score: 1, feedback: "valid" }], usage_by_role: { attempt: { tokens: 30, calls: 2 }, reflection: { tokens: 12, calls: 1 } } };
const usage = { prompt_tokens: 30, completion_tokens: 12, total_tokens: 42 };

function completion(content: string): Record<string, unknown> {
  return { id: "chatcmpl-1", object: "chat.completion", created: 1_764_000_000, model: "fake", choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }], usage, reflect };
}

function chunk(delta: Record<string, unknown>, finish: string | null, extra: Record<string, unknown> = {}): string {
  return `data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 1_764_000_000, model: "fake", choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`;
}

function answer(request: IncomingMessage, response: ServerResponse, raw: string): void {
  if (request.headers.authorization !== `Bearer ${KEY}`) {
    response.writeHead(401, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "wrong key", type: "invalid_request_error", param: null, code: "invalid_api_key" } }));
    return;
  }
  const body = JSON.parse(raw) as Record<string, unknown>;
  received.push({ url: request.url, authorization: request.headers.authorization, body });
  if (typeof body.reflect === "object" && body.reflect !== null && (body.reflect as { max_turns?: unknown }).max_turns === -1) {
    response.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "reflect.max_turns: must be an integer from 1 to 8", type: "invalid_request_error", param: "reflect.max_turns", code: null } }));
    return;
  }
  const headers = { "x-reflect-attempts": "2", "x-reflect-decision": "verified" };
  if (body.stream === true) {
    response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", ...headers });
    response.write(chunk({ role: "assistant", content: "" }, null));
    response.write(chunk({ content: '{"answer": ' }, null));
    response.write(chunk({ content: "42}" }, null));
    response.write(chunk({}, "stop", { reflect }));
    response.write(`data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 1_764_000_000, model: "fake", choices: [], usage })}\n\n`);
    response.end("data: [DONE]\n\n");
    return;
  }
  response.writeHead(200, { "content-type": "application/json", ...headers }).end(JSON.stringify(completion('{"answer": 42}')));
}

const server = createServer((request, response) => {
  let raw = "";
  request.setEncoding("utf8").on("data", (part: string) => (raw += part));
  request.on("end", () => answer(request, response, raw));
});

describe("the official openai Python client (openai_client_check.py)", () => {
  let python = "";
  let baseUrl = "";
  // Builds the venv once, with no timeout: the first build downloads the package.
  before(async () => {
    python = (await ensureOpenaiPythonClient()).python;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
  });

  const request = { model: "fake", messages: [{ role: "user", content: "Give the answer as JSON." }], max_tokens: 32, stream_options: { include_usage: true } };

  it("sends reflect through extra_body and reads the reply's reflect object, usage and x-reflect headers, streamed or not", { timeout: 60_000 }, async () => {
    received.length = 0;
    const result = await runPythonClient(python, { baseUrl, apiKey: KEY, request, reflect: { max_turns: 2, regex: "42" } });

    assert.equal(received.length, 2);
    for (const r of received) {
      assert.equal(r.url, "/v1/chat/completions");
      assert.equal(r.authorization, `Bearer ${KEY}`);
      assert.deepEqual(r.body.reflect, { max_turns: 2, regex: "42" });
      assert.deepEqual(r.body.messages, request.messages);
      assert.equal(r.body.max_tokens, 32);
    }
    assert.equal(received[0]?.body.stream, undefined);
    assert.equal(received[1]?.body.stream, true);

    const create = result.create as PythonCreateResult;
    assert.deepEqual(create.reflect, reflect);
    assert.deepEqual(create.headers, { "x-reflect-attempts": "2", "x-reflect-decision": "verified" });
    assert.deepEqual((create.completion.choices as Array<{ message: { content: string } }>)[0]?.message.content, '{"answer": 42}');
    assert.deepEqual(create.completion.usage, usage);
    // to_dict() keeps the extension too.
    assert.deepEqual(create.completion.reflect, reflect);

    const stream = result.stream as PythonStreamResult;
    assert.equal(stream.content, '{"answer": 42}');
    assert.equal(stream.chunks, 5);
    assert.equal(stream.finish_reason, "stop");
    assert.deepEqual(stream.usage, usage);
    assert.deepEqual(stream.reflect, reflect);
  });

  it("sends no reflect field without one, and reports HTTP errors with their status and OpenAI error body", { timeout: 60_000 }, async () => {
    received.length = 0;
    const plain = await runPythonClient(python, { baseUrl, apiKey: KEY, request, mode: "create" });
    assert.equal(received.length, 1);
    assert.equal("reflect" in (received[0]?.body ?? {}), false);
    assert.equal(plain.stream, undefined);

    const bad = await runPythonClient(python, { baseUrl, apiKey: KEY, request, reflect: { max_turns: -1 } });
    for (const part of [bad.create, bad.stream] as PythonClientHttpError[]) {
      assert.equal(part.error.status, 400);
      assert.equal(part.error.type, "BadRequestError");
      assert.deepEqual((part.error.body as { param: string }).param, "reflect.max_turns");
    }

    const unauthorised = await runPythonClient(python, { baseUrl, apiKey: "wrong", request, mode: "create" });
    assert.equal((unauthorised.create as PythonClientHttpError).error.status, 401);
    assert.equal((unauthorised.create as PythonClientHttpError).error.type, "AuthenticationError");
  });
});
