import { mulberry32 } from "../util/random.js";

/**
 * The project's one bootstrap of a mean (the sampled benchmarks', the paired comparison's and the theatre metrics'):
 * a 95 % percentile interval from a fixed number of resamples drawn with mulberry32 from a fixed seed, so the same
 * values always give the same interval.
 */

/** A mean over items and its 95 % bootstrap interval. */
export interface Estimate {
  mean: number;
  lo: number;
  hi: number;
  /** Items. */
  n: number;
}

export const bootstrapResamples = 4000;
export const bootstrapSeed = 12345;

/** Mean of `values` and its 95 % percentile-bootstrap interval over them; null when there are none. */
export function bootstrapMean(values: readonly number[], options: { resamples?: number; seed?: number } = {}): Estimate | null {
  if (values.length === 0) return null;
  const resamples = options.resamples ?? bootstrapResamples;
  const random = mulberry32(options.seed ?? bootstrapSeed);
  const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const means: number[] = [];
  for (let b = 0; b < resamples; b++) means.push(mean(values.map(() => values[Math.floor(random() * values.length)] as number)));
  means.sort((a, b) => a - b);
  return { mean: mean(values), lo: means[Math.floor(0.025 * resamples)] as number, hi: means[Math.floor(0.975 * resamples)] as number, n: values.length };
}

