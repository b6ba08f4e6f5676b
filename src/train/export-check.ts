import path from "node:path";
import { checkLoraAdapter, type LoraAdapter } from "../models/lora.js";
import type { TrainerBackend } from "./types.js";

/**
 * Log-probabilities of each token given the ones before it, under node-llama-cpp: entry t is log p(tokens[t] |
 * tokens[..t]), entry 0 is 0 — the worker's convention. The full next-token distribution is read at temperature 1
 * with no truncation. With `lora`, the GGUF LoRA adapter is applied on top of the model.
 */
export async function llamaCppLogprobs(modelPath: string, sequences: readonly (readonly number[])[], threads = 2, lora?: LoraAdapter): Promise<number[][]> {
  if (lora !== undefined) await checkLoraAdapter(modelPath, lora);
  const { getLlama } = await import("node-llama-cpp");
  const llama = await getLlama({ gpu: false, build: "never", logLevel: "error" as never, progressLogs: false });
  const model = await llama.loadModel({ modelPath });
  try {
    const longest = Math.max(...sequences.map((s) => s.length));
    const context = await model.createContext({
      contextSize: Math.max(256, longest + 16),
      threads,
      sequences: 1,
      ...(lora === undefined ? {} : { lora: { adapters: [{ filePath: path.resolve(lora.path), scale: lora.scale ?? 1 }] } }),
    });
    try {
      const out: number[][] = [];
      const sequence = context.getSequence();
      for (const tokens of sequences) {
        await sequence.clearHistory();
        const input = tokens.map((t, i) => (i < tokens.length - 1 ? ([t, { generateNext: { probabilities: true, options: { temperature: 1, topK: 0, topP: 1, minP: 0 } } }] as const) : t));
        const results = await sequence.controlledEvaluate(input as never);
        out.push(tokens.map((t, i) => (i === 0 ? 0 : Math.log(results[i - 1]?.next?.probabilities?.get(t as never) ?? 0))));
      }
      return out;
    } finally {
      await context.dispose();
    }
  } finally {
    await model.dispose();
  }
}

export interface ExportCheck {
  /** Tokens compared (positions after the first, over all sequences). */
  tokens: number;
  /** Mean and largest |Δ log p| between the exported GGUF (or the base plus the exported adapter) under node-llama-cpp and the trained PyTorch model. */
  exportedMeanAbs: number;
  exportedMaxAbs: number;
  /** The same for the base GGUF against the trained PyTorch model: what the export must beat when training moved it. */
  baseMeanAbs: number;
  /** The base GGUF against the untrained PyTorch model: the floor set by quantisation and kernels. */
  floorMeanAbs?: number;
}

/**
 * Compares next-token log-probabilities of the exported GGUF (node-llama-cpp) with the trained PyTorch model on the
 * same token sequences, and the base GGUF beside it: the export is right when it is as close to the trained model
 * as quantisation allows and closer than the base file is. With `adapter`, `exported` is a GGUF LoRA adapter, read on
 * top of `base`.
 */
export async function checkExport(backend: TrainerBackend, exported: string, base: string, sequences: readonly number[][], options: { lora: boolean; adapter?: boolean }): Promise<ExportCheck> {
  const torch = await backend.logprobs(sequences.map((tokens) => ({ tokens })));
  const untrained = options.lora ? await backend.logprobs(sequences.map((tokens) => ({ tokens })), true) : undefined;
  // An adapter file is read on top of the unchanged base; a merged export stands alone.
  const viaExport = options.adapter === true ? await llamaCppLogprobs(base, sequences, 2, { path: exported }) : await llamaCppLogprobs(exported, sequences);
  const viaBase = await llamaCppLogprobs(base, sequences);
  const diffs = (a: number[][], b: number[][]) => a.flatMap((row, s) => row.slice(1).map((v, t) => Math.abs(v - (b[s]?.[t + 1] ?? 0))));
  const exportedDiffs = diffs(viaExport, torch);
  const mean = (xs: number[]) => xs.reduce((x, y) => x + y, 0) / Math.max(1, xs.length);
  return {
    tokens: exportedDiffs.length,
    exportedMeanAbs: mean(exportedDiffs),
    exportedMaxAbs: Math.max(...exportedDiffs),
    baseMeanAbs: mean(diffs(viaBase, torch)),
    ...(untrained === undefined ? {} : { floorMeanAbs: mean(diffs(viaBase, untrained)) }),
  };
}
