import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { after, before, describe, test } from "node:test";
import { getLlama, readGgufFileInfo } from "node-llama-cpp";
import { InputError } from "../errors.js";
import type { Episode } from "../loops/types.js";
import { loadEmbeddedModel } from "../models/embedded.js";
import { resolveRegisteredModel } from "../models/resolve.js";
import { checkExport, llamaCppLogprobs } from "./export-check.js";
import type { WorkerClient } from "./worker-client.js";
import { prepareTestWorker, startTestWorker, tempDir, trainSecretWord } from "./worker-harness.js";

// Builds the worker's venv if absent: at module level, outside every test timeout (minutes on a cold machine).
// Built (or found) before the first test, not on import: outside every test's timeout, and only when this file runs.
before(() => prepareTestWorker());

// The real SmolLM2-135M-Instruct (Q4_1 GGUF) with a LoRA adapter on all seven linear layers of each block (q and k
// included, whose B matrices llama.cpp's layout permutes), written as a GGUF LoRA file and applied by node-llama-cpp
// on top of the unchanged Q4_1 base.

const LAYERS = 30;
const BIN = path.resolve(import.meta.dirname, "..", "..", "bin", "reflect.js");
const execFileAsync = promisify(execFile);
const TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"];

describe("GGUF LoRA export of a SmolLM2 adapter", { timeout: 900_000 }, () => {
  let worker: WorkerClient;
  let base: string;
  let dir: string;
  before(async () => {
    base = await resolveRegisteredModel("smollm2-135m");
    dir = await tempDir("rk-lora-");
    worker = await startTestWorker();
    await worker.load({ source: { kind: "gguf", path: base }, lora: { rank: 8, alpha: 16, targetModules: TARGETS }, seed: 1 });
  });
  after(async () => {
    await worker?.close();
  });

  test("the file has llama.cpp's adapter keys and A/B shapes, and a zero adapter leaves the base's log-probs exactly as they were", async () => {
    const out = path.join(dir, "zero.gguf");
    const exported = await worker.exportLora(out, "f16");
    assert.deepEqual({ ...exported, path: undefined }, { path: undefined, architecture: "llama", tensors: 2 * 7 * LAYERS, layers: 7 * LAYERS, rank: 8, alpha: 16, dtype: "f16" });
    const info = await readGgufFileInfo(out, { sourceType: "filesystem", logWarnings: false });
    const meta = info.metadata as unknown as { general: { type: string; architecture: string }; adapter: { type: string; lora: { alpha: number } } };
    assert.deepEqual([meta.general.type, meta.general.architecture, meta.adapter.type, meta.adapter.lora.alpha], ["adapter", "llama", "lora", 16]);
    const dims = new Map((info.tensorInfo ?? []).map((t) => [t.name, t.dimensions.map(Number)]));
    // GGUF dims (ne): A is [n_in, r], B is [r, n_out] — hidden 576, 3 KV heads of 64, MLP 1536.
    assert.deepEqual(dims.get("blk.0.attn_q.weight.lora_a"), [576, 8]);
    assert.deepEqual(dims.get("blk.0.attn_q.weight.lora_b"), [8, 576]);
    assert.deepEqual(dims.get("blk.0.attn_k.weight.lora_b"), [8, 192]);
    assert.deepEqual(dims.get("blk.29.ffn_down.weight.lora_a"), [1536, 8]);
    assert.deepEqual(dims.get("blk.29.ffn_gate.weight.lora_b"), [8, 1536]);
    assert.equal(dims.size, 2 * 7 * LAYERS);

    // A fresh adapter has B = 0: llama.cpp adds exactly zero to every product.
    const probe = await worker.renderChat([[{ role: "user", content: "What is 17 + 25?" }, { role: "assistant", content: "17 + 25 = 42." }]], false);
    const tokens = probe.map((r) => r.tokens);
    const [plain, withZero] = [await llamaCppLogprobs(base, tokens), await llamaCppLogprobs(base, tokens, 2, { path: out })];
    assert.ok(plain[0]!.length > 10);
    assert.deepEqual(withZero, plain);
  });

  test("Q4_1 base + the trained adapter under node-llama-cpp reads the PyTorch adapter model's log-probs", async (t) => {
    const rows = await trainSecretWord(worker);
    const adapter = path.join(dir, "trained.gguf");
    await worker.exportLora(adapter, "f32");
    const probe = await worker.renderChat([[{ role: "user", content: "Say the secret word." }, { role: "assistant", content: "The secret word is pomegranate-zebra." }], ...rows.slice(0, 1)], false);
    const sequences = probe.map((r) => r.tokens);
    const check = await checkExport(worker, adapter, base, sequences, { lora: true, adapter: true });
    // The floor: the Q4_1 file against the dequantised weights PyTorch runs in f32, with no adapter on either side.
    assert.ok(check.floorMeanAbs !== undefined && check.floorMeanAbs < 0.15, `quantisation floor ${check.floorMeanAbs}`);
    assert.ok(check.baseMeanAbs > 3 * (check.floorMeanAbs ?? 0), `training moved the model: the base alone is off by ${check.baseMeanAbs}`);
    // Tolerance: within 1.5× the floor + 0.02 nats (the merged f32 export meets the same bound in export.worker.model.test.ts).
    assert.ok(check.exportedMeanAbs < 1.5 * (check.floorMeanAbs ?? 0) + 0.02, `base + adapter ${check.exportedMeanAbs} vs floor ${check.floorMeanAbs}`);
    assert.ok(check.exportedMeanAbs < check.baseMeanAbs / 3, JSON.stringify(check));

    t.diagnostic(`mean |Δ log p| against PyTorch f32 with the adapter: ${JSON.stringify(check)}`);
    // The same weights merged into f16 and into Q4_1 are compared by bench/lora-export.sh (minutes more here).
  });

  test("the embedded model names its adapter in modelId and a scale of 0 is the base", async () => {
    const adapter = path.join(dir, "trained.gguf");
    const model = await loadEmbeddedModel({ modelPath: base, name: "smollm2-135m", lora: { path: adapter, scale: 0.5 }, contextSize: 512, threads: 2 });
    try {
      assert.equal(model.modelId, "embedded:smollm2-135m+lora:trained.gguf@0.5");
      const reply = await model.doGenerate({ messages: [{ role: "user", content: "Say the secret word." }], maxTokens: 8 });
      assert.ok(reply.text.length > 0);
    } finally {
      await model.close();
    }
    const probe = await worker.renderChat([[{ role: "user", content: "Say the secret word." }, { role: "assistant", content: "pomegranate-zebra" }]], false);
    const tokens = probe.map((r) => r.tokens);
    assert.deepEqual(await llamaCppLogprobs(base, tokens, 2, { path: adapter, scale: 0 }), await llamaCppLogprobs(base, tokens));
  });

  test("`reflect eval --lora-on retry`: the first attempt on the base alone, the reflection and the retry on base + adapter", async () => {
    const adapter = path.join(dir, "trained.gguf");
    const common = ["eval", "--task", "arithmetic", "--limit", "6", "--turns", "2", "--temperature", "0.7", "--seed", "3", "--max-tokens", "32", "--reflection-max-tokens", "24", "--threads", "2", "--json"];
    const env = { ...process.env };
    delete env.NODE_TEST_CONTEXT;
    const runCli = (out: string, extra: string[]) => execFileAsync(process.execPath, [BIN, ...common, "--out", out, ...extra], { timeout: 600_000, env });
    await runCli(path.join(dir, "eval-base"), []);
    await runCli(path.join(dir, "eval-retry"), ["--lora", adapter, "--lora-on", "retry"]);
    const episodes = (run: string) => readFileSync(path.join(dir, run, "episodes.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as Episode<unknown>).sort((a, b) => a.id.localeCompare(b.id));
    const base = episodes("eval-base");
    const retry = episodes("eval-retry");
    assert.equal(retry.length, 6);
    const adapted = "embedded:smollm2-135m+lora:trained.gguf";
    let reflected = 0;
    for (const [i, episode] of retry.entries()) {
      // The first attempt is the base run's, reply for reply (the same derived seed on the same weights).
      assert.equal(episode.attempts[0]?.call.model, "embedded:smollm2-135m");
      assert.equal(episode.attempts[0]?.call.output, base[i]?.attempts[0]?.call.output, episode.id);
      for (const attempt of episode.attempts.slice(1)) assert.equal(attempt.call.model, adapted);
      const reflection = episode.attempts[0]?.reflection?.call;
      if (reflection !== undefined) {
        reflected++;
        assert.equal(reflection.model, adapted);
      }
    }
    assert.ok(reflected > 0, "some first attempt failed, so the adapter reflected and retried");
    const config = JSON.parse(readFileSync(path.join(dir, "eval-retry", "config.json"), "utf8")) as Record<string, unknown>;
    assert.deepEqual([config.model_id, config.first_attempt_model_id, config.lora_on], [adapted, "embedded:smollm2-135m", "retry"]);
  });

  test("an adapter for another base is refused before llama.cpp sees it, naming the file and the mismatch", async () => {
    const gemma = await resolveRegisteredModel("gemma-3-270m");
    const adapter = path.join(dir, "trained.gguf");
    await assert.rejects(loadEmbeddedModel({ modelPath: gemma, lora: { path: adapter }, contextSize: 256, threads: 2 }), (error: unknown) => {
      assert.ok(error instanceof InputError);
      assert.match(error.message, /trained\.gguf: this LoRA adapter does not fit .*gemma.*: it is for a llama model, the base is gemma3 — pass the base model the adapter was trained on/);
      return true;
    });
    // What node-llama-cpp itself does with it: llama.cpp refuses the adapter (it logs why) and the context is not made.
    const llama = await getLlama({ gpu: false, build: "never", logLevel: "error" as never, progressLogs: false });
    const model = await llama.loadModel({ modelPath: gemma });
    try {
      await assert.rejects(model.createContext({ contextSize: 256, threads: 2, lora: { adapters: [{ filePath: adapter }] } }));
    } finally {
      await model.dispose();
    }
  });
});
