import { mkdir, rm } from "node:fs/promises";
import path from "node:path";
import { loadEmbeddedModel, type EmbeddedModel } from "../models/embedded.js";
import { versionedSampler, type RolloutSampler } from "./rollout-sampler.js";
import type { TrainerBackend } from "./types.js";

export interface EngineSamplerOptions {
  /** The learner: writes each new version of the adapter (`exportLora`, GGUF LoRA, f16). */
  learner: Pick<TrainerBackend, "exportLora">;
  /** The run's base GGUF, the file the learner loaded. */
  modelPath: string;
  /** Where the adapter files go; made on open, removed with everything in it on close. */
  dir: string;
  /** Context tokens per sequence (prompt + reply); default 2048. */
  contextSize?: number;
  /** CPU threads of the engine; default: the machine's. */
  threads?: number;
  /** Name in `modelId`. */
  name?: string;
  /** Sequences decoded together on the engine's one context (a step's requests queue for them); default 1. */
  sequences?: number;
}

/**
 * Rollouts on reflectkit's own inference engine: the embedded node-llama-cpp model on the run's base GGUF, with the
 * learner's LoRA adapter hot-swapped after each update. Each version is written to a new file (node-llama-cpp caches
 * adapters by path, so a file rewritten in place would be served stale), the engine switches to it (clearing every
 * sequence's KV cache), and the file of the version before is removed and its adapter freed. Version 0 is the base with
 * no adapter.
 * Sampling matches the worker's: softmax(logits / T) over the whole vocabulary — top-k 0 and top-p 1 are passed, as
 * node-llama-cpp otherwise applies top-k 40 and top-p 0.95 — and the log-probs it reports are of that distribution
 * (`logprobsAt: "sampling"`; embedded.ts, `recordConfidence`).
 */
export async function openEngineSampler(options: EngineSamplerOptions): Promise<RolloutSampler & { readonly engine: EmbeddedModel }> {
  await rm(options.dir, { recursive: true, force: true });
  await mkdir(options.dir, { recursive: true });
  const engine = await loadEmbeddedModel({
    modelPath: options.modelPath,
    ...(options.name === undefined ? {} : { name: options.name }),
    // One sequence unless asked. node-llama-cpp 3.21.1 mixed the tokens of sequences decoded together (a sequence went
    // on with another's sampled token and reported its probability — training on text the policy did not sample);
    // 3.22.1 keeps them apart (bench/engine-crosstalk.mjs; the embedded model test "each as if it ran alone").
    sequences: options.sequences ?? 1,
    contextSize: options.contextSize ?? 2048,
    ...(options.threads === undefined ? {} : { threads: options.threads }),
    // Every request is a fresh conversation on a clean sequence: its output does not depend on what ran before.
    prefixReuse: false,
  });
  let file: string | undefined;
  let serial = 0;
  const sampler = versionedSampler({
    kind: "engine",
    logprobsAt: "sampling",
    async switchTo(next: number) {
      const previous = file;
      if (next === 0) {
        await engine.setLora(undefined);
        file = undefined;
      } else {
        // A new name for every version, even one served before (a resumed run in the same process).
        const written = path.join(options.dir, `adapter-${++serial}-step-${next}.gguf`);
        await options.learner.exportLora(written, "f16");
        await engine.setLora({ path: written });
        file = written;
      }
      if (previous !== undefined) await rm(previous, { force: true });
    },
    model: () => engine,
    async release(switching) {
      try {
        await engine.close();
      } finally {
        // A file a switch in flight is still writing is removed with the rest.
        await switching;
        await rm(options.dir, { recursive: true, force: true });
      }
    },
  });
  return Object.assign(sampler, { engine });
}
