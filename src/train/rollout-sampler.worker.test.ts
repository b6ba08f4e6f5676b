/**
 * The RRR loop with a sampler other than the worker, on the tiny model (SmolLM2's real tokenizer and chat template):
 * a sampler double that returns scripted texts and reports log-probs, and records its syncs and calls. The worker path
 * itself is tested, unchanged, in objectives.worker.test.ts; the real engine in engine-sampler.worker.model.test.ts.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { ChatMessage, TokenLogprob } from "../models/language-model.js";
import { arithmeticPrompt, generateArithmetic, type ArithmeticRecord } from "../tasks/arithmetic/index.js";
import type { Task, Verdict } from "../tasks/task.js";
import { checkVersion, StaleSamplerError, workerSampler, type RolloutParams, type RolloutSampler, type SampledReply } from "./rollout-sampler.js";
import { trainRrr, type DumpedDatum } from "./rrr.js";
import type { StepMetrics } from "./train-loop.js";
import type { WorkerClient } from "./worker-client.js";
import { prepareTestWorker, startTestWorker, tempDir, tinyModel } from "./worker-harness.js";

// Built (or found) before the first test, not on import: outside every test's timeout, and only when this file runs.
before(() => prepareTestWorker());

type Event = { sync: number } | { generate: number; held: number; conversations: number; temperature: number };

/**
 * A sampler double: replies come from `reply` (the conversation's last user turn, the call's index), and each reply's
 * log-probs are the learner's own at the sampling temperature plus `offset` — computed on the learner's re-rendering,
 * so the loop's mismatch must come out as `offset` exactly. `forget` makes its sync a no-op (a broken sampler).
 */
function doubleSampler(worker: WorkerClient, reply: (conversation: readonly ChatMessage[], index: number) => string, options: { offset?: number; forget?: boolean } = {}): RolloutSampler & { events: Event[]; conversations: ChatMessage[][] } {
  let version = 0;
  const events: Event[] = [];
  const conversations: ChatMessage[][] = [];
  let calls = 0;
  return {
    specificationVersion: "v1",
    kind: "engine",
    events,
    conversations,
    get version() {
      return version;
    },
    logprobsAt: "sampling",
    async sync(next) {
      events.push({ sync: next });
      if (options.forget !== true) version = next;
    },
    async generate(asked: readonly (readonly ChatMessage[])[], params: RolloutParams, wanted: number): Promise<SampledReply[][]> {
      events.push({ generate: wanted, held: version, conversations: asked.length, temperature: params.temperature });
      checkVersion({ kind: "engine", version }, wanted);
      const out: SampledReply[][] = [];
      for (const conversation of asked) {
        const group: SampledReply[] = [];
        for (let j = 0; j < params.n; j++) {
          const text = reply(conversation, calls++).slice(0, params.maxTokens);
          group.push({ text, finishReason: "stop", ...(params.temperature > 0 ? { logprobs: await learnerLogprobs(worker, conversation, text, params.temperature, options.offset ?? 0) } : {}) });
        }
        conversations.push([...conversation]);
        out.push(group);
      }
      return out;
    },
    async close() {},
  };
}

/** The learner's log-probs (+ offset) of `text` as the assistant's reply, with the learner's token texts. */
async function learnerLogprobs(worker: WorkerClient, conversation: readonly ChatMessage[], text: string, temperature: number, offset: number): Promise<TokenLogprob[] | undefined> {
  if (text === "") return undefined;
  const [rendered] = await worker.renderChat([[...conversation, { role: "assistant", content: text }]], false);
  const span = rendered!.spans.at(-1)!;
  const [row] = await worker.logprobs([{ tokens: rendered!.tokens.slice(0, span.end) }], false, temperature);
  // A reply with "é" is reported one entry per character, as a sampler with another tokenizer would: it cannot be
  // lined up with the learner's tokens.
  if (text.includes("é")) return [...text].map((c) => ({ text: c, logprob: -1 }));
  const { pieces } = await worker.decode([rendered!.tokens.slice(span.start, span.end)]);
  return pieces[0]!.map((piece, t) => ({ text: piece, logprob: row![span.start + t]! + offset }));
}

const reflections = ["I added instead of multiplying.", " A leading space, then words.", "Unicode é ✓ — and a dash.", "", "Two\nlines of reflection."];

describe("RRR with a sampler other than the worker (tiny model)", { timeout: 600_000 }, () => {
  let worker: WorkerClient;
  let dir: string;
  let firstPhase = true;
  // Retries pass when their text has an even length: the double answers "ab" and "abc" in turn, so every group of G = 2
  // has reward signal and every step updates.
  const parityTask: Task<ArithmeticRecord, Verdict> = {
    name: "parity",
    prompt: arithmeticPrompt,
    verify: (_record, output) => ({ correct: !firstPhase && output.length % 2 === 0, feedback: "parity", answer: null }),
    parseRecord: (v) => v as ArithmeticRecord,
  };
  const script = (conversation: readonly ChatMessage[], index: number): string => {
    const last = conversation.at(-1)?.content ?? "";
    if (conversation.length === 1) return "I think it is 3.";
    if (/Reflect on what went wrong/.test(last)) return reflections[index % reflections.length] as string;
    return index % 2 === 0 ? "ab" : "abc";
  };
  const options = (out: string, sampler: RolloutSampler, extra: Record<string, unknown> = {}): Parameters<typeof trainRrr>[1] => ({
    out,
    steps: 3,
    batchSize: 2,
    microBatch: 2,
    adam: { lr: 5e-2 },
    checkpointEvery: 1,
    seed: 5,
    maxLength: 512,
    config: {},
    fingerprint: { test: true },
    task: parityTask as Task<unknown, Verdict>,
    items: generateArithmetic({ seed: 3, count: 3 }),
    group: 2,
    feedback: "binary" as const,
    attempt: { maxTokens: 16, temperature: 0 },
    reflection: { maxTokens: 64, temperature: 0.7 },
    retry: { maxTokens: 8, temperature: 1 },
    klCoef: 0,
    clip: 0.2,
    sampler,
    onFirstAttempt: (done: number, total: number) => {
      firstPhase = done < total;
    },
    ...extra,
  });

  before(async () => {
    worker = await startTestWorker();
    dir = await tempDir("rk-sampler-");
  });
  after(async () => {
    await worker?.close();
  });

  test("the learner re-renders each sampled reflection: the datum's prompt is the conversation with the generation prompt, its weighted tokens spell the reflection", async () => {
    firstPhase = true;
    await worker.load(await tinyModel());
    const sampler = doubleSampler(worker, script);
    const file = path.join(dir, "batch.jsonl");
    await trainRrr(worker, { ...options(path.join(dir, "dry"), sampler), dumpBatch: file, onFirstAttempt: (done: number) => (firstPhase = done < 2) });
    const lines = readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l) as DumpedDatum);
    // 2 failures × G = 2, less the empty reflections (nothing to train on).
    const asked = sampler.conversations.filter((c) => /Reflect on what went wrong/.test(c.at(-1)?.content ?? ""));
    assert.equal(asked.length, 2);
    assert.ok(lines.length >= 3, `${lines.length} datums`);
    const prompts = await worker.renderChat(asked, true);
    const { pieces } = await worker.decode(prompts.map((p) => p.tokens));
    for (const line of lines) {
      const first = line.weights.indexOf(1);
      assert.ok(first > 0 && line.weights.slice(first).every((w) => w === 1), "the weighted tokens are one run at the end");
      assert.equal(line.tokens.filter((_, i) => line.weights[i] === 1).join(""), line.reflection, "the weighted tokens spell the reflection");
      assert.ok(reflections.includes(line.reflection));
      // The prompt part, token for token, is what the worker sampler samples after: the conversation rendered with the
      // generation prompt.
      assert.ok(
        pieces.some((p) => JSON.stringify(p) === JSON.stringify(line.tokens.slice(0, first))),
        `prompt part ${JSON.stringify(line.tokens.slice(first - 4, first))} is a conversation rendered with the generation prompt`,
      );
    }
    assert.ok(sampler.events.every((e) => !("generate" in e) || e.generate === 0), "everything sampled from version 0");
  });

  test("sync after every update, never a stale sample, and the mismatch is the sampler's offset from the learner's log-probs at the sampling temperature", async () => {
    firstPhase = true;
    await worker.load(await tinyModel());
    const sampler = doubleSampler(worker, script, { offset: 0.25 });
    const { metrics } = await trainRrr(worker, options(path.join(dir, "run"), sampler));
    assert.deepEqual(metrics.map((m) => m.updated), [1, 1, 1], "every step has signal (the parity double)");
    // Version 0 samples the first attempts and step 1; each update is synced before the next step samples.
    const syncs = sampler.events.flatMap((e) => ("sync" in e ? [e.sync] : []));
    assert.deepEqual(syncs, [1, 2]);
    for (const e of sampler.events) if ("generate" in e) assert.equal(e.generate, e.held);
    const order = sampler.events.map((e) => ("sync" in e ? `sync ${e.sync}` : `generate ${e.generate}`));
    assert.equal(order.indexOf("sync 1") < order.indexOf("generate 1") && order.lastIndexOf("generate 0") < order.indexOf("sync 1"), true, order.join(", "));
    for (const m of metrics) {
      assert.ok(Number(m.mismatchReflections) > 0 && Number(m.mismatchReflections) <= Number(m.reflections), JSON.stringify(m));
      assert.ok(Number(m.mismatchTokens) > Number(m.mismatchReflections));
      assert.ok(Math.abs(Number(m.mismatch) - 0.25) < 1e-4, `mismatch ${m.mismatch}`);
      assert.equal(typeof m.syncSeconds, "number");
      assert.equal(m.step === 1 ? m.syncSeconds : 0, 0, "no sync before step 1");
    }
    // Reflections spelled with other tokens than the learner's are not compared (the double's "Unicode é ✓").
    assert.ok(metrics.some((m) => Number(m.mismatchReflections) < Number(m.reflections)), JSON.stringify(metrics.map((m) => [m.mismatchReflections, m.reflections])));
  });

  test("a sampler that does not take the new weights is refused at the next step: never sampled stale", async () => {
    firstPhase = true;
    await worker.load(await tinyModel());
    const sampler = doubleSampler(worker, script, { forget: true });
    await assert.rejects(trainRrr(worker, options(path.join(dir, "stale"), sampler)), (error: unknown) => {
      assert.ok(error instanceof StaleSamplerError);
      assert.deepEqual([error.held, error.wanted], [0, 1]);
      assert.match(error.message, /the engine sampler holds the weights of optimizer step 0, the learner is at step 1 — sync it first/);
      return true;
    });
    // The worker's own sampler checks the same.
    await assert.rejects(workerSampler(worker).generate([[{ role: "user", content: "hi" }]], { n: 1, maxTokens: 2, temperature: 0, seed: 0 }, 3), StaleSamplerError);
  });

  test("a resumed run syncs the sampler to the restored weights before it samples anything", async () => {
    firstPhase = true;
    await worker.load(await tinyModel());
    const out = path.join(dir, "resume");
    const interrupt = new AbortController();
    await assert.rejects(trainRrr(worker, { ...options(out, doubleSampler(worker, script)), signal: interrupt.signal, onStep: (m: StepMetrics) => m.step === 2 && interrupt.abort(new Error("killed")) }), /killed/);
    await worker.load(await tinyModel());
    const sampler = doubleSampler(worker, script);
    const resumed = await trainRrr(worker, options(out, sampler));
    assert.deepEqual(resumed.metrics.map((m) => m.step), [1, 2, 3]);
    // Checkpoint at step 2 (two updates): the fresh sampler (version 0) is synced to 2 first, then samples step 3.
    assert.deepEqual(sampler.events[0], { sync: 2 });
    assert.ok(sampler.events.slice(1).every((e) => !("generate" in e) || e.generate === 2));
    assert.ok(Number(resumed.metrics[2]!.syncSeconds) >= 0);
  });
});
