import { existsSync } from "node:fs";
import { mkdir, readFile } from "node:fs/promises";
import path from "node:path";
import { UsageError } from "../errors.js";
import { checkFingerprint } from "../record/durable-run.js";
import { writeFileWhole } from "../record/log.js";
import { renderWeighted, stepIndices, type Dataset, type PreferenceRow } from "./datasets.js";
import { weightedSum } from "./masks.js";
import { loopOptions, runFingerprint, type CommonTrainOptions } from "./sft.js";
import { trainLoop, type StepMetrics } from "./train-loop.js";
import type { PreferenceDatum, TrainerBackend, WeightedDatum } from "./types.js";

export interface DpoOptions extends CommonTrainOptions {
  /** Read and checked beforehand (`readPreferenceData`), so a bad file fails before a worker starts. */
  data: Dataset<PreferenceRow>;
  beta: number;
}

/** The DPO part of a run's fingerprint. */
export function dpoFingerprint(data: Dataset<PreferenceRow>, beta: number): Record<string, unknown> {
  return { objective: "dpo", data: data.file, rows: data.rows.length, beta };
}

/**
 * DPO (Rafailov et al. 2023) on preference pairs (ReflectEvo's D± or D_pref as `--format trl-dpo`): the chosen and
 * the rejected answer share the prompt; the loss sees only each answer's tokens (and its end-of-turn token).
 * Reference log-probs are computed once, before the first step, from the untrained model, and kept in
 * `<out>/reference.json`, so a resumed run uses the same reference whatever it trains (LoRA or all weights).
 * Departure from TRL: the gradient is of the summed loss over the batch's pairs (the worker's losses are sums), not
 * the mean; Adam's update is nearly invariant to that scale. The reported loss is the batch mean.
 */
export async function trainDpo(backend: TrainerBackend, options: DpoOptions): Promise<StepMetrics[]> {
  const { file, rows } = options.data;
  const fingerprint = dpoFingerprint(options.data, options.beta);
  // Before reference.json is read or written: a folder of another run keeps its own.
  await checkFingerprint(options.out, runFingerprint(options, fingerprint));
  const sides = await renderWeighted(
    backend,
    rows.flatMap((r) => [
      { messages: [...r.prompt, r.chosen], trained: [r.prompt.length] },
      { messages: [...r.prompt, r.rejected], trained: [r.prompt.length] },
    ]),
    options.maxLength,
  );
  const pairs: { chosen: WeightedDatum; rejected: WeightedDatum; row: number }[] = [];
  for (let i = 0; i < rows.length; i++) {
    const chosen = sides.datums[2 * i];
    const rejected = sides.datums[2 * i + 1];
    if (chosen && rejected) pairs.push({ chosen, rejected, row: i });
  }
  if (pairs.length === 0) throw new UsageError(`${file}: no trainable pairs (${rows.length} rows; pairs with a side longer than --max-length ${options.maxLength} are left out)`);
  const reference = await referenceLogprobs(backend, options.out, pairs);
  return trainLoop(
    backend,
    loopOptions(options, { config: { rows: rows.length, pairs: pairs.length }, fingerprint, info: { rows: rows.length, pairs: pairs.length } }),
    async (n) => {
      const started = performance.now();
      const batch: PreferenceDatum[] = stepIndices(pairs.length, options.batchSize, n, options.seed).map((i) => {
        const pair = pairs[i]!;
        const ref = reference[i]!;
        return { chosen: pair.chosen, rejected: pair.rejected, refChosen: ref[0], refRejected: ref[1] };
      });
      const result = await backend.forwardBackward({ loss: { kind: "dpo", beta: options.beta }, datums: batch }, options.microBatch);
      const { gradNorm } = await backend.optimStep(options.adam);
      const seconds = (performance.now() - started) / 1000;
      const margins = result.margins ?? [];
      return {
        step: n,
        loss: result.loss / batch.length,
        tokens: result.tokens,
        gradNorm,
        seconds,
        trainSeconds: seconds,
        tokensPerSecond: result.tokens / seconds,
        accuracy: result.accuracy ?? null,
        margin: margins.reduce((a, b) => a + b, 0) / Math.max(1, margins.length),
      };
    },
  );
}

async function referenceLogprobs(backend: TrainerBackend, out: string, pairs: readonly { chosen: WeightedDatum; rejected: WeightedDatum }[]): Promise<[number, number][]> {
  await mkdir(out, { recursive: true });
  const file = path.join(out, "reference.json");
  if (existsSync(file)) {
    const saved = JSON.parse(await readFile(file, "utf8")) as [number, number][];
    if (saved.length === pairs.length) return saved;
  }
  const values: [number, number][] = [];
  for (let start = 0; start < pairs.length; start += 16) {
    const chunk = pairs.slice(start, start + 16);
    // Called before any step (and before a resume restores weights), so the current weights are the reference.
    const lp = await backend.logprobs(chunk.flatMap((p) => [p.chosen, p.rejected]), false);
    chunk.forEach((p, i) => values.push([weightedSum(lp[2 * i]!, p.chosen.weights), weightedSum(lp[2 * i + 1]!, p.rejected.weights)]));
  }
  await writeFileWhole(file, JSON.stringify(values));
  return values;
}
