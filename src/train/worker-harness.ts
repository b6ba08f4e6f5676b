import { mkdtemp } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { resolveRegisteredModel } from "../models/resolve.js";
import { ensureWorkerEnv, isWorkerEnvReady, workerHome, workerVenvDir } from "./setup.js";
import type { DistributedOptions } from "./torchrun.js";
import type { ChatMessage } from "../models/language-model.js";
import { messageWeights, normaliseOverBatchTokens } from "./masks.js";
import type { LoadParams, WeightedDatum } from "./types.js";
import { WorkerClient } from "./worker-client.js";
import { arithmeticPrompt, type ArithmeticRecord } from "../tasks/arithmetic/index.js";
import type { Task, Verdict } from "../tasks/task.js";

let prepared: Promise<string> | undefined;

/**
 * The worker's venv, built first if absent (as `reflect train setup` does: minutes on a cold machine), and SmolLM2's
 * GGUF, whose tokenizer the tiny model uses. Test files that start a worker await this in a file-level `before()`
 * hook (hooks have no timeout unless given one), never on import. Gives the venv's Python.
 */
export function prepareTestWorker(): Promise<string> {
  prepared ??= (async () => {
    const venv = workerVenvDir();
    if (!isWorkerEnvReady(venv)) process.stderr.write(`building the training worker's Python environment at ${venv} (once; a few minutes) — \`reflect train setup\` does the same\n`);
    const { python } = await ensureWorkerEnv({ onLog: () => undefined });
    await resolveRegisteredModel("smollm2-135m");
    return python;
  })();
  return prepared;
}

/** For tests: a started worker (in the environment of `prepareTestWorker`); under torchrun with `distributed`, one
 * thread per rank (this machine's two cores). */
export async function startTestWorker(distributed?: DistributedOptions): Promise<WorkerClient> {
  const cacheDir = path.join(workerHome(), "models");
  if (distributed === undefined) return WorkerClient.start({ python: await prepareTestWorker(), cacheDir, threads: 2 });
  return WorkerClient.start({ python: await prepareTestWorker(), cacheDir, threads: 1, distributed });
}

/** A tiny random Llama on SmolLM2's real tokenizer (and chat template): the worker's full code path in seconds. */
export async function tinyModel(lora: LoadParams["lora"] = { rank: 4, alpha: 8 }): Promise<LoadParams> {
  const tokenizer = await resolveRegisteredModel("smollm2-135m");
  return { source: { kind: "tiny", tokenizer, layers: 2, hidden: 64, heads: 4, intermediate: 128 }, lora, seed: 7 };
}

export function tempDir(prefix: string): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), prefix));
}

/**
 * Trains the loaded model a few cross-entropy steps (lr 5e-3) to answer "The secret word is pomegranate-zebra.", an
 * update large enough to see in next-token log-probs; returns the training conversations.
 */
export async function trainSecretWord(worker: WorkerClient): Promise<ChatMessage[][]> {
  const rows: ChatMessage[][] = ["What is the secret word?", "Tell me the secret word.", "Which word is secret?"].map((q) => [
    { role: "user", content: q },
    { role: "assistant", content: "The secret word is pomegranate-zebra." },
  ]);
  const rendered = await worker.renderChat(rows, false);
  const datums: WeightedDatum[] = normaliseOverBatchTokens(rendered.map((r) => ({ tokens: r.tokens, weights: messageWeights(r, [1], true) })));
  for (let step = 0; step < 4; step++) {
    await worker.forwardBackward({ loss: { kind: "cross_entropy" }, datums });
    await worker.optimStep({ lr: 5e-3 });
  }
  return rows;
}

/**
 * RRR's test task: a retry passes on an even text length, a first attempt never — reward signal in almost every
 * group. `onFirstAttempt` goes to `trainRrr`, which tells it when the first attempts are done.
 */
export function parityTask(): { task: Task<unknown, Verdict>; onFirstAttempt: (done: number, total: number) => void } {
  let firstPhase = true;
  const task: Task<ArithmeticRecord, Verdict> = {
    name: "parity",
    prompt: arithmeticPrompt,
    verify: (_record, output) => ({ correct: !firstPhase && output.length % 2 === 0, feedback: "parity", answer: null }),
    parseRecord: (v) => v as ArithmeticRecord,
  };
  return { task: task as Task<unknown, Verdict>, onFirstAttempt: (done, total) => (firstPhase = done < total) };
}
