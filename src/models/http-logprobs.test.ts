/** The HTTP backend's log-probs against a real server on 127.0.0.1: asked for, read back, absent when not given. */
import assert from "node:assert/strict";
import http from "node:http";
import { describe, it, type TestContext } from "node:test";
import { listenOnLoopback } from "../cli/cli-harness.js";
import { ModelCallError } from "../errors.js";
import { createHttpModel } from "./http.js";

/** A server answering every request with `reply(body)`; the request bodies it saw are kept. */
async function serve(t: TestContext, reply: (body: Record<string, unknown>) => unknown): Promise<{ baseUrl: string; bodies: Record<string, unknown>[] }> {
  const bodies: Record<string, unknown>[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
      bodies.push(body);
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(reply(body)));
    });
  });
  return { baseUrl: `http://127.0.0.1:${await listenOnLoopback(t, server)}/v1`, bodies };
}

const usage = { prompt_tokens: 10, completion_tokens: 4 };
const choice = (content: string, logprobs?: unknown) => ({ choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop", ...(logprobs === undefined ? {} : { logprobs }) }], usage });
const messages = [{ role: "user" as const, content: "What is 6 * 7?" }];

describe("HTTP model log-probs", () => {
  it("sends logprobs: true when asked and reads choices[0].logprobs.content back, texts spelling the reply", async (t) => {
    const server = await serve(t, (body) =>
      choice("<answer>42</answer>", body.logprobs === true ? { content: [{ token: "<answer>", logprob: -0.01, bytes: null }, { token: "4", logprob: -0.7 }, { token: "2", logprob: -0.2 }, { token: "</answer>", logprob: 0 }] } : null),
    );
    const model = createHttpModel({ baseUrl: server.baseUrl, model: "m", env: {} });
    const asked = await model.doGenerate({ messages, maxTokens: 16, logprobs: true });
    assert.equal(server.bodies[0]?.logprobs, true);
    assert.deepEqual(asked.logprobs, [
      { text: "<answer>", logprob: -0.01 },
      { text: "4", logprob: -0.7 },
      { text: "2", logprob: -0.2 },
      { text: "</answer>", logprob: 0 },
    ]);
    const plain = await model.doGenerate({ messages, maxTokens: 16 });
    assert.equal("logprobs" in (server.bodies[1] ?? {}), false, "not asked, not sent");
    assert.equal(plain.logprobs, undefined);
  });

  it("a server that gives none: absent, not zero", async (t) => {
    const server = await serve(t, () => choice("42"));
    const result = await createHttpModel({ baseUrl: server.baseUrl, model: "m", env: {} }).doGenerate({ messages, maxTokens: 16, logprobs: true });
    assert.equal(result.text, "42");
    assert.equal(result.logprobs, undefined);
  });

  it("lines up a character split across tokens by their bytes", async (t) => {
    // "é" is two UTF-8 bytes, 0xC3 0xA9, sent as two tokens whose `token` strings are not text.
    const server = await serve(t, () => choice("café", { content: [{ token: "caf", logprob: -0.1, bytes: [99, 97, 102] }, { token: "\\xc3", logprob: -0.3, bytes: [0xc3] }, { token: "\\xa9", logprob: -0.05, bytes: [0xa9] }] }));
    const result = await createHttpModel({ baseUrl: server.baseUrl, model: "m", env: {} }).doGenerate({ messages, maxTokens: 16, logprobs: true });
    assert.deepEqual(result.logprobs, [
      { text: "caf", logprob: -0.1 },
      { text: "", logprob: -0.3 },
      { text: "é", logprob: -0.05 },
    ]);
  });

  it("tokens that do not spell the reply give none; a malformed list is an error naming the field", async (t) => {
    const server = await serve(t, (body) => (body.max_tokens === 16 ? choice("42", { content: [{ token: "41", logprob: -1 }] }) : choice("42", { content: [{ token: "42", logprob: "high" }] })));
    const model = createHttpModel({ baseUrl: server.baseUrl, model: "m", env: {} });
    assert.equal((await model.doGenerate({ messages, maxTokens: 16, logprobs: true })).logprobs, undefined);
    await assert.rejects(model.doGenerate({ messages, maxTokens: 17, logprobs: true }), (error: unknown) => error instanceof ModelCallError && /choices\[0\]\.logprobs\.content\[0\]\.logprob/u.test(error.message));
  });
});
