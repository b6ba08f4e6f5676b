/**
 * The gateway in front of the real embedded SmolLM2-135M-Instruct, talked to by the official `openai` client. What the
 * small model writes is not asserted — only that a draft failing its check is reflected on and retried, and that
 * `usage` is the sum over every call the request caused.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { LanguageModel } from "../models/language-model.js";
import { openModel } from "../models/open.js";
import { ensureOpenaiPythonClient, runPythonClient, type PythonCreateResult } from "./python-client.js";
import Anthropic from "@anthropic-ai/sdk";
import { client, startTestGateway } from "./serve-harness.js";

let model: LanguageModel;
let python: string;
before(async () => {
  model = await openModel("smollm2-135m", { offline: true, parallel: 1 });
  // The official Python client's venv, built once outside any test's time limit.
  python = (await ensureOpenaiPythonClient()).python;
});
after(() => model.close());

describe("gateway with the embedded SmolLM2 upstream", () => {
  it("reflects on a draft that fails its check, with usage over every call", async (t) => {
    const gateway = await startTestGateway(t, { upstream: model });
    const ask = { model: "smollm2-135m", messages: [{ role: "user" as const, content: "Name a fruit." }], max_tokens: 24 };
    // A check no first draft to this question passes: the reply must contain a code word it has not been told.
    const { data, response } = await client(gateway.url)
      .chat.completions.create({ ...ask, reflect: { regex: "ZEBRA-17", max_turns: 2, reflection_max_tokens: 24 } } as typeof ask)
      .withResponse();
    const extension = (data as unknown as { reflect: { attempts: number; checks: Array<{ turn: number; pass: boolean | null }>; usage_by_role: Record<string, { tokens: number; calls: number }> } }).reflect;
    assert.equal(extension.attempts, 2);
    assert.deepEqual(extension.checks[0], { ...extension.checks[0], turn: 1, pass: false });
    assert.equal(response.headers.get("x-reflect-attempts"), "2");
    const roles = extension.usage_by_role;
    assert.deepEqual([roles.attempt?.calls, roles.reflection?.calls], [2, 1]);
    const usage = data.usage;
    assert.ok(usage !== undefined && usage.completion_tokens > 0);
    assert.equal(usage.total_tokens, (roles.attempt?.tokens ?? 0) + (roles.reflection?.tokens ?? 0));
    assert.equal(usage.total_tokens, usage.prompt_tokens + usage.completion_tokens);
    assert.equal(typeof data.choices[0]?.message.content, "string");

    // Without `reflect`: one generation, shaped as OpenAI's stream.
    const stream = await client(gateway.url).chat.completions.create({ ...ask, max_tokens: 12, stream: true, stream_options: { include_usage: true } });
    let text = "";
    let total = 0;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      total = chunk.usage?.total_tokens ?? total;
    }
    assert.ok(text.length > 0);
    assert.ok(total > 0);
  });

  it("answers the official Python client with a verified answer: the arithmetic task's verifier as the request's check", async (t) => {
    const gateway = await startTestGateway(t, { upstream: model });
    // On this machine SmolLM2 answers 8 * 4 right at the first draft (greedy), so the check passes and no reflection
    // is paid for; the assertions below hold whatever it writes.
    const request = { model: "smollm2-135m", messages: [{ role: "user", content: "What is 8 * 4? Give the final answer inside <answer></answer> tags." }], max_tokens: 64 };
    const result = await runPythonClient(python, { baseUrl: `${gateway.url}/v1`, apiKey: "unused", request, reflect: { task: "arithmetic", item: { a: 8, b: 4, op: "*" }, max_turns: 2 }, mode: "create" });
    assert.ok(result.create !== undefined && !("error" in result.create), JSON.stringify(result.create));
    const created = result.create as PythonCreateResult;
    const ext = created.reflect as { attempts: number; passed: boolean; checks: Array<{ source: string; pass: boolean | null }>; usage_by_role: Record<string, { tokens: number; calls: number }> };
    // Whatever the model wrote, the checks are the task's verifier's, and `usage` is the sum over every call.
    assert.ok(ext.attempts >= 1 && ext.attempts <= 2);
    assert.ok(ext.checks.every((c) => c.source === "task"));
    assert.equal(ext.passed, ext.checks.at(-1)?.pass === true);
    const usage = created.completion.usage as { total_tokens: number };
    const byRole = Object.values(ext.usage_by_role).reduce((sum, r) => sum + r.tokens, 0);
    assert.equal(usage.total_tokens, byRole);
    assert.equal(created.headers["x-reflect-attempts"], String(ext.attempts));
  });

  it("answers the Responses and Messages dialects' official clients with a reflected answer, usage over every call", async (t) => {
    const gateway = await startTestGateway(t, { upstream: model });
    const reflect = { regex: "ZEBRA-17", max_turns: 2, reflection_max_tokens: 24 };
    const response = await client(gateway.url).responses.create({ model: "smollm2-135m", instructions: "Be brief.", input: "Name a fruit.", max_output_tokens: 24, reflect } as never);
    const rExt = (response as unknown as { reflect: { attempts: number; passed: boolean; usage_by_role: Record<string, { tokens: number }> } }).reflect;
    assert.deepEqual([rExt.attempts, rExt.passed], [2, false]);
    assert.equal(response.usage?.total_tokens, Object.values(rExt.usage_by_role).reduce((sum, r) => sum + r.tokens, 0));
    assert.equal(typeof response.output_text, "string");

    const anthropic = new Anthropic({ baseURL: gateway.url, apiKey: "unused", maxRetries: 0 });
    const message = await anthropic.messages.create({ model: "smollm2-135m", max_tokens: 24, system: "Be brief.", messages: [{ role: "user", content: "Name a fruit." }], reflect } as never);
    const mExt = (message as unknown as { reflect: { attempts: number; usage_by_role: Record<string, { tokens: number }> } }).reflect;
    assert.equal(mExt.attempts, 2);
    const used = message.usage.input_tokens + (message.usage.cache_read_input_tokens ?? 0) + message.usage.output_tokens;
    assert.equal(used, Object.values(mExt.usage_by_role).reduce((sum, r) => sum + r.tokens, 0));
    assert.equal(message.content[0]?.type, "text");

    // count_tokens is the engine's own count of the conversation as it would be prompted.
    const counted = await anthropic.messages.countTokens({ model: "smollm2-135m", system: "Be brief.", messages: [{ role: "user", content: "Name a fruit." }] });
    const direct = await (model.countTokens as NonNullable<LanguageModel["countTokens"]>)({ messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Name a fruit." }] });
    assert.equal(counted.input_tokens, direct);
  });
});
