import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { generateText, jsonSchema, Output, streamText, tool, wrapLanguageModel } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import type { RequestRecord } from "../critics/request/request-task.js";
import { openRecordWriter } from "../record/record-writer.js";
import type { Episode } from "../loops/types.js";
import type { GenerateRequest, GenerateResult, LanguageModel } from "../models/language-model.js";
import { scriptedModel, type ScriptedModel } from "../models/scripted.js";
import { reflectionMiddleware } from "./reflection-middleware.js";
import { toAISDK } from "./to-ai-sdk.js";

const digitsOnly = (output: string) => ({ source: "custom" as const, pass: /^\d+$/.test(output), score: /^\d+$/.test(output) ? 1 : 0, feedback: /^\d+$/.test(output) ? "digits" : "answer with digits only" });

/** An AI SDK v4 result of text `text`. */
function textReply(text: string) {
  return {
    content: [{ type: "text" as const, text }],
    finishReason: { unified: "stop" as const, raw: "stop" },
    usage: { inputTokens: { total: 5, noCache: 5, cacheRead: 0, cacheWrite: undefined }, outputTokens: { total: text.length, text: text.length, reasoning: undefined } },
    warnings: [],
  };
}

/** Token totals of every call the scripted model served (it counts one token per character). */
function totals(model: ScriptedModel, outputs: readonly string[]): { input: number; output: number } {
  const input = model.calls.reduce((n, c) => n + c.messages.reduce((m, x) => m + x.content.length, 0), 0);
  return { input, output: outputs.reduce((n, o) => n + o.length, 0) };
}

describe("reflectionMiddleware", () => {
  it("reflects on a draft that fails a caller's check and returns the retry, with usage totalled and the episode attached", async () => {
    const replies = ["forty-two", "I should write digits.", "42"];
    const model = scriptedModel(replies);
    let seen: Episode<RequestRecord> | undefined;
    const result = await generateText({
      model: wrapLanguageModel({ model: toAISDK(model), middleware: reflectionMiddleware({ checks: [digitsOnly], maxTurns: 3, onEpisode: (e) => void (seen = e) }) }),
      prompt: "What is 6 * 7?",
      maxOutputTokens: 32,
    });
    assert.equal(result.text, "42");
    assert.equal(model.calls.length, 3);
    assert.match(model.calls[1]?.messages.at(-1)?.content ?? "", /answer with digits only/);
    const { input, output } = totals(model, replies);
    assert.equal(result.usage.inputTokens, input);
    assert.equal(result.usage.outputTokens, output);
    const meta = result.providerMetadata?.reflectkit as { decision: string; passed: boolean; rolledBack: boolean; attempts: { output: string; checks: { pass: boolean }[]; reflection?: string }[]; selected: number; correct: boolean };
    assert.deepEqual([meta.decision, meta.passed, meta.rolledBack], ["verified", true, false], "the gateway's words: a passing retry is verified");
    assert.deepEqual(meta.attempts.map((a) => [a.output, a.checks.map((c) => c.pass), a.reflection]), [
      ["forty-two", [false], "I should write digits."],
      ["42", [true], undefined],
    ]);
    assert.equal(meta.selected, 2);
    assert.equal(meta.correct, true);
    assert.equal(seen?.usage.calls, 3);
    assert.deepEqual(seen?.record.messages, [{ role: "user", content: "What is 6 * 7?" }]);
  });

  it("gives reflections the token limit the caller set, and attempts the call's own", async () => {
    const model = scriptedModel(["forty-two", "Use digits.", "42"]);
    await generateText({
      model: wrapLanguageModel({ model: toAISDK(model), middleware: reflectionMiddleware({ checks: [digitsOnly], reflectionMaxTokens: 24 }) }),
      prompt: "What is 6 * 7?",
      maxOutputTokens: 32,
    });
    assert.deepEqual(model.calls.map((c) => c.maxTokens), [32, 24, 32]);
  });

  it("checks generateText's object output against its own schema and retries a draft that does not fit", async () => {
    const replies = ['{"answer": "forty-two"}', "answer must be a number", '{"answer": 42}'];
    const model = scriptedModel(replies);
    const schema = { type: "object", properties: { answer: { type: "number" } }, required: ["answer"] } as const;
    const result = await generateText({
      model: wrapLanguageModel({ model: toAISDK(model), middleware: reflectionMiddleware() }),
      output: Output.object({ schema: jsonSchema<{ answer: number }>(schema) }),
      prompt: "6 * 7 as JSON",
    });
    assert.deepEqual(result.output, { answer: 42 });
    assert.equal(model.calls.length, 3);
    // attempts carry the schema as the JSON format; the reflection does not
    assert.deepEqual(model.calls.map((c) => c.responseFormat?.type), ["json", undefined, "json"]);
    const meta = result.providerMetadata?.reflectkit as { attempts: { checks: { source: string; pass: boolean }[] }[] };
    assert.deepEqual(meta.attempts.map((a) => a.checks.map((c) => `${c.source}:${c.pass}`)), [["schema:false"], ["schema:true"]]);
  });

  it("checks tool calls against the tools' parameter schemas and retries a call with bad arguments", async () => {
    const usage = { promptTokens: 1, evaluatedPromptTokens: 1, completionTokens: 1 };
    const replies: GenerateResult[] = [
      { text: "", toolCalls: [{ id: "call_0", name: "add", arguments: '{"a": "one", "b": 2}' }], finishReason: "stop", usage },
      { text: "a must be a number", finishReason: "stop", usage },
      { text: "", toolCalls: [{ id: "call_0", name: "add", arguments: '{"a": 1, "b": 2}' }], finishReason: "stop", usage },
    ];
    const calls: GenerateRequest[] = [];
    const model: LanguageModel = {
      specificationVersion: "v1",
      modelId: "tools",
      maxConcurrency: 1,
      async doGenerate(request) {
        calls.push(request);
        return replies[calls.length - 1] as GenerateResult;
      },
      async close() {},
    };
    const parameters = { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] } as const;
    const result = await generateText({
      model: wrapLanguageModel({ model: toAISDK(model), middleware: reflectionMiddleware() }),
      prompt: "add 1 and 2",
      tools: { add: tool({ inputSchema: jsonSchema<{ a: number; b: number }>(parameters) }) },
    });
    assert.deepEqual(result.toolCalls.map((c) => c.input), [{ a: 1, b: 2 }]);
    assert.equal(result.finishReason, "tool-calls");
    assert.deepEqual(calls.map((c) => c.tools?.map((t) => t.name)), [["add"], undefined, ["add"]]);
    const meta = result.providerMetadata?.reflectkit as { attempts: { checks: { source: string; pass: boolean }[] }[] };
    assert.deepEqual(meta.attempts.map((a) => a.checks.map((c) => `${c.source}:${c.pass}`)), [["tools:false"], ["tools:true"]]);
  });

  it("checks a catastrophic parameter pattern off the application's event loop: cannot judge at checks.runMs, never a hang", async () => {
    const usage = { promptTokens: 1, evaluatedPromptTokens: 1, completionTokens: 1 };
    const forty = Array.from({ length: 40 }, (_, i) => ({ id: `call_${i}`, name: "lookup", arguments: JSON.stringify({ q: `${"a".repeat(30)}!` }) }));
    const model: LanguageModel = {
      specificationVersion: "v1",
      modelId: "catastrophic",
      maxConcurrency: 1,
      doGenerate: async () => ({ text: "", toolCalls: forty, finishReason: "stop", usage }),
      async close() {},
    };
    const parameters = { type: "object", properties: { q: { type: "string", pattern: "^(a+)+$" } }, required: ["q"] } as const;
    let last = performance.now();
    let worstGap = 0;
    const ticker = setInterval(() => {
      worstGap = Math.max(worstGap, performance.now() - last);
      last = performance.now();
    }, 10);
    const started = performance.now();
    let result;
    try {
      result = await generateText({
        model: wrapLanguageModel({ model: toAISDK(model), middleware: reflectionMiddleware({ maxTurns: 1 }) }),
        prompt: "look it up",
        tools: { lookup: tool({ inputSchema: jsonSchema<{ q: string }>(parameters) }) },
      });
    } finally {
      clearInterval(ticker);
    }
    const meta = result.providerMetadata?.reflectkit as { attempts: { checks: { source: string; pass: boolean | null; feedback: string }[] }[] };
    const check = meta.attempts[0]?.checks[0];
    assert.equal(check?.pass, null);
    assert.match(check?.feedback ?? "", /checks\.runMs limit \(1000 ms\)/);
    assert.ok(worstGap < 200, `the application's event loop was held ${worstGap.toFixed(0)} ms`);
    assert.ok(performance.now() - started < 10_000);
  });

  it("returns the draft of a call with nothing to check, after one call", async () => {
    const model = scriptedModel(["hello"]);
    const result = await generateText({ model: wrapLanguageModel({ model: toAISDK(model), middleware: reflectionMiddleware() }), prompt: "hi" });
    assert.equal(result.text, "hello");
    assert.equal(model.calls.length, 1);
    const meta = result.providerMetadata?.reflectkit as { stoppedBy: string; decision: string; passed: boolean | null; attempts: { checks: unknown[] }[] };
    assert.deepEqual(meta.attempts.map((a) => a.checks), [[]]);
    assert.equal(meta.stoppedBy, "unchecked");
    assert.deepEqual([meta.decision, meta.passed], ["unjudged", null]);
  });

  it("says a failed answer failed and returns the first draft when the retry fails as badly, as the gateway does", async () => {
    const model = scriptedModel(["forty-two", "I should write digits.", "answer with digits only"]);
    const result = await generateText({ model: wrapLanguageModel({ model: toAISDK(model), middleware: reflectionMiddleware({ checks: [digitsOnly] }) }), prompt: "6 * 7?" });
    assert.equal(result.text, "forty-two");
    const meta = result.providerMetadata?.reflectkit as { decision: string; passed: boolean; rolledBack: boolean; selected: number; attempts: { output: string; decision: string }[] };
    assert.deepEqual([meta.decision, meta.passed, meta.rolledBack, meta.selected], ["failed", false, true, 1]);
    assert.deepEqual(meta.attempts.map((a) => [a.output, a.decision]), [["forty-two", "continue"], ["answer with digits only", "rollback"]], "the loop's own decisions per attempt");
  });

  it("makes one call when the draft passes", async () => {
    const model = scriptedModel(["42"]);
    const result = await generateText({ model: wrapLanguageModel({ model: toAISDK(model), middleware: reflectionMiddleware({ checks: [digitsOnly] }) }), prompt: "6 * 7?" });
    assert.equal(result.text, "42");
    assert.equal(model.calls.length, 1);
  });

  it("streams the selected attempt after the episode settles, with the episode in the finish metadata", async () => {
    const model = scriptedModel(["forty-two", "digits please", "42"]);
    const result = streamText({ model: wrapLanguageModel({ model: toAISDK(model), middleware: reflectionMiddleware({ checks: [digitsOnly] }) }), prompt: "6 * 7?" });
    let text = "";
    for await (const delta of result.textStream) text += delta;
    assert.equal(text, "42");
    assert.equal(model.calls.length, 3);
    assert.equal((await result.usage).outputTokens, "forty-two".length + "digits please".length + "42".length);
    const meta = (await result.providerMetadata)?.reflectkit as { attempts: unknown[] };
    assert.equal(meta.attempts.length, 2);
  });

  it("asks a judge (an AI SDK model) only after the checks pass, and reflects on its verdict", async () => {
    const model = scriptedModel(["41", "I multiplied wrong.", "42"]);
    const verdict = (v: string, explanation: string) => ({
      content: [{ type: "text" as const, text: JSON.stringify({ verdict: v, categories: [], explanation }) }],
      finishReason: { unified: "stop" as const, raw: "stop" },
      usage: { inputTokens: { total: 7, noCache: 7, cacheRead: 0, cacheWrite: undefined }, outputTokens: { total: 5, text: 5, reasoning: undefined } },
      warnings: [],
    });
    const judge = new MockLanguageModelV4({ doGenerate: [verdict("incorrect", "6 * 7 is not 41."), verdict("correct", "Right.")] });
    const result = await generateText({ model: wrapLanguageModel({ model: toAISDK(model), middleware: reflectionMiddleware({ checks: [digitsOnly], judge }) }), prompt: "6 * 7?" });
    assert.equal(result.text, "42");
    assert.equal(judge.doGenerateCalls.length, 2);
    assert.match(model.calls[1]?.messages.at(-1)?.content ?? "", /6 \* 7 is not 41/);
    const meta = result.providerMetadata?.reflectkit as { attempts: { checks: { source: string; pass: boolean }[] }[]; usageByRole: Record<string, { calls: number }> };
    assert.deepEqual(meta.attempts.map((a) => a.checks.map((c) => `${c.source}:${c.pass}`)), [["custom:true", "judge:false"], ["custom:true", "judge:true"]]);
    // the judge's calls count in the total
    assert.equal(result.usage.outputTokens, "41".length + "I multiplied wrong.".length + "42".length + 2 * 5);
  });

  it("appends every episode to a durable record before returning, and honours stop rules", async () => {
    const dir = await mkdtemp(join(tmpdir(), "reflectkit-ai-sdk-"));
    try {
      const recorder = await openRecordWriter({ dir, recordContent: false, config: { kind: "ai-sdk" } });
      // stopWhen: [] reflects even after a passing draft, until maxTurns
      const model = scriptedModel(["42", "check again", "42"]);
      const middleware = reflectionMiddleware({ checks: [digitsOnly], recorder, stopWhen: [], maxTurns: 2 });
      const result = await generateText({ model: wrapLanguageModel({ model: toAISDK(model), middleware }), prompt: "6 * 7?" });
      assert.equal(result.text, "42");
      assert.equal(model.calls.length, 3);
      const lines = (await readFile(join(dir, "episodes.jsonl"), "utf8")).trim().split("\n");
      assert.equal(lines.length, 1, "appended before generateText returned");
      await recorder.close();
      const recorded = JSON.parse(lines[0] as string) as { attempts: unknown[]; redacted?: boolean; usage: { calls: number } };
      assert.equal(recorded.attempts.length, 2);
      assert.equal(recorded.usage.calls, 3);
      assert.equal(recorded.redacted, true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("stops the retry when the caller aborts", async () => {
    const controller = new AbortController();
    const model = scriptedModel([
      "forty-two",
      () => {
        controller.abort(new Error("caller left"));
        return "reflection";
      },
      "42",
    ]);
    await assert.rejects(
      generateText({ model: wrapLanguageModel({ model: toAISDK(model), middleware: reflectionMiddleware({ checks: [digitsOnly], maxTurns: 3 }) }), prompt: "6 * 7?", abortSignal: controller.signal }),
      /caller left/,
    );
    assert.equal(model.calls.length, 2, "no attempt after the abort");
  });

  it("cuts a reflection in flight when the caller aborts, even on a provider that ignores the signal, and calls no more", async () => {
    const controller = new AbortController();
    const mock = new MockLanguageModelV4({
      doGenerate: async () => {
        if (mock.doGenerateCalls.length === 1) return textReply("forty-two");
        // the reflection: a provider that never answers and never looks at its abortSignal
        setTimeout(() => controller.abort(new Error("caller left")), 20);
        return new Promise<never>(() => {});
      },
    });
    const started = performance.now();
    await assert.rejects(
      generateText({ model: wrapLanguageModel({ model: mock, middleware: reflectionMiddleware({ checks: [digitsOnly], maxTurns: 3 }) }), prompt: "6 * 7?", abortSignal: controller.signal }),
      /caller left/,
    );
    assert.ok(performance.now() - started < 2_000, "rejected at the abort, not at a timeout");
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(mock.doGenerateCalls.length, 2, "the draft and the cut reflection; no retry");
    assert.equal(mock.doGenerateCalls[1]?.abortSignal?.aborted, true, "the provider was given the caller's signal");
  });
});
