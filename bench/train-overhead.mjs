// Training throughput through reflectkit's worker (TypeScript → JSON lines → PyTorch) against a bare PyTorch loop on
// the same model, LoRA config, batch and loss (BENCHMARKS.md). Alternates bare and worker runs so a drift in
// machine load hits both. Usage: node bench/train-overhead.mjs [steps=6] [rounds=2] [batch=8]
import { readdirSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { execFile } from "node:child_process";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { resolveRegisteredModel } from "../dist/models/resolve.js";
import { messageWeights, normaliseOverBatchTokens } from "../dist/train/masks.js";
import { ensureWorkerEnv, workerHome } from "../dist/train/setup.js";
import { WorkerClient } from "../dist/train/worker-client.js";

const [steps = 6, rounds = 2, batchSize = 8] = process.argv.slice(2).map(Number);
const lora = { rank: 16, alpha: 32, targetModules: ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"] };
const { python } = await ensureWorkerEnv();
const base = await resolveRegisteredModel("smollm2-135m");
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const worker = await WorkerClient.start({ python, cacheDir: path.join(workerHome(), "models"), threads: 2 });
await worker.load({ source: { kind: "gguf", path: base }, lora, seed: 0 });
const conversations = Array.from({ length: batchSize }, (_, i) => [
  { role: "user", content: `What is ${i + 3} * ${i + 4}? Give the final answer inside <answer></answer> tags.` },
  { role: "assistant", content: `${i + 3} * ${i + 4} = ${(i + 3) * (i + 4) + 1}.` },
  { role: "user", content: "Your answer is incorrect.\n\nReflect on what went wrong and write a short explanation (under 100 words) that will help you do better next time. Do not give the final answer yet." },
  { role: "assistant", content: `I multiplied ${i + 3} by ${i + 4} and then added one by mistake. Next time I will multiply the two numbers carefully, check the product digit by digit, and not add anything to it afterwards.` },
]);
const rendered = await worker.renderChat(conversations, false);
const datums = normaliseOverBatchTokens(rendered.map((r) => ({ tokens: r.tokens, weights: messageWeights(r, [3], true) })));
const tokens = datums.reduce((a, d) => a + d.tokens.length, 0);
const folder = readdirSync(path.join(workerHome(), "models")).find((f) => f.startsWith("SmolLM2-135M-Instruct.Q4_1-") && !f.endsWith(".partial"));
const spec = path.join(os.tmpdir(), "reflectkit-overhead-batch.json");
await writeFile(spec, JSON.stringify({ folder: path.join(workerHome(), "models", folder), rank: lora.rank, alpha: lora.alpha, targets: lora.targetModules, datums, microBatch: 4, steps }));

const bare = [];
const viaWorker = [];
for (let round = 0; round < rounds; round++) {
  const { stdout } = await promisify(execFile)(python, [path.join(import.meta.dirname, "torch-loop.py"), spec], { env: { ...process.env, OMP_NUM_THREADS: "2", TRANSFORMERS_VERBOSITY: "error", PYTHONWARNINGS: "ignore" }, maxBuffer: 1 << 20 });
  bare.push(...JSON.parse(stdout.trim().split("\n").at(-1)).seconds.slice(1)); // the first step warms up
  for (let step = 0; step < steps; step++) {
    const started = performance.now();
    await worker.forwardBackward({ loss: { kind: "cross_entropy" }, datums }, 4);
    await worker.optimStep({ lr: 1e-4 });
    if (step > 0) viaWorker.push((performance.now() - started) / 1000);
  }
}
await worker.close();
const result = {
  model: "SmolLM2-135M-Instruct (Q4_1 GGUF, dequantised to float32), LoRA r16 on all linear layers",
  batch: `${batchSize} sequences, ${tokens} tokens, micro-batch 4`,
  torch_threads: 2,
  steps_timed: { bare: bare.length, worker: viaWorker.length },
  median_step_seconds: { bare: median(bare), worker: median(viaWorker) },
  tokens_per_second: { bare: tokens / median(bare), worker: tokens / median(viaWorker) },
  overhead_ratio: median(viaWorker) / median(bare),
};
console.log(JSON.stringify(result, null, 2));
