import { UsageError } from "../errors.js";
import { normaliseOverBatchTokens } from "./masks.js";
import { readSftRows, renderWeighted, stepIndices } from "./datasets.js";
import { trainLoop, type StepMetrics } from "./train-loop.js";
import type { AdamParams, TrainerBackend, WeightedDatum } from "./types.js";

export interface CommonTrainOptions {
  out: string;
  steps: number;
  batchSize: number;
  microBatch: number;
  adam: AdamParams;
  checkpointEvery: number;
  seed: number;
  maxLength: number;
  /** The resolved configuration, written beside the run. */
  config: Record<string, unknown>;
  /** What determines results besides the objective's own options (model, LoRA, optimizer…). */
  fingerprint: Record<string, unknown>;
  signal?: AbortSignal;
  onStep?: (metrics: StepMetrics) => void;
  onStart?: (fromStep: number, info: Record<string, number>) => void;
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
    {
      out: options.out,
      steps: options.steps,
      checkpointEvery: options.checkpointEvery,
      config: { ...options.config, rows: rows.length, tooLong },
      fingerprint: { ...options.fingerprint, objective: "sft", data: options.data, rows: rows.length, batchSize: options.batchSize, maxLength: options.maxLength, seed: options.seed },
      ...(options.signal === undefined ? {} : { signal: options.signal }),
      ...(options.onStep === undefined ? {} : { onStep: options.onStep }),
      onStart: (from) => options.onStart?.(from, { rows: rows.length, usable: usable.length, tooLong }),
    },
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
