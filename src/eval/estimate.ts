import { mulberry32 } from "../util/random.js";

/** Why a figure could not be computed (no log-probs, no judge, no retries, …): reported as such, never as zero. */
export interface Unavailable {
  available: false;
  reason: string;
}

/** A share k/n with its Wilson 95% interval. */
export interface RateEstimate {
  available: true;
  n: number;
  k: number;
  value: number;
  ci95: [number, number];
}

/** A mean of n values with a 95% percentile-bootstrap interval; `ci95` is null when n = 1 (one value has no spread). */
export interface MeanEstimate {
  available: true;
  n: number;
  value: number;
  ci95: [number, number] | null;
}

/** A difference of two shares (a − b) with Newcombe's hybrid Wilson 95% interval. */
export interface DifferenceEstimate {
  available: true;
  value: number;
  ci95: [number, number];
}

export const BOOTSTRAP_RESAMPLES = 2000;
export const BOOTSTRAP_SEED = 17;

/**
 * The mean of `values` and its 95% percentile-bootstrap interval: `BOOTSTRAP_RESAMPLES` resamples drawn with the
 * project's mulberry32 from a fixed seed, so the same values always give the same interval (as bench/sampled-table.mjs).
 * The caller passes one value per episode, so resampling values is resampling episodes.
 */
export function bootstrapMean(values: readonly number[], resamples = BOOTSTRAP_RESAMPLES, seed = BOOTSTRAP_SEED): MeanEstimate {
  const n = values.length;
  const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const value = mean(values);
  if (n < 2) return { available: true, n, value, ci95: null };
  const random = mulberry32(seed);
  const means = new Float64Array(resamples);
  for (let b = 0; b < resamples; b++) {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += values[Math.floor(random() * n)] as number;
    means[b] = sum / n;
  }
  means.sort();
  return { available: true, n, value, ci95: [means[Math.floor(0.025 * resamples)] as number, means[Math.min(resamples - 1, Math.floor(0.975 * resamples))] as number] };
}

/**
 * Newcombe's (1998, method 10) interval for the difference of two independent proportions, from each one's Wilson
 * interval: a − b, lower a − b − √((a − lₐ)² + (u_b − b)²), upper a − b + √((uₐ − a)² + (b − l_b)²).
 */
export function newcombeDifference(a: RateEstimate, b: RateEstimate): DifferenceEstimate {
  const d = a.value - b.value;
  const [la, ua] = a.ci95;
  const [lb, ub] = b.ci95;
  return { available: true, value: d, ci95: [Math.max(-1, d - Math.sqrt((a.value - la) ** 2 + (ub - b.value) ** 2)), Math.min(1, d + Math.sqrt((ua - a.value) ** 2 + (b.value - lb) ** 2))] };
}
