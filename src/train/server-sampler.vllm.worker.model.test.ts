/**
 * The server sampler on a real vLLM server (CPU build, runtime LoRA on) serving SmolLM2-135M, beside the worker
 * training a LoRA adapter on the same model: after a few deliberately strong SFT steps and a sync, vLLM's log-probs
 * of what it samples are the learner's with the adapter (to the bfloat16 floor), far from the learner's with it off;
 * the replaced adapter is unloaded (vLLM refuses its name); `train rrr` samples every step from the adapter of the
 * learner's weights, and its reflections' log-probs line up token for token with the learner's.
 * The learner renders prompts with the GGUF's own chat template, the one vLLM's converted folder carries.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { ChatMessage } from "../models/language-model.js";
import { resolveRegisteredModel } from "../models/resolve.js";
import { generateArithmetic } from "../tasks/arithmetic/index.js";
import type { VllmServer } from "../vllm/server.js";
import { startTestVllm, VLLM_TEST_MODEL, vllmSkip } from "../vllm/vllm-harness.js";
import { StaleSamplerError } from "./rollout-sampler.js";
import { trainRrr } from "./rrr.js";
import { openServerSampler } from "./server-sampler.js";
import type { LoadParams } from "./types.js";
import type { WorkerClient } from "./worker-client.js";
import { prepareTestWorker, parityTask, startTestWorker, tempDir, trainSecretWord } from "./worker-harness.js";

/** The names vLLM serves now (`GET /v1/models`). */
async function served(server: VllmServer): Promise<string[]> {
  const body = (await (await fetch(`${server.baseUrl}/models`)).json()) as { data: Array<{ id: string }> };
  return body.data.map((m) => m.id).sort();
}

describe("the server sampler on vLLM with SmolLM2-135M", { skip: vllmSkip(), timeout: 900_000 }, () => {
  let worker: WorkerClient;
  let server: VllmServer;
  let load: LoadParams;
  let dir: string;
  before(async () => {
    await prepareTestWorker();
    load = { source: { kind: "gguf", path: await resolveRegisteredModel("smollm2-135m") }, lora: { rank: 8, alpha: 16 }, seed: 1 };
    dir = await tempDir("rk-vllm-sampler-");
    server = await startTestVllm({ enableLora: true });
    worker = await startTestWorker();
  });
  after(async () => {
    await worker?.close();
    await server?.close();
  });

  test("after a sync vLLM samples the learner's weights: |Δ log p| at the bfloat16 floor with the adapter, far without it", async (t) => {
    await worker.load(load);
    const folder = path.join(dir, "adapters");
    const sampler = await openServerSampler({ learner: worker, baseUrl: server.baseUrl, baseModel: VLLM_TEST_MODEL, dir: folder, prefix: "rk-test", concurrency: 2 });
    try {
      const ask: ChatMessage[][] = [[{ role: "user", content: "Say the secret word." }]];
      const params = { n: 3, maxTokens: 12, temperature: 1, seed: 3 };
      const [before] = await sampler.generate(ask, params, 0);
      assert.ok(before!.every((r) => r.text.length > 0 && r.logprobs !== undefined));
      await trainSecretWord(worker);
      await assert.rejects(sampler.generate(ask, params, 4), StaleSamplerError);
      const started = performance.now();
      await sampler.sync(4);
      t.diagnostic(`sync (exportPeft + load_lora_adapter): ${((performance.now() - started) / 1000).toFixed(2)} s`);
      assert.deepEqual(await served(server), ["rk-test-step-4-1", VLLM_TEST_MODEL]);

      const [replies] = await sampler.generate(ask, params, 4);
      t.diagnostic(`replies before training: ${JSON.stringify(before!.map((r) => r.text))}; after: ${JSON.stringify(replies!.map((r) => r.text))}`);
      const diffs = { policy: [] as number[], reference: [] as number[] };
      for (const r of replies!) {
        const [rendered] = await worker.renderChat([[...ask[0]!, { role: "assistant", content: r.text }]], false);
        const span = rendered!.spans.at(-1)!;
        const [prompt] = await worker.renderChat(ask, true);
        assert.deepEqual(rendered!.tokens.slice(0, span.start), prompt!.tokens);
        const { pieces } = await worker.decode([rendered!.tokens.slice(span.start, span.end)]);
        // vLLM's tokens are the learner's as far as the learner's tokenizer, re-reading the text, splits it alike:
        // a run the model sampled piecewise ("-" seven times) re-reads as one token ("-------"). Up to the first such
        // split the two condition on the same tokens, so their log-probs compare.
        const sampled = r.logprobs!.map((l) => l.text);
        let aligned = 0;
        while (aligned < pieces[0]!.length && sampled[aligned] === pieces[0]![aligned]) aligned += 1;
        assert.equal(sampled.join(""), pieces[0]!.join(""), "the same text");
        const datum = [{ tokens: rendered!.tokens.slice(0, span.end) }];
        const [policy] = await worker.logprobs(datum, false, 1);
        const [reference] = await worker.logprobs(datum, true, 1);
        for (let i = 0; i < aligned; i++) {
          diffs.policy.push(Math.abs(r.logprobs![i]!.logprob - policy![span.start + i]!));
          diffs.reference.push(Math.abs(r.logprobs![i]!.logprob - reference![span.start + i]!));
        }
      }
      const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
      t.diagnostic(`mean |Δ log p| over ${diffs.policy.length} tokens: learner with the adapter ${mean(diffs.policy).toFixed(4)}, with it off ${mean(diffs.reference).toFixed(4)}`);
      assert.ok(diffs.policy.length >= 6);
      assert.ok(mean(diffs.policy) < 0.25, `with the adapter ${mean(diffs.policy)}`);
      assert.ok(mean(diffs.reference) > 3 * mean(diffs.policy), `with the adapter off ${mean(diffs.reference)}`);

      // Back to the base: the adapter is unloaded from vLLM and its folder removed.
      await sampler.sync(0);
      assert.deepEqual(await served(server), [VLLM_TEST_MODEL]);
      const gone = await fetch(`${server.baseUrl}/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "rk-test-step-4-1", messages: ask[0], max_tokens: 4 }) });
      assert.equal(gone.status, 404);
      await gone.body?.cancel();
    } finally {
      await sampler.close();
    }
    assert.ok(!existsSync(folder), "close removes every folder it wrote");
  });

  test("train rrr samples every step from the adapter of the learner's weights, its reflections lined up with the learner's tokens", async (t) => {
    await worker.load(load);
    // Retries pass on an even text length: reward signal in almost every group, so step 1 almost surely updates.
    const parity = parityTask();
    const out = path.join(dir, "rrr");
    const sampler = await openServerSampler({ learner: worker, baseUrl: server.baseUrl, baseModel: VLLM_TEST_MODEL, dir: path.join(out, "sampler"), prefix: "rk-run", concurrency: 4 });
    let metrics;
    try {
      ({ metrics } = await trainRrr(worker, {
        out,
        steps: 2,
        batchSize: 2,
        microBatch: 4,
        adam: { lr: 1e-3 },
        checkpointEvery: 1,
        seed: 2,
        maxLength: 512,
        config: {},
        fingerprint: { test: true },
        task: parity.task,
        items: generateArithmetic({ seed: 3, count: 2 }),
        group: 4,
        feedback: "binary",
        attempt: { maxTokens: 12, temperature: 0 },
        reflection: { maxTokens: 16, temperature: 1 },
        retry: { maxTokens: 8, temperature: 1 },
        klCoef: 0,
        clip: null,
        sampler,
        onFirstAttempt: parity.onFirstAttempt,
      }));
      // Step 1 updated (four retries per item of random parity: no update about one time in 64), so step 2 sampled
      // from the adapter of that update, loaded until the sampler closes.
      assert.equal(metrics[0]!.updated, 1, JSON.stringify(metrics[0]));
      assert.deepEqual(await served(server), ["rk-run-step-1-1", VLLM_TEST_MODEL]);
    } finally {
      await sampler.close();
    }
    t.diagnostic(JSON.stringify(metrics.map(({ step, updated, reward, mismatch, mismatchTokens, mismatchReflections, reflections, syncSeconds, sampleSeconds, trainSeconds }) => ({ step, updated, reward, mismatch, mismatchTokens, mismatchReflections, reflections, syncSeconds, sampleSeconds, trainSeconds }))));
    assert.deepEqual(metrics.map((m) => m.step), [1, 2]);
    assert.ok(Number(metrics[1]!.syncSeconds) > 0, "step 2 synced vLLM to step 1's adapter");
    for (const m of metrics) {
      assert.ok(Number(m.reflections) > 0, JSON.stringify(m));
      // vLLM's tokens are the learner's: reflections line up and the mismatch is a number near the bfloat16 floor.
      assert.ok(Number(m.mismatchReflections) > 0, `some reflection lined up: ${JSON.stringify(m)}`);
      assert.ok(Number(m.mismatch) > 0 && Number(m.mismatch) < 0.5, `mismatch ${m.mismatch}`);
    }
    assert.deepEqual(await served(server), [VLLM_TEST_MODEL], "close unloads the last adapter");
    assert.ok(!existsSync(path.join(out, "sampler")), "closing the sampler removed its adapter folders");
  });
});
