import assert from "node:assert/strict";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { resolveRegisteredModel } from "../models/resolve.js";
import { checkExport, llamaCppLogprobs } from "./export-check.js";
import type { WorkerClient } from "./worker-client.js";
import { prepareTestWorker, startTestWorker, tempDir, trainSecretWord } from "./worker-harness.js";

// Builds the worker's venv if absent: at module level, outside every test timeout (minutes on a cold machine).
// Built (or found) before the first test, not on import: outside every test's timeout, and only when this file runs.
before(() => prepareTestWorker());

// The real SmolLM2-135M-Instruct (Q4_1 GGUF) trained a few LoRA steps in the worker, exported back to GGUF, and read
// by node-llama-cpp: its next-token log-probabilities must match the trained PyTorch model within the quantisation
// floor, and be closer to it than the base file is.

describe("GGUF export of a trained SmolLM2", { timeout: 900_000 }, () => {
  let worker: WorkerClient;
  let base: string;
  before(async () => {
    base = await resolveRegisteredModel("smollm2-135m");
    worker = await startTestWorker();
    await worker.load({ source: { kind: "gguf", path: base }, lora: { rank: 8, alpha: 16, targetModules: ["q_proj", "v_proj"] }, seed: 1 });
  });
  after(async () => {
    await worker?.close();
  });

  test("an untrained model exported with --dtype base is the base file again: every tensor re-quantised to Q4_1 bit for bit", async () => {
    // A fresh LoRA adapter has B = 0, so the merged weights are the dequantised base weights; Q4_1 re-quantises them
    // to the same blocks, so node-llama-cpp must compute exactly the same log-probs from both files.
    const out = path.join(await tempDir("rk-export-"), "untrained.gguf");
    const exported = await worker.exportGguf(out, "base");
    assert.equal(exported.replaced, 2 * 30);
    const probe = await worker.renderChat([[{ role: "user", content: "What is 17 + 25?" }, { role: "assistant", content: "17 + 25 = 42." }]], false);
    const tokens = probe.map((r) => r.tokens);
    const [fromBase, fromExport] = [await llamaCppLogprobs(base, tokens), await llamaCppLogprobs(out, tokens)];
    assert.ok(fromBase[0]!.length > 10);
    assert.deepEqual(fromExport, fromBase);
  });

  test("node-llama-cpp reads the trained model's log-probs from the exported file", async () => {
    const rows = await trainSecretWord(worker);
    const out = path.join(await tempDir("rk-export-"), "trained.gguf");
    const exported = await worker.exportGguf(out, "f32");
    assert.equal(exported.architecture, "llama");
    assert.equal(exported.replaced, 2 * 30, "q_proj and v_proj of 30 layers");
    const probe = await worker.renderChat([[{ role: "user", content: "Say the secret word." }, { role: "assistant", content: "The secret word is pomegranate-zebra." }], ...rows.slice(0, 1)], false);
    const check = await checkExport(worker, out, base, probe.map((r) => r.tokens), { lora: true });
    assert.ok(check.floorMeanAbs !== undefined && check.floorMeanAbs < 0.15, `quantisation floor ${check.floorMeanAbs}`);
    assert.ok(check.baseMeanAbs > 3 * (check.floorMeanAbs ?? 0), `training moved the model: base file is off by ${check.baseMeanAbs}`);
    assert.ok(check.exportedMeanAbs < 1.5 * (check.floorMeanAbs ?? 0) + 0.02, `exported ${check.exportedMeanAbs} vs floor ${check.floorMeanAbs}`);
    assert.ok(check.exportedMeanAbs < check.baseMeanAbs / 3, JSON.stringify(check));

    // Quantised to Q8_0 the file is still far closer to the trained model than the base file is.
    const q8 = path.join(path.dirname(out), "trained-q8_0.gguf");
    await worker.exportGguf(q8, "q8_0");
    const checkQ8 = await checkExport(worker, q8, base, probe.map((r) => r.tokens), { lora: true });
    assert.ok(checkQ8.exportedMeanAbs < 1.5 * (checkQ8.floorMeanAbs ?? 0) + 0.02, JSON.stringify(checkQ8));
    assert.ok(checkQ8.exportedMeanAbs < checkQ8.baseMeanAbs / 3, JSON.stringify(checkQ8));
  });

  test("an unknown dtype is refused by name", async () => {
    await assert.rejects(worker.exportGguf(path.join(await tempDir("rk-export-"), "x.gguf"), "q2_k" as never), /dtype must be one of f32, f16, q8_0, q4_0, q4_1, base/);
  });
});
