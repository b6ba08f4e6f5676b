import { UsageError } from "../errors.js";
import { checkFingerprint } from "../record/durable-run.js";
import { normaliseOverBatchTokens } from "./masks.js";
import { renderWeighted, stepIndices, type Dataset, type SftRow } from "./datasets.js";
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

/** What a run folder is checked against: the common fingerprint, the batch settings and the objective's own. */
export function runFingerprint(options: Pick<CommonTrainOptions, "fingerprint" | "batchSize" | "maxLength" | "seed">, own: Record<string, unknown>): Record<string, unknown> {
  return { ...options.fingerprint, batchSize: options.batchSize, maxLength: options.maxLength, seed: options.seed, ...own };
}

/** The loop options of an objective: the common ones, with the objective's own configuration and fingerprint added. */
export function loopOptions(options: CommonTrainOptions, own: { config: Record<string, unknown>; fingerprint: Record<string, unknown>; info: Record<string, number>; onStart?: (from: number, optimizerSteps: number) => Promise<void> }): TrainLoopOptions {
  const { onStart, ...common } = options;
  return {
    ...common,
    config: { ...options.config, ...own.config },
    fingerprint: runFingerprint(options, own.fingerprint),
    onStart: async (from, optimizerSteps) => {
      await own.onStart?.(from, optimizerSteps);
      onStart?.(from, own.info);
    },
  };
}

export interface SftOptions extends CommonTrainOptions {
  /** Read and checked beforehand (`readSftData`), so a bad file fails before a worker starts. */
  data: Dataset<SftRow>;
}

/** The SFT part of a run's fingerprint. */
export function sftFingerprint(data: Dataset<SftRow>): Record<string, unknown> {
  return { objective: "sft", data: data.file, rows: data.rows.length };
}

/**
 * Supervised fine-tuning on conversations (ReflectEvo's D+ as `reflect data export --format trl-sft`, or any TRL
 * conversational SFT file): cross-entropy on the marked assistant turns only, averaged over the batch's loss tokens.
 */
export async function trainSft(backend: TrainerBackend, options: SftOptions): Promise<StepMetrics[]> {
  const { file, rows } = options.data;
  const fingerprint = sftFingerprint(options.data);
  await checkFingerprint(options.out, runFingerprint(options, fingerprint));
  const { datums, tooLong } = await renderWeighted(backend, rows, options.maxLength);
  const usable = datums.filter((d): d is WeightedDatum => d !== null);
  if (usable.length === 0) throw new UsageError(`${file}: no trainable rows (${rows.length} rows, ${tooLong} longer than --max-length ${options.maxLength})`);
  return trainLoop(
    backend,
    loopOptions(options, { config: { rows: rows.length, tooLong }, fingerprint, info: { rows: rows.length, usable: usable.length, tooLong } }),
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
