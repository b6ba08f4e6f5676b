/**
 * The engine sampler on the real SmolLM2-135M (Q4_1 GGUF) beside the worker training a LoRA adapter on the same file:
 * after a few deliberately strong SFT steps and a sync, the engine's log-probs of what it samples are those of the
 * learner with the adapter (to the Q4_1 floor), far from the learner's with the adapter off; a short RRR run killed and
 * resumed re-syncs the engine to the restored weights before it samples.
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { ChatMessage } from "../models/language-model.js";
import { resolveRegisteredModel } from "../models/resolve.js";
import { arithmeticPrompt, generateArithmetic, type ArithmeticRecord } from "../tasks/arithmetic/index.js";
import type { Task, Verdict } from "../tasks/task.js";
import { inferenceChatTemplate } from "./chat-template.js";
import { openEngineSampler } from "./engine-sampler.js";
import { StaleSamplerError, type RolloutSampler } from "./rollout-sampler.js";
import { trainRrr } from "./rrr.js";
import type { LoadParams } from "./types.js";
import type { WorkerClient } from "./worker-client.js";
import { prepareTestWorker, startTestWorker, tempDir, trainSecretWord } from "./worker-harness.js";

// Built (or found) before the first test, not on import: outside every test's timeout, and only when this file runs.
before(() => prepareTestWorker());

describe("the engine sampler on SmolLM2-135M", { timeout: 600_000 }, () => {
  let worker: WorkerClient;
  let base: string;
  let load: LoadParams;
  let dir: string;
  before(async () => {
    base = await resolveRegisteredModel("smollm2-135m");
    const { template } = await inferenceChatTemplate(base);
    // As `reflect train` loads it: the learner renders prompts as node-llama-cpp does.
    load = { source: { kind: "gguf", path: base }, lora: { rank: 8, alpha: 16 }, seed: 1, ...(template === undefined ? {} : { chatTemplate: template }) };
    dir = await tempDir("rk-engine-");
    worker = await startTestWorker();
  });
  after(async () => {
    await worker?.close();
  });

  test("after a sync the engine samples the learner's weights: |Δ log p| at the Q4_1 floor with the adapter, far without it", async (t) => {
    await worker.load(load);
    const folder = path.join(dir, "adapters");
    const sampler = await openEngineSampler({ learner: worker, modelPath: base, dir: folder, contextSize: 512, threads: 2 });
    try {
      const ask: ChatMessage[][] = [[{ role: "user", content: "Say the secret word." }]];
      const params = { n: 2, maxTokens: 12, temperature: 1, seed: 3 };
      await trainSecretWord(worker);
      // Four optimizer steps: the learner is at version 4, the engine still at 0 — sampling now is refused.
      await assert.rejects(sampler.generate(ask, params, 4), StaleSamplerError);
      const started = performance.now();
      await sampler.sync(4);
      t.diagnostic(`sync (exportLora f16 + setLora): ${((performance.now() - started) / 1000).toFixed(2)} s`);
      assert.deepEqual(readdirSync(folder), ["adapter-1-step-4.gguf"]);
      assert.equal(sampler.engine.modelId, "embedded:SmolLM2-135M-Instruct.Q4_1.gguf+lora:adapter-1-step-4.gguf");

      const [replies] = await sampler.generate(ask, params, 4);
      t.diagnostic(`replies: ${JSON.stringify(replies!.map((r) => r.text))}`);
      const diffs = { policy: [] as number[], reference: [] as number[] };
      for (const r of replies!) {
        const [rendered] = await worker.renderChat([[...ask[0]!, { role: "assistant", content: r.text }]], false);
        const span = rendered!.spans.at(-1)!;
        // The datum's prompt part is the conversation rendered with the generation prompt, token for token.
        const [prompt] = await worker.renderChat(ask, true);
        assert.deepEqual(rendered!.tokens.slice(0, span.start), prompt!.tokens);
        const { pieces } = await worker.decode([rendered!.tokens.slice(span.start, span.end)]);
        assert.deepEqual(r.logprobs?.map((l) => l.text), pieces[0], "the engine's tokens are the learner's");
        const datum = [{ tokens: rendered!.tokens.slice(0, span.end) }];
        const [policy] = await worker.logprobs(datum, false, 1);
        const [reference] = await worker.logprobs(datum, true, 1);
        r.logprobs!.forEach((l, i) => {
          diffs.policy.push(Math.abs(l.logprob - policy![span.start + i]!));
          diffs.reference.push(Math.abs(l.logprob - reference![span.start + i]!));
        });
      }
      const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
      t.diagnostic(`mean |Δ log p| over ${diffs.policy.length} tokens: learner with the adapter ${mean(diffs.policy).toFixed(4)}, with it off ${mean(diffs.reference).toFixed(4)}`);
      assert.ok(diffs.policy.length >= 6);
      // The Q4_1 floor on SmolLM2 is about 0.04 (lora-export.worker.model.test.ts); last measured here 0.032 vs 0.665.
      assert.ok(mean(diffs.policy) < 0.15, `with the adapter ${mean(diffs.policy)}`);
      assert.ok(mean(diffs.reference) > 4 * mean(diffs.policy), `with the adapter off ${mean(diffs.reference)}`);

      // Back to the base: the adapter file is removed (and freed in the engine).
      await sampler.sync(0);
      assert.deepEqual(readdirSync(folder), []);
      assert.equal(sampler.engine.lora, undefined);
    } finally {
      await sampler.close();
    }
    assert.ok(!existsSync(folder), "close removes the sampler's folder");
  });

  test("train rrr on the engine: mismatch and sync times per step; killed after step 1 and resumed, the fresh engine is synced to the checkpoint first", async (t) => {
    let firstPhase = true;
    // Retries pass on an even text length: reward signal in almost every group, so step 1 almost surely updates.
    const parity: Task<ArithmeticRecord, Verdict> = {
      name: "parity",
      prompt: arithmeticPrompt,
      verify: (_record, output) => ({ correct: !firstPhase && output.length % 2 === 0, feedback: "parity", answer: null }),
      parseRecord: (v) => v as ArithmeticRecord,
    };
    const out = path.join(dir, "rrr");
    const options = (steps: number, sampler: RolloutSampler): Parameters<typeof trainRrr>[1] => ({
      out,
      steps,
      batchSize: 2,
      microBatch: 4,
      adam: { lr: 1e-3 },
      checkpointEvery: 1,
      seed: 2,
      maxLength: 512,
      config: {},
      fingerprint: { test: true },
      task: parity as Task<unknown, Verdict>,
      items: generateArithmetic({ seed: 3, count: 2 }),
      group: 4,
      feedback: "binary",
      attempt: { maxTokens: 12, temperature: 0 },
      reflection: { maxTokens: 16, temperature: 1 },
      retry: { maxTokens: 8, temperature: 1 },
      klCoef: 0,
      clip: null,
      sampler,
      onFirstAttempt: (done, total) => (firstPhase = done < total),
    });
    const open = () => openEngineSampler({ learner: worker, modelPath: base, dir: path.join(out, "sampler"), contextSize: 512, threads: 2 });

    await worker.load(load);
    const first = await open();
    let one;
    try {
      ({ metrics: one } = await trainRrr(worker, options(1, first)));
    } finally {
      await first.close();
    }
    // A fresh learner and engine, as a rerun of a killed command has: restored to step 1, the engine synced before step 2.
    await worker.load(load);
    const second = await open();
    const syncs: number[] = [];
    const watched: RolloutSampler = {
      specificationVersion: "v1",
      kind: "engine",
      get version() {
        return second.version;
      },
      logprobsAt: second.logprobsAt,
      sync: async (v) => {
        syncs.push(v);
        await second.sync(v);
      },
      generate: (conversations, params, version) => second.generate(conversations, params, version),
      close: () => second.close(),
    };
    let metrics;
    try {
      ({ metrics } = await trainRrr(worker, options(2, watched)));
    } finally {
      await second.close();
    }
    t.diagnostic(JSON.stringify(metrics.map(({ step, updated, reward, mismatch, mismatchTokens, mismatchReflections, reflections, syncSeconds, sampleSeconds, trainSeconds }) => ({ step, updated, reward, mismatch, mismatchTokens, mismatchReflections, reflections, syncSeconds, sampleSeconds, trainSeconds }))));
    assert.deepEqual(metrics.map((m) => m.step), [1, 2]);
    assert.equal(metrics[0]!.loss, one[0]!.loss, "step 1 was kept from the first run");
    // Step 1's update is optimizer step 1: the resumed engine is synced to it, once, before step 2 samples.
    assert.deepEqual(syncs, one[0]!.updated === 1 ? [1] : []);
    if (one[0]!.updated === 1) assert.ok(Number(metrics[1]!.syncSeconds) > 0);
    for (const m of metrics) {
      assert.ok(Number(m.mismatchReflections) > 0, `some reflection lined up: ${JSON.stringify(m)}`);
      assert.ok(Number(m.mismatch) > 0 && Number(m.mismatch) < 0.3, `mismatch ${m.mismatch}`);
      assert.ok(Number(m.sampleSeconds) > 0 && Number(m.trainSeconds) >= 0);
    }
    assert.ok(!existsSync(path.join(out, "sampler")), "closing the sampler removed its adapter files");
  });
});
