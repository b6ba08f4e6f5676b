import { UsageError } from "../errors.js";
import { normaliseOverBatchTokens } from "./masks.js";
import { readSftRows, renderWeighted, stepIndices } from "./datasets.js";
import { trainLoop, type StepMetrics, type TrainLoopOptions } from "./train-loop.js";
import type { AdamParams, TrainerBackend, WeightedDatum } from "./types.js";

/** What every objective takes: the loop's options (`config` and `fingerprint` hold the model, LoRA and optimizer
 * settings; each objective adds its own), the batch and the optimizer. */
export interface CommonTrainOptions extends Omit<TrainLoopOptions, "onStart"> {
  batchSize: number;
  microBatch: number;
  adam: AdamParams;
  seed: number;
  maxLength: number;
  onStart?: (fromStep: number, info: Record<string, number>) => void;
}

/** The loop options of an objective: the common ones, with the objective's own configuration and fingerprint added. */
export function loopOptions(options: CommonTrainOptions, own: { config: Record<string, unknown>; fingerprint: Record<string, unknown>; info: Record<string, number>; onStart?: (from: number) => Promise<void> }): TrainLoopOptions {
  const { onStart, ...common } = options;
  return {
    ...common,
    config: { ...options.config, ...own.config },
    fingerprint: { ...options.fingerprint, batchSize: options.batchSize, maxLength: options.maxLength, seed: options.seed, ...own.fingerprint },
    onStart: async (from) => {
      await own.onStart?.(from);
      onStart?.(from, own.info);
    },
  };
}

export interface SftOptions extends CommonTrainOptions {
  data: string;
}

/**
 * Supervised fine-tuning on conversations (ReflectEvo's D+ as `reflect data export --format trl-sft`, or any TRL
 * conversational SFT file): cross-entropy on the marked assistant turns only, averaged over the batch's loss tokens.
 */
export async function trainSft(backend: TrainerBackend, options: SftOptions): Promise<StepMetrics[]> {
  const rows = await readSftRows(options.data);
  const { datums, tooLong } = await renderWeighted(backend, rows, options.maxLength);
  const usable = datums.filter((d): d is WeightedDatum => d !== null);
  if (usable.length === 0) throw new UsageError(`${options.data}: no trainable rows (${rows.length} rows, ${tooLong} longer than --max-length ${options.maxLength})`);
  return trainLoop(
    backend,
    loopOptions(options, { config: { rows: rows.length, tooLong }, fingerprint: { objective: "sft", data: options.data, rows: rows.length }, info: { rows: rows.length, usable: usable.length, tooLong } }),
    async (n) => {
      const started = performance.now();
      const batch = normaliseOverBatchTokens(stepIndices(usable.length, options.batchSize, n, options.seed).map((i) => usable[i] as WeightedDatum));
      const result = await backend.forwardBackward({ loss: { kind: "cross_entropy" }, datums: batch }, options.microBatch);
      const { gradNorm } = await backend.optimStep(options.adam);
      const seconds = (performance.now() - started) / 1000;
      const lossTokens = batch.reduce((a, d) => a + d.weights.filter((w) => w !== 0).length, 0);
      return { step: n, loss: result.loss, tokens: result.tokens, lossTokens, gradNorm, seconds, trainSeconds: seconds, tokensPerSecond: result.tokens / seconds };
    },
  );
}
