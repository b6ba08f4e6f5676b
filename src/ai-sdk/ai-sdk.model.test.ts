/**
 * The AI SDK door on the real embedded SmolLM2-135M, through the real `ai` package: `toAISDK` with and without
 * `reflectionMiddleware`, for `generateText`, `generateObject` (deprecated in ai@7 but still exported, and still
 * in use), `generateText` with `Output.object` (ai@7's form) and `streamText`. The caller's check rejects the first
 * draft of every call deterministically (it counts the attempts it sees), so each episode reflects and retries
 * whatever the small model says. What the model says is not asserted beyond what the checks and grammar guarantee.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { generateObject, generateText, jsonSchema, Output, streamText, wrapLanguageModel, type LanguageModelUsage } from "ai";
import type { RequestRecord } from "../critics/request/request-task.js";
import type { Check, Episode } from "../loops/types.js";
import type { LanguageModel } from "../models/language-model.js";
import { openModel } from "../models/open.js";
import { reflectionMiddleware } from "./reflection-middleware.js";
import { toAISDK } from "./to-ai-sdk.js";

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

/** A check that fails the first attempt it sees (of each call: reset by `onEpisode`) and passes every later one. */
function failFirstDraft(): { check: (output: string) => Check; reset: () => void } {
  let seen = 0;
  return {
    check: () => {
      seen += 1;
      const pass = seen > 1;
      return { source: "custom", pass, score: pass ? 1 : 0, feedback: pass ? "accepted" : "First drafts are never accepted: check your answer and write it again." };
    },
    reset: () => void (seen = 0),
  };
}

interface Meta {
  selected: number;
  correct: boolean;
  stoppedBy: string;
  attempts: { turn: number; output: string; checks: { source: string; pass: boolean; feedback: string }[]; reflection?: string }[];
  usage: { promptTokens: number; completionTokens: number; calls: number };
}

/** Every call of the episode (attempts and reflections), summed independently of the loop's own total. */
function summedCalls(episode: Episode<RequestRecord>): { input: number; output: number; calls: number } {
  const calls = episode.attempts.flatMap((a) => [a.call, ...(a.reflection?.call === undefined ? [] : [a.reflection.call])]);
  return { input: calls.reduce((n, c) => n + c.usage.promptTokens, 0), output: calls.reduce((n, c) => n + c.usage.completionTokens, 0), calls: calls.length };
}

/** The reflection shape every call here must show: draft rejected by the caller's check, reflected on, retry accepted. */
function assertReflected(meta: Meta, episode: Episode<RequestRecord> | undefined, usage: LanguageModelUsage, sources: string[]): void {
  assert.ok(meta.attempts.length >= 2, `${meta.attempts.length} attempts`);
  const [first, second] = meta.attempts;
  assert.deepEqual(first?.checks.map((c) => `${c.source}:${c.pass}`), [...sources.map((s) => `${s}:true`), "custom:false"]);
  assert.match(first?.checks.at(-1)?.feedback ?? "", /First drafts are never accepted/);
  assert.ok((first?.reflection ?? "").length > 0, "the failed draft was reflected on");
  assert.deepEqual(second?.checks.map((c) => `${c.source}:${c.pass}`), [...sources.map((s) => `${s}:true`), "custom:true"]);
  assert.equal(meta.selected, 2);
  assert.equal(meta.correct, true);
  assert.ok(episode !== undefined, "onEpisode was called");
  const sum = summedCalls(episode);
  assert.equal(sum.calls, 3, "draft, reflection, retry");
  assert.equal(episode.usage.calls, sum.calls);
  assert.equal(usage.inputTokens, sum.input);
  assert.equal(usage.outputTokens, sum.output);
  assert.ok(sum.output > 0);
}

describe("the AI SDK door on the embedded SmolLM2", { timeout: 600_000 }, () => {
  let embedded: LanguageModel;
  before(async () => {
    embedded = await openModel("smollm2-135m", { threads: 2, contextSize: 2048 });
  });
  after(async () => {
    await embedded?.close();
  });

  /** The embedded model wrapped in the middleware with a first-draft-failing check; the episode of the last call. */
  function reflecting(): { model: ReturnType<typeof wrapLanguageModel>; last: () => Episode<RequestRecord> | undefined } {
    const gate = failFirstDraft();
    let last: Episode<RequestRecord> | undefined;
    const model = wrapLanguageModel({
      model: toAISDK(embedded),
      middleware: reflectionMiddleware({
        checks: [gate.check],
        maxTurns: 2,
        onEpisode: (e) => {
          last = e;
          gate.reset();
        },
      }),
    });
    return { model, last: () => last };
  }

  it("generateText on bare toAISDK (no middleware)", async () => {
    const result = await generateText({ model: toAISDK(embedded), prompt: "Name a prime number.", maxOutputTokens: 16, temperature: 0 });
    assert.ok(result.text.length > 0);
    assert.ok(result.finishReason === "stop" || result.finishReason === "length", result.finishReason);
    assert.ok((result.usage.outputTokens ?? 0) > 0 && (result.usage.outputTokens ?? 0) <= 16);
    assert.ok((result.usage.inputTokens ?? 0) > 0);
    assert.equal(result.providerMetadata?.reflectkit, undefined, "no episode without the middleware");
  });

  it("generateText through reflectionMiddleware: the draft fails the caller's check, is reflected on and retried", async () => {
    const { model, last } = reflecting();
    const result = await generateText({ model, prompt: "What is 6 * 7? Answer with the number only.", maxOutputTokens: 16, temperature: 0 });
    const meta = result.providerMetadata?.reflectkit as unknown as Meta;
    assertReflected(meta, last(), result.usage, []);
    assert.equal(result.text, meta.attempts[1]?.output);
  });

  it("generateObject through reflectionMiddleware: the schema check passes (grammar), the caller's check fails the draft", async () => {
    const { model, last } = reflecting();
    const schema = jsonSchema<{ answer: number }>({ type: "object", properties: { answer: { type: "integer" } }, required: ["answer"], additionalProperties: false });
    const result = await generateObject({ model, schema, prompt: "What is 6 * 7? Reply as JSON.", maxOutputTokens: 24, temperature: 0 });
    assert.equal(typeof result.object.answer, "number");
    const meta = result.providerMetadata?.reflectkit as unknown as Meta;
    assertReflected(meta, last(), result.usage, ["schema"]);
    assert.deepEqual(result.object, JSON.parse(meta.attempts[1]?.output ?? ""));
  });

  it("generateText with Output.object (ai@7's form) through reflectionMiddleware", async () => {
    const { model, last } = reflecting();
    const schema = jsonSchema<{ city: string }>({ type: "object", properties: { city: { type: "string", maxLength: 20 } }, required: ["city"], additionalProperties: false });
    const result = await generateText({ model, output: Output.object({ schema }), prompt: "Name the capital of France as JSON.", maxOutputTokens: 24, temperature: 0 });
    assert.equal(typeof result.output.city, "string");
    const meta = result.providerMetadata?.reflectkit as unknown as Meta;
    assertReflected(meta, last(), result.usage, ["schema"]);
  });

  it("streamText through reflectionMiddleware yields the selected attempt's text, after the episode settled", async () => {
    const { model, last } = reflecting();
    const result = streamText({ model, prompt: "What is 6 * 7? Answer with the number only.", maxOutputTokens: 16, temperature: 0 });
    let text = "";
    let deltas = 0;
    for await (const delta of result.textStream) {
      text += delta;
      deltas += 1;
    }
    const meta = (await result.providerMetadata)?.reflectkit as unknown as Meta;
    assertReflected(meta, last(), await result.usage, []);
    assert.equal(text, meta.attempts[meta.selected - 1]?.output);
    assert.ok(deltas <= 1, "buffered: the selected attempt streams as one block");
  });
});
