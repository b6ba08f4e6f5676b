import { mkdtemp } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { resolveRegisteredModel } from "../models/resolve.js";
import { ensureWorkerEnv, workerHome } from "./setup.js";
import type { LoadParams } from "./types.js";
import { WorkerClient } from "./worker-client.js";

/** For tests: the worker environment (created on first use, as `reflect train setup` does) and a started worker. */
export async function startTestWorker(): Promise<WorkerClient> {
  const { python } = await ensureWorkerEnv({ onLog: () => undefined });
  return WorkerClient.start({ python, cacheDir: path.join(workerHome(), "models"), threads: 2 });
}

/** A tiny random Llama on SmolLM2's real tokenizer (and chat template): the worker's full code path in seconds. */
export async function tinyModel(lora: LoadParams["lora"] = { rank: 4, alpha: 8 }): Promise<LoadParams> {
  const tokenizer = await resolveRegisteredModel("smollm2-135m");
  return { source: { kind: "tiny", tokenizer, layers: 2, hidden: 64, heads: 4, intermediate: 128 }, lora, seed: 7 };
}

export function tempDir(prefix: string): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), prefix));
}
