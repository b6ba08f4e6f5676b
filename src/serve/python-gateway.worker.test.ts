/**
 * The official OpenAI Python client (the pinned venv of python-client.ts) against the real gateway, in front of a real
 * local HTTP upstream: a reflected request (`extra_body={"reflect": …}`, plain and streamed), a pass-through, and a bad
 * request named by its field.
 */
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { createHttpModel } from "../models/http.js";
import { ensureOpenaiPythonClient, runPythonClient, type PythonClientHttpError, type PythonCreateResult, type PythonStreamResult } from "./python-client.js";
import { reply, startTestGateway, startUpstream, UPSTREAM_MODEL } from "./serve-harness.js";

let python: string;
before(async () => {
  python = (await ensureOpenaiPythonClient()).python;
});

/** Fails the draft that has not yet been asked to try again; passes the retry. */
const answer = reply((seen) => (JSON.stringify(seen.body.messages).includes("try again") ? "42" : "forty-two"));

describe("the official Python client against the gateway", () => {
  it("gets a reflected answer with honest usage, streamed or not; pass-through unchanged; 400 naming the field", async (t) => {
    const upstream = await startUpstream(t, answer);
    const gateway = await startTestGateway(t, {
      upstream: createHttpModel({ baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL }),
      upstreamHttp: { baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, apiKeyEnv: "REFLECT_TEST_NO_KEY" },
    });
    const request = { model: UPSTREAM_MODEL, messages: [{ role: "user", content: "Six times seven, digits only." }], max_tokens: 16 };
    const before = upstream.requests.length;
    const reflected = await runPythonClient(python, { baseUrl: `${gateway.url}/v1`, apiKey: "unused", request, reflect: { regex: "^\\d+$" } });
    const created = reflected.create as PythonCreateResult;
    assert.equal((created.completion.choices as Array<{ message: { content: string } }>)[0]?.message.content, "42");
    const ext = created.reflect as { attempts: number; passed: boolean; usage_by_role: Record<string, { calls: number }> };
    assert.deepEqual([ext.attempts, ext.passed, ext.usage_by_role.attempt?.calls, ext.usage_by_role.reflection?.calls], [2, true, 2, 1]);
    assert.equal(created.headers["x-reflect-attempts"], "2");
    const streamed = reflected.stream as PythonStreamResult;
    assert.equal(streamed.content, "42");
    assert.equal((streamed.reflect as { attempts: number }).attempts, 2);
    // Two reflected requests, three upstream calls each; usage is what the upstream reported for its three.
    assert.equal(upstream.requests.length - before, 6);
    const usage = created.completion.usage as { total_tokens: number };
    assert.equal(usage.total_tokens, 20 + 3 + 21 + 4 + 22 + 5);

    const plain = await runPythonClient(python, { baseUrl: `${gateway.url}/v1`, apiKey: "unused", request, mode: "create" });
    assert.equal(((plain.create as PythonCreateResult).completion.choices as Array<{ message: { content: string } }>)[0]?.message.content, "forty-two");
    assert.equal((plain.create as PythonCreateResult).reflect, null);

    const bad = await runPythonClient(python, { baseUrl: `${gateway.url}/v1`, apiKey: "unused", request, reflect: { max_turns: -1 }, mode: "create" });
    const error = bad.create as PythonClientHttpError;
    assert.equal(error.error.status, 400);
    assert.equal((error.error.body as { param?: string }).param ?? (error.error.body as { error?: { param?: string } }).error?.param, "reflect.max_turns");
  });
});
