import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { APICallError, type LanguageModelV3GenerateResult, type LanguageModelV4GenerateResult } from "@ai-sdk/provider";
import { MockLanguageModelV3, MockLanguageModelV4 } from "ai/test";
import { ModelCallError, UsageError } from "../errors.js";
import { runEval } from "../eval/run.js";
import { reflectRetry } from "../loops/reflect-retry.js";
import { arithmeticAnswer, arithmeticTask, generateArithmetic, type ArithmeticRecord } from "../tasks/arithmetic/index.js";
import { fromAISDK } from "./from-ai-sdk.js";

/** A v4 result of text `text`, with `input`/`output` token counts and 2 of the input read from a cache. */
function reply(text: string, input = 10, output = text.length): LanguageModelV4GenerateResult {
  return {
    content: [{ type: "text", text }],
    finishReason: { unified: "stop", raw: "stop" },
    usage: { inputTokens: { total: input, noCache: input - 2, cacheRead: 2, cacheWrite: undefined }, outputTokens: { total: output, text: output, reasoning: undefined } },
    warnings: [],
  };
}

const task = arithmeticTask();
const item = { id: "item-1", record: { a: 6, b: 7, op: "*" } as ArithmeticRecord };

describe("fromAISDK", () => {
  it("runs reflectRetry on an AI SDK model: fails, reflects, passes, with the conversation as the v4 prompt", async () => {
    const mock = new MockLanguageModelV4({ provider: "mock", modelId: "m1", doGenerate: [reply("<answer>41</answer>"), reply("I multiplied wrong."), reply("<answer>42</answer>")] });
    const model = fromAISDK(mock);
    assert.equal(model.modelId, "ai-sdk:mock#m1");
    const episode = await reflectRetry({ model, task, item, turns: 2, seed: 7 });

    assert.equal(episode.correct, true);
    assert.equal(episode.solvedAt, 2);
    assert.equal(episode.attempts[0]?.verdict.correct, false);
    assert.equal(episode.attempts[0]?.reflection?.call?.output, "I multiplied wrong.");
    assert.equal(mock.doGenerateCalls.length, 3);
    const [first, reflect, retry] = mock.doGenerateCalls;
    // the task prompt, as v4 messages (system as a string, the rest as text parts)
    const prompt = task.prompt(item.record);
    assert.deepEqual(
      first?.prompt,
      prompt.map((m) => (m.role === "system" ? { role: "system", content: m.content } : { role: m.role, content: [{ type: "text", text: m.content }] })),
    );
    assert.deepEqual(reflect?.prompt[prompt.length], { role: "assistant", content: [{ type: "text", text: "<answer>41</answer>" }] });
    assert.deepEqual(retry?.prompt.slice(0, reflect?.prompt.length), reflect?.prompt);
    // sampling of each call reaches the provider: the loop's greedy defaults and per-call seeds
    assert.deepEqual(mock.doGenerateCalls.map((c) => c.maxOutputTokens), [256, 128, 256]);
    assert.deepEqual(mock.doGenerateCalls.map((c) => c.temperature), [0, 0, 0]);
    assert.equal(new Set(mock.doGenerateCalls.map((c) => c.seed)).size, 3);
    // usage of the three calls, cache reads counted as prompt tokens not evaluated
    assert.equal(episode.usage.calls, 3);
    assert.equal(episode.usage.promptTokens, 30);
    assert.equal(episode.usage.evaluatedPromptTokens, 24);
    assert.equal(episode.usage.completionTokens, "<answer>41</answer>".length + "I multiplied wrong.".length + "<answer>42</answer>".length);
  });

  it("runs an eval (runEval, as docs/04-ai-sdk.md shows) on an AI SDK model, resumable from its folder", async () => {
    const items = generateArithmetic({ seed: 1, count: 3 });
    // Each item: a wrong first answer, a reflection, then the right answer (worked out from the question).
    const mock = new MockLanguageModelV4({
      doGenerate: async (options) => {
        const last = options.prompt.at(-1);
        const text = last?.role === "user" && last.content[0]?.type === "text" ? last.content[0].text : "";
        if (/Reflect on what went wrong/.test(text)) return reply("Off by one.");
        const q = /What is (-?\d+) ([-+*]) (-?\d+)\?/.exec(text);
        assert.ok(q, `a question in ${JSON.stringify(text)}`);
        const right = arithmeticAnswer({ a: Number(q[1]), op: q[2] as ArithmeticRecord["op"], b: Number(q[3]) });
        return reply(`<answer>${options.prompt.length === 1 ? right + 1 : right}</answer>`);
      },
    });
    const model = fromAISDK(mock);
    const outDir = await mkdtemp(join(tmpdir(), "reflectkit-from-ai-sdk-"));
    try {
      const run = () => runEval({ items, episode: (item, ctx) => reflectRetry({ model, task, item, turns: 2, ...ctx }), turns: 2, concurrency: model.maxConcurrency, outDir, config: { model: model.modelId }, fingerprint: { model: model.modelId, task: task.name } });
      const { summary } = await run();
      assert.equal(summary.n, 3);
      assert.deepEqual(summary.accuracy, [0, 1]);
      assert.equal(mock.doGenerateCalls.length, 9);
      const again = await run();
      assert.equal(again.resumed, 3);
      assert.equal(mock.doGenerateCalls.length, 9, "a finished run makes no new calls");
    } finally {
      await rm(outDir, { recursive: true, force: true });
    }
  });

  it("maps sampling, stop strings, the JSON format and tools, and reads tool calls and finish reasons back", async () => {
    const mock = new MockLanguageModelV4({
      doGenerate: {
        content: [
          { type: "text", text: "calling" },
          { type: "tool-call", toolCallId: "c1", toolName: "add", input: '{"a":1,"b":2}' },
          { type: "tool-call", toolCallId: "c2", toolName: "search", input: "{}", providerExecuted: true },
        ],
        finishReason: { unified: "tool-calls", raw: "tool_calls" },
        usage: { inputTokens: { total: 5, noCache: undefined, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: undefined, text: undefined, reasoning: undefined } },
        warnings: [],
      },
    });
    const schema = { type: "object", properties: { a: { type: "number" } } };
    const result = await fromAISDK(mock).doGenerate({
      messages: [{ role: "user", content: "add 1 and 2" }],
      maxTokens: 32,
      temperature: 0.5,
      topP: 0.9,
      topK: 40,
      seed: 3,
      stop: ["</answer>"],
      responseFormat: { type: "json", schema },
      tools: [{ name: "add", description: "adds", parameters: schema }, { name: "now" }],
    });
    const call = mock.doGenerateCalls[0];
    assert.equal(call?.maxOutputTokens, 32);
    assert.equal(call?.temperature, 0.5);
    assert.equal(call?.topP, 0.9);
    assert.equal(call?.topK, 40);
    assert.equal(call?.seed, 3);
    assert.deepEqual(call?.stopSequences, ["</answer>"]);
    assert.deepEqual(call?.responseFormat, { type: "json", schema });
    assert.deepEqual(call?.tools, [
      { type: "function", name: "add", description: "adds", inputSchema: schema },
      { type: "function", name: "now", inputSchema: { type: "object", properties: {} } },
    ]);
    assert.equal(result.text, "calling");
    // the provider-executed call is not the caller's
    assert.deepEqual(result.toolCalls, [{ id: "c1", name: "add", arguments: '{"a":1,"b":2}' }]);
    assert.equal(result.finishReason, "other");
    assert.deepEqual(result.usage, { promptTokens: 5, evaluatedPromptTokens: 5, completionTokens: 0 });
  });

  it("maps length and error finish reasons", async () => {
    const mock = new MockLanguageModelV4({
      doGenerate: [
        { ...reply("cut"), finishReason: { unified: "length", raw: "max_tokens" } },
        { ...reply(""), finishReason: { unified: "error", raw: undefined } },
      ],
    });
    const model = fromAISDK(mock);
    const request = { messages: [{ role: "user" as const, content: "x" }], maxTokens: 3 };
    assert.equal((await model.doGenerate(request)).finishReason, "length");
    assert.equal((await model.doGenerate(request)).finishReason, "error");
  });

  it("passes the abort signal and rejects with its reason when it fires, even if the provider ignores it", async () => {
    let seen: AbortSignal | undefined;
    const mock = new MockLanguageModelV4({
      doGenerate: (options) => {
        seen = options.abortSignal;
        return new Promise(() => {}); // never settles: only the race can end the call
      },
    });
    const controller = new AbortController();
    const pending = fromAISDK(mock).doGenerate({ messages: [{ role: "user", content: "x" }], maxTokens: 4, signal: controller.signal });
    const reason = new Error("stop now");
    setTimeout(() => controller.abort(reason), 5);
    await assert.rejects(pending, (error) => error === reason);
    assert.equal(seen, controller.signal);
  });

  it("stops a reflectRetry episode when aborted during the retry", async () => {
    const controller = new AbortController();
    const mock = new MockLanguageModelV4({
      doGenerate: [
        reply("<answer>41</answer>"),
        reply("I multiplied wrong."),
        reply("<answer>42</answer>"), // the retry: the caller gives up while it runs
      ],
    });
    const inner = mock.doGenerate.bind(mock);
    mock.doGenerate = async (options) => {
      if (mock.doGenerateCalls.length === 2) controller.abort(new Error("caller left"));
      return inner(options);
    };
    const outcome = reflectRetry({ model: fromAISDK(mock), task, item, turns: 3, signal: controller.signal });
    await assert.rejects(outcome, /caller left/);
    assert.equal(mock.doGenerateCalls.length, 3);
  });

  it("turns a provider's API error into a ModelCallError that keeps its status and retryability", async () => {
    const mock = new MockLanguageModelV4({
      provider: "p",
      modelId: "m",
      doGenerate: async () => {
        throw new APICallError({ message: "rate limited", url: "http://127.0.0.1/x", requestBodyValues: {}, statusCode: 429, isRetryable: true });
      },
    });
    await assert.rejects(fromAISDK(mock).doGenerate({ messages: [{ role: "user", content: "x" }], maxTokens: 4 }), (error) => {
      assert.ok(error instanceof ModelCallError);
      assert.equal(error.status, 429);
      assert.equal(error.isRetryable, true);
      assert.match(error.message, /AI SDK model p#m failed \(429\): rate limited/);
      return true;
    });
  });

  it("takes a model of the previous specification (v3, ai@6) too", async () => {
    const v3 = (text: string): LanguageModelV3GenerateResult => ({
      content: [{ type: "text", text }],
      finishReason: { unified: "stop", raw: "stop" },
      usage: { inputTokens: { total: 4, noCache: 4, cacheRead: 0, cacheWrite: undefined }, outputTokens: { total: text.length, text: text.length, reasoning: undefined } },
      warnings: [],
    });
    const mock = new MockLanguageModelV3({ provider: "old", modelId: "m3", doGenerate: [v3("<answer>41</answer>"), v3("Wrong."), v3("<answer>42</answer>")] });
    const episode = await reflectRetry({ model: fromAISDK(mock), task, item, turns: 2 });
    assert.equal(episode.correct, true);
    assert.equal(episode.model, "ai-sdk:old#m3");
    assert.equal(mock.doGenerateCalls.length, 3);
    assert.equal(mock.doGenerateCalls[0]?.maxOutputTokens, 256);
  });

  it("refuses a model of another specification version, saying what to do", () => {
    const old = { specificationVersion: "v2", provider: "p", modelId: "m" } as unknown as MockLanguageModelV4;
    assert.throws(() => fromAISDK(old), (error) => error instanceof UsageError && /specification v4 \(ai@7\) or v3 \(ai@6\); got specification v2 — upgrade/.test(error.message));
  });
});
